"""The lexical view: plain BM25 of the request's words over each candidate lesson as
one document (its text and the texts of the L0 evidence it rests on).

Words are `[a-z0-9]+` runs, lowercased, unstemmed: a paste's package, flag or error
code counts as written. Term statistics (document frequency, mean length) are taken
over the request's candidates, so the score re-ranks what the other views found and
is the same whichever copy (resident or store) gave the rows. Measured on the
corpus's dev split (docs/BENCHMARKS.md, run V12): what the store's full-text views
miss here is the lesson and its evidence read together, with one length norm.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from typing import Mapping

from ..store import MemoryRow
from ..views import LESSON_DEPTH

WORD = re.compile(r"[a-z0-9]+")
K1, B = 1.5, 0.75
EVIDENCE_CHARS = 20_000     # of each piece of evidence (a whole CI log adds only noise)


def documents(store, rows: Mapping[str, MemoryRow]) -> dict[str, str]:
    """sha -> the lesson's text and its evidence's, in order: its L0 parents, and
    through lesson parents theirs, up to LESSON_DEPTH levels (`views.evidence_texts`,
    read one level at a time for every lesson at once)."""
    evidence: dict[str, list[str]] = {sha: [] for sha in rows}
    seen: dict[str, set[str]] = {sha: set() for sha in rows}
    frontier = {sha: list(row.parents) for sha, row in rows.items()}
    for _ in range(LESSON_DEPTH):
        wanted = sorted({p for parents in frontier.values() for p in parents})
        if not wanted:
            break
        found = store.memories(wanted)
        deeper: dict[str, list[str]] = {}
        for sha, parents in frontier.items():
            for parent in parents:
                row = found.get(parent)
                if row is None or parent in seen[sha]:
                    continue
                seen[sha].add(parent)
                if row.level == "L0":
                    evidence[sha].append(row.text[:EVIDENCE_CHARS])
                elif row.level in ("L1", "L2"):
                    deeper.setdefault(sha, []).extend(row.parents)
        frontier = deeper
    return {sha: "\n".join([row.text] + evidence[sha]) for sha, row in rows.items()}


def scores(query: str, docs: Mapping[str, str]) -> list[tuple[str, float]]:
    """(sha, Okapi BM25 of `query` over `docs`) for every document that has a query
    word, statistics over `docs`."""
    terms = set(WORD.findall(query.lower()))
    if not terms or not docs:
        return []
    counts, lengths = {}, {}
    for sha, text in docs.items():
        words = WORD.findall(text.lower())
        lengths[sha] = len(words)
        counts[sha] = Counter(w for w in words if w in terms)
    n = len(docs)
    mean = max(sum(lengths.values()) / n, 1.0)
    frequency = Counter(w for tf in counts.values() for w in tf)
    idf = {w: math.log(1 + (n - d + 0.5) / (d + 0.5)) for w, d in frequency.items()}
    out = []
    for sha in sorted(docs):
        tf = counts[sha]
        norm = K1 * (1 - B + B * lengths[sha] / mean)
        score = sum(idf[w] * f * (K1 + 1) / (f + norm) for w, f in tf.items())
        if score > 0:
            out.append((sha, score))
    return out
