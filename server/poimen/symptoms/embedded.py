"""The embedded default generator: a curated symptom catalogue matched by embedding.

The memory (and the messages of its evidence) are compared with each catalogue
entry's `explains` (and `errors`); entries above the abstention threshold, and close
to the best one, contribute their `behaviour` and `errors` lines. A memory closer to
the non-failure prototypes (decisions, conventions) than to the failure prototypes
gets no generated lines. No network, no model download: the embedder is the project's own.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import asdict, dataclass

import numpy as np

from .catalogue import Catalogue, Entry, load_catalogue
from .filter import FilterConfig, filter_lines
from .model import Projection, SymptomLine
from .vector_cache import catalogue_vectors

_SENTENCE = re.compile(r"(?<=[.;!?])\s+")


@dataclass(frozen=True)
class MatchConfig:
    threshold: float = 0.40        # an entry's score must reach this (abstention)
    evidence_threshold: float = 0.70  # evidence message ~ catalogue error: same failure
    min_failureness: float = 0.0   # failure-prototype minus decision-prototype similarity
    confident: float = 0.60        # a match this strong needs no failureness check
    margin: float = 0.06           # entries within this of the best are kept too
    max_entries: int = 3
    errors_per_entry: int = 2      # raw error lines taken from each entry, after its behaviour
    max_generated: int = 12
    max_evidence: int = 6
    max_line_chars: int = 300


class CatalogueGenerator:
    """`Generator` backed by the shipped catalogue and the project's embedder."""

    def __init__(self, embedder, catalogue: Catalogue | None = None,
                 match: MatchConfig = MatchConfig(), filters: FilterConfig = FilterConfig()):
        self.embedder = embedder
        self.catalogue = catalogue or load_catalogue()
        self.match, self.filters = match, filters
        self.model_id = f"catalogue@{self.catalogue.sha[:16]}+{embedder.model_id}"
        params = json.dumps({"match": asdict(match), "filter": asdict(filters)}, sort_keys=True)
        self.prompt_sha = hashlib.sha256(params.encode()).hexdigest()
        self._index = None

    def _vectors(self):
        """Embeddings of every explanation, error and abstain prototype (computed once,
        from the on-disk cache when it has them); candidate lines are pinned too."""
        if self._index is None:
            entries = self.catalogue.entries
            explain_owner = [i for i, e in enumerate(entries) for _ in e.explains]
            error_owner = [i for i, e in enumerate(entries) for _ in e.errors]
            groups = ([t for e in entries for t in e.explains], [t for e in entries for t in e.errors],
                      list(self.catalogue.failure), list(self.catalogue.nonfailure))
            lines = [self._line(t) for e in entries for t in e.behaviour + e.errors]
            texts = list(dict.fromkeys([t for g in groups for t in g] + lines))
            vectors = catalogue_vectors(texts, self.embedder)
            if hasattr(self.embedder, "pin"):
                self.embedder.pin(texts, vectors)
            row = {t: i for i, t in enumerate(texts)}
            explains, errors, failure, nonfailure = (
                vectors[[row[t] for t in g]].reshape(len(g), vectors.shape[1]) for g in groups)
            self._index = (np.array(explain_owner), explains, np.array(error_owner), errors,
                           failure, nonfailure)
        return self._index

    def _line(self, text: str) -> str:
        """A catalogue line as it becomes a candidate symptom line."""
        return " ".join(text[:self.match.max_line_chars].split())

    def scores(self, memory_text: str, evidence_messages: list[str]) -> tuple[np.ndarray, float]:
        """Per-entry match score, and how much more the memory reads as a failure
        than as a decision (best failure-prototype minus best non-failure similarity)."""
        explain_owner, explains, error_owner, errors, failure, nonfailure = self._vectors()
        memory_vecs = self.embedder.embed(_chunks(memory_text))
        whole = memory_vecs[0]
        per_explain = np.max(memory_vecs @ explains.T, axis=0) * 0.5 + (explains @ whole) * 0.5
        scores = np.full(len(self.catalogue.entries), -1.0, dtype=np.float64)
        np.maximum.at(scores, explain_owner, per_explain)
        if evidence_messages and len(errors):
            ev = self.embedder.embed(evidence_messages)
            per_error = np.max(ev @ errors.T, axis=0)
            hits = np.where(per_error >= self.match.evidence_threshold, per_error, -1.0)
            np.maximum.at(scores, error_owner, hits)
        failureness = _best(failure, whole) - _best(nonfailure, whole)
        return scores, failureness

    def select(self, memory_text: str, evidence_messages: list[str]) -> list[tuple[Entry, float]]:
        scores, failureness = self.scores(memory_text, evidence_messages)
        best = float(scores.max()) if len(scores) else -1.0
        reads_as_decision = failureness < self.match.min_failureness and best < self.match.confident
        if best < self.match.threshold or reads_as_decision:
            return []
        # stable order: score descending, then catalogue order
        order = sorted(range(len(scores)), key=lambda i: (-round(float(scores[i]), 6), i))
        floor = max(self.match.threshold, best - self.match.margin)
        return [(self.catalogue.entries[i], float(scores[i])) for i in order[:self.match.max_entries]
                if scores[i] >= floor]

    def warm(self, items: list[tuple[str, list[str]]]) -> None:
        """Embed, in one batch, what projecting these (memory, evidence) pairs will ask for
        (the embedder memoises); the catalogue's own lines are pinned already."""
        self._vectors()
        self.embedder.embed([t for memory, messages in items
                             for t in _chunks(memory.strip()) + self._evidence(messages)])

    def _evidence(self, messages: list[str]) -> list[str]:
        return _unique(m[:self.match.max_line_chars] for m in messages)[:self.match.max_evidence]

    def project(self, memory_text: str, evidence_messages: list[str]) -> Projection:
        evidence = self._evidence(evidence_messages)
        memory_text = memory_text.strip()
        candidates = _unique(line[:self.match.max_line_chars]
                             for entry, _ in self.select(memory_text, evidence)
                             for line in entry.behaviour + entry.errors[:self.match.errors_per_entry])
        kept, dropped = filter_lines(candidates, memory_text, evidence, self.embedder, self.filters)
        lines = [SymptomLine(m, "evidence") for m in evidence]
        lines += [SymptomLine(t, "generated") for t in kept[:self.match.max_generated]]
        return Projection(tuple(lines), tuple(dropped), self.model_id, self.prompt_sha)


def _chunks(memory_text: str) -> list[str]:
    """The memory and its longer sentences, as matched against the catalogue."""
    return [memory_text] + [s for s in _SENTENCE.split(memory_text) if len(s) > 40]


def _best(prototypes: np.ndarray, vector: np.ndarray) -> float:
    return float(np.max(prototypes @ vector)) if len(prototypes) else 0.0


def _unique(items) -> list[str]:
    out, seen = [], set()
    for item in items:
        item = " ".join(item.split())
        if item and item not in seen:
            seen.add(item)
            out.append(item)
    return out
