"""The memory gate: what may become an L1/L2 memory, and what only reinforces one."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Sequence

import numpy as np

from .store import MemoryRow, Store

MAX_TEXT = 20_000
MIN_LETTERS, MIN_WORD = 4, 3
_WORD = re.compile(rf"[^\W\d_]{{{MIN_WORD},}}")


def has_words(text: str) -> bool:
    """Real words: MIN_LETTERS letters in all, MIN_WORD of them in a row (so `-`, a
    zero-width space or `\\n\\t` written out are not lessons)."""
    return (sum(c.isalpha() for c in text) >= MIN_LETTERS
            and _WORD.search(text) is not None)


@dataclass(frozen=True)
class Verdict:
    verdict: str              # "accepted" | "reinforced" | "rejected"
    reason: str
    existing: str | None = None   # the memory a reinforcement strengthens


def judge(store: Store, level: str, text: str, parents: Sequence[str],
          supersedes: str | None, without_evidence: bool, vector: np.ndarray | None,
          near_duplicate: float, known: dict[str, MemoryRow] | None = None) -> Verdict:
    """Decide one proposal against the live store (`known`: its rows of the proposal's
    parents and superseded memory, when the caller read them for a whole batch)."""
    if level not in ("L1", "L2"):
        return Verdict("rejected", f"level must be L1 or L2, not {level!r}")
    if not has_words(text):
        return Verdict("rejected", f"a lesson needs words: at least {MIN_LETTERS} letters, "
                                   f"with a run of {MIN_WORD} (not only punctuation, "
                                   "whitespace or invisible characters)")
    if len(text) > MAX_TEXT:
        return Verdict("rejected", f"text is longer than {MAX_TEXT} characters")
    if known is None:
        known = store.memories(list(parents) + ([supersedes] if supersedes else []))
    for parent in parents:
        if parent not in known:
            return Verdict("rejected", f"unknown parent {parent}")
    if level == "L1" and any(known[p].level != "L0" for p in parents):
        return Verdict("rejected", "an L1's parents must be L0 evidence")
    if level == "L2" and any(known[p].level not in ("L1", "L2") for p in parents):
        return Verdict("rejected", "an L2's parents must be L1 or L2 memories")
    if not parents and not without_evidence:
        cite = "evidence (--parent)" if level == "L1" else "the L1 lessons it generalises"
        return Verdict("rejected", f"an {level} must cite {cite} or be marked "
                                   "--without-evidence")
    if supersedes:
        old = known.get(supersedes)
        if old is None:
            return Verdict("rejected", f"unknown memory to supersede {supersedes}")
        if old.level not in ("L1", "L2"):
            return Verdict("rejected", f"only an L1 or L2 memory can be superseded, "
                                       f"{supersedes} is {old.level}")
        if old.superseded_by:
            return Verdict("rejected", f"{supersedes} is already superseded by "
                                       f"{old.superseded_by}")
        return Verdict("accepted", f"supersedes {supersedes}")
    if vector is not None:
        hits = store.search_vectors(vector, kind="text", limit=1, levels=[level])
        if hits and hits[0].score >= near_duplicate:
            return Verdict("reinforced", f"near-duplicate of {hits[0].memory_sha} "
                                         f"(similarity {hits[0].score:.3f})",
                           hits[0].memory_sha)
    return Verdict("accepted", "new memory")
