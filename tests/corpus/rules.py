"""The corpus rules: each takes the loaded rows and returns its problems (by id).

Thresholds (likeness is `likeness.likeness`, 0..1):
- QUOTE_WORDS 6: a lesson sharing 6 consecutive words with one of its own pastes quotes it.
- EDITED 0.98: a recurrence this alike to its evidence is the first paste edited, unless
  the row says `"recurrence_checked": true` (two independent reports, verified).
- HEADLINE 0.6: the two headlines of a look-alike pair are nearly the same at this
  `likeness.headline_likeness` or more (first line, first error line, a lead-in's next
  line, a traceback's exception line; quoted names set aside). On the collected pairs one
  message template with other names scores 0.73 or more, two different lines 0.6 or less.
- SAME_FAILURE 0.9: a look-alike side (`a`, `b`) from one of a case's threads is that
  case, and must say so (`"a_case": "<case id>"`, `b_case`); one whose paste is this
  alike to a case's paste is that case too, unless the row lists the case in
  `"a_distinct"` / `b_distinct` (both lessons read: one error text, two causes).
- DISTRACTOR_COPY 0.6: a written distractor whose evidence is this alike to a collected
  paste (case evidence/recurrence, look-alike side, reference query) copies a collected
  failure.
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict

from likeness import Paste, alike_pairs, headline_likeness, ratio

CASE_FIELDS = ("id", "tool", "evidence", "recurrence", "memory", "variant_query", "sources")
QUOTE_WORDS = 6
EDITED = 0.98
HEADLINE = 0.6
SAME_FAILURE = 0.9
DISTRACTOR_COPY = 0.6


def _words(text: str) -> list[str]:
    return re.findall(r"[a-z0-9]+", text.lower())


def quotes(lesson: str, error: str, n: int = QUOTE_WORDS) -> bool:
    """Whether `lesson` repeats `n` consecutive words of `error`."""
    grams = lambda ws: {tuple(ws[i:i + n]) for i in range(len(ws) - n + 1)}  # noqa: E731
    return bool(grams(_words(lesson)) & grams(_words(error)))


def _complete(rows: dict) -> list[dict]:
    return [c for c in rows["cases"] if all(c.get(f) for f in CASE_FIELDS)]


def fields(rows: dict) -> list[str]:
    """Duplicate ids, missing case fields, a recurrence that is its evidence or from its
    evidence's thread."""
    ids = Counter(r["id"] for items in rows.values() for r in items)
    found = [f"{i}: id used {n} times" for i, n in sorted(ids.items()) if n > 1]
    for case in rows["cases"]:
        missing = [f for f in CASE_FIELDS if not case.get(f)]
        if missing:
            found.append(f"{case.get('id')}: missing {', '.join(missing)}")
            continue
        if " ".join(case["evidence"].split()) == " ".join(case["recurrence"].split()):
            found.append(f"{case['id']}: the recurrence is the evidence")
        if len(case["sources"]) < 2 or case["sources"][0] == case["sources"][1]:
            found.append(f"{case['id']}: evidence and recurrence need two threads")
    return found


def near_quotes(rows: dict) -> list[str]:
    """A lesson (a case's, or a look-alike side's) that quotes one of its own pastes."""
    found = [f"{c['id']}: the lesson quotes its {k}" for c in _complete(rows)
             for k in ("evidence", "recurrence") if quotes(c["memory"], c[k])]
    return found + [f"{n['id']}: lesson {side} quotes its error" for n in rows["negatives"]
                    for side in ("a", "b") if quotes(n[f"{side}_memory"], n[side])]


def edited_recurrences(rows: dict) -> list[str]:
    """A recurrence that is its evidence with little edited (numbers, paths and hashes
    count as equal), unless verified as two independent reports."""
    return [f"{c['id']}: the recurrence is the evidence edited (likeness {v:.3f})"
            for c in _complete(rows) if not c.get("recurrence_checked")
            for v in [ratio(Paste(c["evidence"]), Paste(c["recurrence"]))] if v >= EDITED]


