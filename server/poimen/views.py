"""A lesson's retrieval views beside its text: what its evidence says.

The evidence view is the failure excerpts of the L0 evidence a lesson rests on (the lines
each signature was drawn from; the head of the text where no rule matched), embedded as
`kind='evidence'`. A second paste of a failure meets it where the lesson's own words
(which avoid the error's) do not. Derived from the log, so a rebuild gives it again.
"""

from __future__ import annotations

from typing import Sequence

from .signatures import extract

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
