"""A lesson's retrieval views beside its text: what its evidence says.

The evidence view is the failure excerpts of the L0 evidence a lesson rests on (the lines
each signature was drawn from; the head of the text where no rule matched), embedded as
`kind='evidence'`. A second paste of a failure meets it where the lesson's own words
(which avoid the error's) do not. Derived from the log, so a rebuild gives it again.
"""

from __future__ import annotations

from typing import Callable, Sequence

from .signatures import extract

LESSON_DEPTH = 3           # an L2 rests on the evidence of the lessons it generalises
PER_EVIDENCE = 3           # signatures' excerpts taken from each piece of evidence
HEAD_CHARS = 600           # of a piece of evidence no rule matched
EVIDENCE_VIEW_CHARS = 2000


def evidence_view(evidence_texts: Sequence[str]) -> str:
    """The evidence view of a lesson whose parents hold these (redacted) texts."""
    parts: list[str] = []
    for text in evidence_texts:
        excerpts = [sig.excerpt for sig in extract(text, limit=PER_EVIDENCE)]
        for piece in excerpts or [" ".join(text.split())[:HEAD_CHARS]]:
            if piece and piece not in parts:
                parts.append(piece)
    return "\n".join(parts)[:EVIDENCE_VIEW_CHARS]


def evidence_texts(parents: Sequence[str],
                   node: Callable[[str], tuple[str, str, Sequence[str]] | None]) -> list[str]:
    """The texts of the L0 evidence a memory rests on, in order: its L0 parents, and
    through lesson parents (an L2 generalising L1s) theirs, up to LESSON_DEPTH levels.
    `node(sha)` gives (level, text, parents) or None."""
    texts, frontier, seen = [], list(parents), set()
    for _ in range(LESSON_DEPTH):
        deeper = []
        for sha in frontier:
            found = None if sha in seen else node(sha)
            seen.add(sha)
            if found is None:
                continue
            level, text, its_parents = found
            if level == "L0":
                texts.append(text)
            elif level in ("L1", "L2"):
                deeper += list(its_parents)
        frontier = deeper
    return texts
