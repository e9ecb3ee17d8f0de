"""Markdown for what the engine answered: the hover card and the full answer document.

The card's first line names the tier, read from the response's `tier` field (never
from the order of the lessons): `Tier 1 · seen 3× · last 2026-07-02`,
`Tier 2 · similar (symptom 0.71)`, `Tier 3 · reference: nobody here has hit this`.
"""

from __future__ import annotations

from typing import Any, Mapping

CARD_TEXT_LIMIT = 700
NO_LESSON = "This exact failure was seen here before, but nobody recorded how it was fixed."
NO_ANSWER = "No match · new here: nobody here has hit this, and no reference explains it"


def headline(response: Mapping[str, Any]) -> str:
    tier = response.get("tier")
    lead = lead_item(response)
    if tier == 1:
        known = lead or next((s for s in response.get("signatures") or () if s.get("known")), {})
        seen, last = known.get("seen_count"), known.get("last_seen")
        parts = ["Tier 1", f"seen {seen}×" if seen else "seen before"]
        if last:
            parts.append(f"last {str(last)[:10]}")
        if known.get("match") in ("same error", "same message"):
            parts.append(known["match"])
        causes = len(tier1_lessons(response))
        if causes > 1:
            parts.append(f"{causes} causes recorded")
        return " · ".join(parts)
    if tier == 2:
        if lead and lead.get("score") is not None:
            kind = lead.get("matched_kind") or "text"
            return f"Tier 2 · similar ({kind} {float(lead['score']):.2f})"
        return "Tier 2 · similar"
    if tier == 3:
        return "Tier 3 · reference: nobody here has hit this"
    return NO_ANSWER


def tier1_lessons(response: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    return [i for i in response.get("lessons") or () if i.get("tier") == 1]


def lead_item(response: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """The first item of the response's own tier: a lesson, or for tier 3 a reference."""
    tier = response.get("tier")
    pool = response.get("references") if tier == 3 else response.get("lessons")
    for item in pool or ():
        if item.get("tier", tier) == tier:
            return item
    return None


def card(response: Mapping[str, Any], provenance: Mapping[str, Mapping] | None = None,
         link: str | None = None) -> str:
    """The hover card: headline, the leading lesson, its level and provenance, a link."""
    lines = [headline(response), ""]
    lead = lead_item(response)
    causes = tier1_lessons(response)
    if len(causes) > 1:   # one failure, several recorded causes: show each, not one
        lines += ["This failure has more than one recorded cause; check which applies:", ""]
        lines += [f"{n}. {_trim(' '.join(str(i.get('text', '')).split()), 300)}"
                  for n, i in enumerate(causes, 1)]
        lead = None
        lines += [""]
    elif lead is not None:
        lines += [_trim(str(lead.get("text", "")).strip()), "", _about(lead)]
        lines += [f"- {_evidence(sha, (provenance or {}).get(sha))}"
                  for sha in lead.get("parents") or ()]
    elif response.get("tier") == 1 and not causes:
        lines += [NO_LESSON]
    more = _more(response, lead)
    if more:
        lines += ["", more]
    if response.get("degraded"):
        lines += ["", f"_degraded: {'; '.join(map(_note, response['degraded']))}_"]
    if link:
        lines += ["", f"[Full answer]({link})"]
    return "\n".join(lines).rstrip() + "\n"


def document(response: Mapping[str, Any], failure: str,
             provenance: Mapping[str, Mapping] | None = None) -> str:
    """The full answer: every lesson, skill and reference, with tiers, scores and parents."""
    provenance = provenance or {}
    out = [f"# {headline(response)}", "", "## The failure", "", "```text",
           failure.strip(), "```", ""]
    lessons = response.get("lessons") or []
    if lessons:
        out += ["## Lessons", ""]
    for item in lessons:
        out += [f"### Tier {item.get('tier')} · {_about(item)}", "",
                str(item.get("text", "")).strip(), ""]
        out += [f"- {_evidence(sha, provenance.get(sha))}" for sha in item.get("parents") or ()]
        out += [""]
    for title, key in (("Skills", "skills"), ("References", "references")):
        items = response.get(key) or []
        if items:
            out += [f"## {title}", ""]
        for item in items:
            name = item.get("name") or item.get("heading") or item.get("source") or ""
            out += [f"### {name or _short(item.get('sha'))} · tier {item.get('tier', 3)}", "",
                    str(item.get("text", "")).strip(), ""]
    budget = response.get("budget") or {}
    if budget:
        out += [f"_budget: {budget.get('used')} of {budget.get('limit')} tokens"
                + (f", dropped {len(budget['dropped'])}" if budget.get("dropped") else "")
                + "_", ""]
    for note in response.get("degraded") or ():
        out += [f"_degraded: {_note(note)}_", ""]
    return "\n".join(out).rstrip() + "\n"


def message(response: Mapping[str, Any]) -> str:
    """One plain line or two for clients that can only show a message."""
    lead = lead_item(response)
    text = " ".join(str(lead.get("text", "")).split()) if lead else ""
    return f"{headline(response)}: {_trim(text, 300)}" if text else headline(response)


def _about(item: Mapping[str, Any]) -> str:
    parts = [str(item.get("level") or "?"), f"memory `{_short(item.get('sha'))}`"]
    if item.get("score") is not None:
        parts.append(f"score {float(item['score']):.2f}")
    if item.get("matched_kind"):
        parts.append(f"matched on {item['matched_kind']}")
    if item.get("successor_of"):
        parts.append(f"replaces `{_short(item['successor_of'])}`")
    return " · ".join(parts)


def _evidence(sha: str, node: Mapping[str, Any] | None) -> str:
    if not node:
        return f"evidence `{_short(sha)}`"
    parts = [f"{node.get('level') or 'evidence'} `{_short(sha)}`"]
    for key in ("source", "tool", "project"):
        if node.get(key):
            parts.append(str(node[key]))
    if node.get("created"):
        parts.append(str(node["created"])[:10])
    return " · ".join(parts)


def _more(response: Mapping[str, Any], lead: Mapping[str, Any] | None) -> str:
    shown = tier1_lessons(response) if lead is None else [lead]
    others = [i for i in response.get("lessons") or () if i not in shown]
    refs = [i for i in response.get("references") or () if i is not lead]
    parts = []
    if others:
        parts.append(f"{len(others)} more lesson{'s' * (len(others) > 1)}")
    if response.get("skills"):
        parts.append(f"{len(response['skills'])} skill{'s' * (len(response['skills']) > 1)}")
    if refs:
        parts.append(f"{len(refs)} reference{'s' * (len(refs) > 1)}")
    return f"Also: {', '.join(parts)}" if parts else ""


def _note(note: Any) -> str:
    if isinstance(note, Mapping):
        return " ".join(str(v) for v in note.values())
    return str(note)


def _short(sha: Any) -> str:
    return str(sha or "?")[:10]


def _trim(text: str, limit: int = CARD_TEXT_LIMIT) -> str:
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"
