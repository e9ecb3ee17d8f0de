"""The project's failure corpus: every part's rows, checked, with their fixed split.

    python tests/corpus/failure_corpus.py            # counts per split, tool and part; problems

Rows come back in the shared development set's shape (`cases`, `reference`, `negatives`,
`decisions`, `distractors`), each with a `split` field (`dev` | `heldout`) fixed by a
hash of its id, so tuning code can take `dev` rows only. Nothing here prints a row.
"""

from __future__ import annotations

import hashlib
import json
import re
import sys
from collections import Counter
from pathlib import Path

HERE = Path(__file__).resolve().parent
PARTS = HERE / "parts"
SPLITS = ("dev", "heldout")
SHARED_FILES = ("cases", "reference", "negatives", "decisions", "distractors")
CASE_FIELDS = ("id", "tool", "evidence", "recurrence", "memory", "variant_query", "sources")
QUOTE_WORDS = 8   # a lesson sharing this many consecutive words with its error quotes it


def split_of(row_id: str) -> str:
    """`dev` when the first byte of sha256(id) is even, else `heldout` (fixed, by id)."""
    return SPLITS[hashlib.sha256(row_id.encode("utf-8")).digest()[0] % 2]


def _rows(path: Path) -> list[dict]:
    if not path.is_file():
        return []
    out = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if line.strip():
            try:
                out.append(json.loads(line))
            except ValueError as exc:
                raise SystemExit(f"corpus: {path.relative_to(HERE)}:{number}: {exc}") from None
    return out


def _words(text: str) -> list[str]:
    return re.findall(r"[a-z0-9]+", text.lower())


def quotes(lesson: str, error: str, n: int = QUOTE_WORDS) -> bool:
    """Whether `lesson` repeats `n` consecutive words of `error`."""
    grams = lambda ws: {tuple(ws[i:i + n]) for i in range(len(ws) - n + 1)}  # noqa: E731
    return bool(grams(_words(lesson)) & grams(_words(error)))


def load(root: Path = HERE) -> dict[str, list[dict]]:
    """Every part's rows in the shared set's shape; each row gains `split` and `part`."""
    out: dict[str, list[dict]] = {name: [] for name in SHARED_FILES}
    for part in sorted(p for p in (Path(root) / "parts").iterdir() if p.is_dir()):
        for row in _rows(part / "cases.jsonl"):
            out["cases"].append(dict(row, part=part.name))
        for row in _rows(part / "lookalikes.jsonl"):
            out["negatives"].append({
                "id": row["id"], "tool": row.get("tool", ""), "part": part.name,
                "a": row["a"]["evidence"], "b": row["b"]["evidence"],
                "a_memory": row["a"]["memory"], "b_memory": row["b"]["memory"],
                "why_different": row["why_different"],
                "sources": row["a"].get("sources", []) + row["b"].get("sources", [])})
        for row in _rows(part / "references.jsonl"):
            out["reference"].append(dict(row, part=part.name))
        for row in _rows(part / "distractors.jsonl"):
            out["distractors"].append(dict(row, part=part.name))
    out["cases"] = _one_case_per_thread(out["cases"])
    for rows in out.values():
        for row in rows:
            row["split"] = split_of(row["id"])
    return out


def _one_case_per_thread(cases: list[dict]) -> list[dict]:
    """Two collectors may reach the same thread: its failure is kept once (the case whose
    id sorts first), so one failure never stands as two cases with two right answers."""
    taken: set[str] = set()
    kept = []
    for case in sorted(cases, key=lambda c: c["id"]):
        threads = set(case.get("sources", [])[:2])
        if not threads & taken:
            kept.append(case)
        taken |= threads
    order = {id(c): n for n, c in enumerate(cases)}
    return sorted(kept, key=lambda c: order[id(c)])


def of_split(rows: dict[str, list[dict]], split: str) -> dict[str, list[dict]]:
    """The rows of one split; distractors and decisions are shared by both (they are
    the crowd every query is measured in, never a query themselves)."""
    return {name: [r for r in items if name in ("distractors", "decisions")
                   or r["split"] == split] for name, items in rows.items()}


def problems(rows: dict[str, list[dict]]) -> list[str]:
    """What breaks the corpus rules (by id): missing fields, duplicate ids, a lesson that
    quotes its error, a recurrence that is its evidence, a recurrence from the same thread."""
    found = []
    ids = Counter(r["id"] for items in rows.values() for r in items)
    found += [f"{i}: id used {n} times" for i, n in sorted(ids.items()) if n > 1]
    for case in rows["cases"]:
        missing = [f for f in CASE_FIELDS if not case.get(f)]
        if missing:
            found.append(f"{case.get('id')}: missing {', '.join(missing)}")
            continue
        if quotes(case["memory"], case["evidence"] + "\n" + case["recurrence"]):
            found.append(f"{case['id']}: the lesson quotes its error")
        if " ".join(case["evidence"].split()) == " ".join(case["recurrence"].split()):
            found.append(f"{case['id']}: the recurrence is the evidence")
        if len(case["sources"]) < 2 or case["sources"][0] == case["sources"][1]:
            found.append(f"{case['id']}: evidence and recurrence need two threads")
    for neg in rows["negatives"]:
        for side in ("a", "b"):
            if quotes(neg[f"{side}_memory"], neg[side]):
                found.append(f"{neg['id']}: lesson {side} quotes its error")
    return found


def main() -> int:
    rows = load()
    for name, items in rows.items():
        by_split = Counter(r["split"] for r in items)
        print(f"{name:12s} {len(items):5d}  dev {by_split['dev']:4d}  heldout "
              f"{by_split['heldout']:4d}  parts {dict(Counter(r['part'] for r in items))}")
    tools = Counter(r["tool"] for r in rows["cases"])
    print(f"case tools: {len(tools)}")
    issues = problems(rows)
    for line in issues:
        print("problem:", line)
    return 1 if issues else 0


if __name__ == "__main__":
    sys.exit(main())
