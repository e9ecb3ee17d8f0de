"""Doc2Query-- style filtering of generated symptom lines.

A generated line is dropped when it merely restates the memory (near-duplicate by
embedding or by word overlap) or when it matches nothing the memory says (below a
relevance floor against the memory and its evidence). Evidence lines are never
filtered: they are real symptoms.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

RESTATES = "restates the memory"
UNRELATED = "matches nothing the memory says"
DUPLICATE = "duplicates another line"

_WORD = re.compile(r"[a-z0-9]+")


@dataclass(frozen=True)
class FilterConfig:
    restate_cosine: float = 0.80   # line ~ memory: a paraphrase, not a symptom
    restate_overlap: float = 0.70  # share of the line's words found in the memory
    relevance_floor: float = 0.12  # below this against memory and evidence: unrelated


def _words(text: str) -> set[str]:
    return {w for w in _WORD.findall(text.lower()) if len(w) > 2}


def word_overlap(line: str, memory: str) -> float:
    words = _words(line)
    return len(words & _words(memory)) / len(words) if words else 0.0


def filter_lines(lines: list[str], memory_text: str, evidence: list[str], embedder,
                 config: FilterConfig = FilterConfig()) -> tuple[list[str], list[tuple[str, str]]]:
    """Split generated `lines` into (kept, dropped-with-reason), keeping input order."""
    if not lines:
        return [], []
    vectors = embedder.embed([memory_text, *evidence, *lines])
    memory_vec, evidence_vecs, line_vecs = vectors[0], vectors[1:1 + len(evidence)], vectors[1 + len(evidence):]
    seen = {e.strip().lower() for e in evidence}
    kept: list[str] = []
    dropped: list[tuple[str, str]] = []
    for line, vec in zip(lines, line_vecs):
        to_memory = float(np.dot(vec, memory_vec))
        to_evidence = float(np.max(evidence_vecs @ vec)) if len(evidence) else -1.0
        key = line.strip().lower()
        if key in seen:
            dropped.append((line, DUPLICATE))
        elif to_memory >= config.restate_cosine or word_overlap(line, memory_text) >= config.restate_overlap:
            dropped.append((line, RESTATES))
        elif max(to_memory, to_evidence) < config.relevance_floor:
            dropped.append((line, UNRELATED))
        else:
            kept.append(line)
            seen.add(key)
    return kept, dropped