def headlines(rows: dict) -> list[str]:
    """A look-alike pair whose two headlines differ."""
    found = []
    for neg in rows["negatives"]:
        value = headline_likeness(neg["a"], neg["b"])
        if value < HEADLINE:
            found.append(f"{neg['id']}: the headlines of a and b differ (likeness {value:.2f})")
    return found


def _threads(sources: list, n: int) -> set[str]:
    return set((sources or [])[:n])


def side_cases(rows: dict) -> list[str]:
    """A look-alike side (`a`, `b`) that is a case (from one of its threads, or a paste
    alike at SAME_FAILURE and not listed in `<side>_distinct`) must name it in
    `<side>_case`; a `<side>_case` must name such a case."""
    cases = _complete(rows)
    pastes = [Paste(c[k], c["id"]) for c in cases for k in ("evidence", "recurrence")]
    found = []
    for side in ("a", "b"):
        same: dict[str, set[str]] = defaultdict(set)
        for neg in rows["negatives"]:
            same[neg["id"]] |= {c["id"] for c in cases if _threads(
                neg.get(f"{side}_sources"), 1) & _threads(c["sources"], 2)}
        distinct = {n["id"]: set(n.get(f"{side}_distinct") or ()) for n in rows["negatives"]}
        sides = [Paste(n[side], n["id"]) for n in rows["negatives"]]
        for one, paste, _ in alike_pairs(sides, pastes, SAME_FAILURE):
            if paste.key not in distinct[one.key]:
                same[one.key].add(paste.key)
        for neg in rows["negatives"]:
            named, expected = neg.get(f"{side}_case"), same[neg["id"]]
            if named and named not in expected:
                found.append(f"{neg['id']}: {side}_case {named} is not the same failure "
                             f"as {side}")
            elif expected and not named:
                found.append(f"{neg['id']}: {side} is case {', '.join(sorted(expected))}; "
                             f"record it as {side}_case")
    return found


def distractor_copies(rows: dict) -> list[str]:
    """A written distractor whose evidence copies a collected failure's paste (a case's,
    a look-alike side's, or a reference's query: nobody in the vault hit those)."""
    collected = [Paste(c[k], c["id"]) for c in rows["cases"]
                 for k in ("evidence", "recurrence") if c.get(k)]
    collected += [Paste(n[side], n["id"]) for n in rows["negatives"] for side in ("a", "b")]
    collected += [Paste(r["query"], r["id"]) for r in rows["reference"] if r.get("query")]
    written = [Paste(d.get("evidence", ""), d["id"]) for d in rows["distractors"]]
    best: dict[str, tuple[float, str]] = {}
    for d, c, value in alike_pairs(written, collected, DISTRACTOR_COPY):
        best[d.key] = max(best.get(d.key, (0.0, "")), (value, c.key))
    return [f"{d}: the evidence copies {c}'s failure (likeness {v:.2f})"
            for d, (v, c) in sorted(best.items())]


def duplicate_threads(rows: dict) -> list[str]:
    """A thread whose paste stands in two rows (cases, look-alike sides); a look-alike
    side that names its case (`a_case`, `b_case`) is that case, not a second row."""
    users: dict[str, set[str]] = defaultdict(set)
    for case in rows["cases"]:
        for thread in _threads(case.get("sources"), 2):
            users[thread].add(case["id"])
    for neg in rows["negatives"]:
        for side in ("a", "b"):
            row = neg.get(f"{side}_case") or neg["id"]
            for thread in _threads(neg.get(f"{side}_sources"), 1):
                users[thread].add(row)
    return [f"{thread}: the thread backs {', '.join(sorted(ids))}"
            for thread, ids in sorted(users.items()) if len(ids) > 1]


RULES = (fields, near_quotes, edited_recurrences, headlines, side_cases, distractor_copies,
         duplicate_threads)


def problems(rows: dict) -> list[str]:
    """What breaks the corpus rules, every rule in turn."""
    return [line for rule in RULES for line in rule(rows)]
