"""Tier-2 and tier-3 candidates: every view of every memory the request comes near.

Views of a lesson: its text, its symptom projection and its evidence view, each as a
vector (`kind` in the vectors table), and its text with the evidence it rests on, one
document, by BM25 (`findable` in the memories table). Each view's top SEARCH_LIMIT are
the candidates; then every candidate gets the exact cosine of each of its stored views
(a view outside one search's top is weak, not absent). Scoring them is `fusion`'s
work. Without an embedder, candidates come from full text and trigram Dice only.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..store import LESSON_LEVELS
from .run import Run
from .similarity import trigram_similarity, trigrams

SEARCH_LIMIT = 30
SCORE_DIGITS = 4
LESSON_VIEWS = ("text", "symptom", "evidence")
REFERENCE_VIEWS = ("text",)


@dataclass
class Candidates:
    """Raw scores per memory: cosine per vector view, BM25 (`fulltext`, over its text
    and its evidence's), trigram Dice."""

    levels: tuple
    scores: dict[str, dict[str, float]] = field(default_factory=dict)
    rows: dict = field(default_factory=dict)
    linked: dict[str, set[tuple[str, str]]] = field(default_factory=dict)
    own_signatures: dict[str, set[str]] = field(default_factory=dict)

    def add(self, kind: str, ranked) -> None:
        """Raw scores are kept to SCORE_DIGITS: the resident copies and LanceDB compute
        a cosine alike only to the sixth decimal, and the fused score must not tell which
        answered (identical requests, identical bodies)."""
        for sha, score in ranked:
            kept = self.scores.setdefault(sha, {})
            score = round(float(score), SCORE_DIGITS)
            kept[kind] = max(score, kept.get(kind, score))


def fulltext(run: Run, levels: tuple) -> list[tuple[str, list]]:
    """The BM25 search over `levels`, as (kind, ranked hits); it needs no query
    vector, so it runs beside the embedding."""
    if not run.query:
        return []
    query = run.fulltext if levels == LESSON_LEVELS else _reference_query(run)
    return [("fulltext", [(h.memory_sha, h.score) for h in run.store.search_fulltext(
        query, limit=SEARCH_LIMIT, levels=levels, include_superseded=True)])]


def gather(run: Run, levels: tuple, bm25: list[tuple[str, list]] | None = None
           ) -> Candidates:
    """Candidates over `levels` (superseded included, so successors surface); `bm25`:
    `fulltext(run, levels)` when it was already run."""
    store, found = run.store, Candidates(levels)
    if not run.query:
        return found
    lessons = levels == LESSON_LEVELS
    views = LESSON_VIEWS if lessons else REFERENCE_VIEWS
    if run.vector is not None:
        for kind in views:
            found.add(kind, [(h.memory_sha, h.score) for h in store.search_vectors(
                run.vector, kind=kind, limit=SEARCH_LIMIT, levels=levels,
                include_superseded=True)])
    for kind, ranked in fulltext(run, levels) if bm25 is None else bm25:
        found.add(kind, ranked)
    if run.vector is None:
        found.add("trigram", _trigram_hits(run, levels))
    else:
        _complete_views(run, found, views)
    rows = store.memories(list(found.scores))
    found.rows = {sha: row for sha, row in rows.items() if not (
        lessons and run.req.scope == "project" and row.project != run.req.project)}
    found.scores = {sha: sc for sha, sc in found.scores.items() if sha in found.rows}
    if lessons and run.signatures:
        found.linked = linked_messages(store, found.rows, found.own_signatures)
    return found


def _reference_query(run: Run) -> str:
    """References are searched by the failure's normalised messages too: a doc names
    the error without the paste's paths and numbers."""
    messages = [sig.message for sig in run.signatures[:3]]
    return "\n".join(dict.fromkeys([run.fulltext] + messages))


def _complete_views(run: Run, found: Candidates, views) -> None:
    """Exact cosines of every candidate's stored views its searches did not reach."""
    for kind in views:
        missing = sorted(sha for sha, sc in found.scores.items() if kind not in sc)
        for sha, stored in sorted(run.store.vectors_of(missing, kind).items()):
            found.scores[sha][kind] = round(float(np.dot(run.vector, stored)), SCORE_DIGITS)


def _trigram_hits(run: Run, levels) -> list[tuple[str, float]]:
    """Degraded: trigram Dice of the query against memory + symptom text."""
    query = trigrams(run.query)
    symptoms = {}
    if levels == LESSON_LEVELS:
        symptoms = {r["memory_sha"]: r["text"] for r in run.store.dump("projections")}
    scored = []
    for row in run.store.all_memories(levels):
        text = row.text + "\n" + symptoms.get(row.sha, "")
        scored.append((row.sha, round(trigram_similarity(query, trigrams(text)), 6)))
    scored.sort(key=lambda x: (-x[1], x[0]))
    return scored[:SEARCH_LIMIT]


def linked_messages(store, rows: dict, own: dict[str, set[str]]
                    ) -> dict[str, set[tuple[str, str]]]:
    """(family, normalised message) of the signatures each memory is linked to; an L2
    inherits those of the lessons it generalises (up to three levels up). Fills `own`
    with each memory's own sig_shas (rows read anyway, reused for seen counts)."""
    sources = {sha: {sha} for sha in rows}
    pending = {sha: set(row.parents) for sha, row in rows.items() if row.level == "L2"}
    for _ in range(3):
        if not pending:
            break
        parents = store.memories(sorted({p for ps in pending.values() for p in ps}))
        for sha, ps in pending.items():
            sources[sha] |= ps
        pending = {sha: {g for p in ps if p in parents and parents[p].level == "L2"
                         for g in parents[p].parents} for sha, ps in pending.items()}
        pending = {sha: ps for sha, ps in pending.items() if ps}
    by_memory: dict[str, set[tuple[str, str]]] = {}
    own.update({sha: set() for sha in rows})
    for row in store.signatures_of(sorted({s for ss in sources.values() for s in ss})):
        by_memory.setdefault(row["memory_sha"], set()).add((row["family"], row["message"]))
        if row["memory_sha"] in own:
            own[row["memory_sha"]].add(row["sig_sha"])
    return {sha: set().union(*(by_memory.get(s, set()) for s in ss))
            for sha, ss in sources.items()}
