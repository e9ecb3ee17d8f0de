"""Fusion: one score per candidate, from its features, with weights fitted on data.

`score = sigmoid(bias + weights · features)`, logistic models per request mode: `paste`
(the request carried failure output), `prose` (a failure told in words) and
`reference` (R chunks for tier 3). Per mode, a rank model orders the candidates and an
answer model, with its abstention threshold, says which are answers at all: a
candidate under it is a neighbour, not an answer, so an unknown failure falls through
to tier 3. Weights and thresholds ship as data (`weights.json`, written by
`bench/fit_fusion.py` from the corpus's dev split). Without an embedder, trigram Dice
with fixed floors decides instead (no model was fitted for that mode).
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources

from .candidates import Candidates
from .run import Run
from .similarity import trigram_similarity, trigrams

FEATURES = ("cos_text", "cos_symptom", "cos_evidence", "gap_text", "gap_symptom",
            "gap_evidence", "bm25", "bm25_lead", "sig_dice", "same_family", "same_tool",
            "same_project")
VECTOR_KINDS = ("symptom", "text", "evidence")
TRIGRAM_MIN = 0.20        # degraded: trigram Dice a hit must reach
TRIGRAM_STRONG = 0.50     # degraded: Dice that stands without a near signature
NEAR_SIGNATURE = 0.55     # degraded: trigram Dice of normalised messages (same family)


@dataclass(frozen=True)
class Model:
    features: tuple[str, ...]
    weights: tuple[float, ...]
    bias: float
    threshold: float

    def score(self, values: dict[str, float]) -> float:
        z = self.bias + sum(w * values.get(f, 0.0) for f, w in zip(self.features,
                                                                     self.weights))
        return 1.0 / (1.0 + math.exp(-max(-60.0, min(60.0, z))))


ANSWER_FEATURES = ("cos_text", "cos_symptom", "cos_evidence", "bm25_lead", "sig_dice",
                   "same_family", "same_tool")


def _model(m: dict) -> Model:
    return Model(tuple(m["features"]), tuple(m["weights"]), m["bias"], m["threshold"])


@lru_cache(maxsize=1)
def models() -> dict[str, tuple[Model, Model]]:
    """The shipped models by mode: (rank, answer). The rank model orders candidates
    (with features relative to the request's best); the answer model, on absolute
    features only, decides whether a candidate is an answer at all, since every
    request's best candidate looks alike to a relative feature."""
    data = json.loads(resources.files(__package__).joinpath("weights.json").read_text())
    return {mode: (_model(m["rank"]), _model(m["answer"]))
            for mode, m in data["modes"].items()}


def mode_of(run: Run, levels) -> str:
    if levels != ("L1", "L2"):
        return "reference"
    return "paste" if run.req.signature_source else "prose"


BM25_VIEWS = (("fulltext", "bm25", "bm25_lead"),)


def features(run: Run, found: Candidates, sha: str, tool: str | None,
             top: dict[str, tuple[float, float]], asked: dict[str, list[set[str]]]
             ) -> dict[str, float]:
    """The model's inputs for one candidate: each view's cosine and its gap to the
    request's best in that view; BM25 relative to the request's best, and its lead
    over the best other candidate (`s / (s + other)`: 1 when it alone matched, 0.5 at
    a tie; a paste's words found in one lesson's evidence and nowhere else say more
    than a cosine); signature agreement, tool and project. `top`: the request's best
    and second-best raw score per view; `asked`: its message trigrams by family."""
    sc, row = found.scores[sha], found.rows[sha]
    out = {f"cos_{kind}": sc.get(kind, 0.0) for kind in VECTOR_KINDS}
    out.update({f"gap_{kind}": sc.get(kind, 0.0) - top[kind][0] for kind in VECTOR_KINDS})
    for kind, name, lead in BM25_VIEWS:
        score, (best, second) = sc.get(kind, 0.0), top[kind]
        other = second if score >= best else best
        out[name] = score / best if best > 0 else 0.0
        out[lead] = score / (score + other) if score > 0 else 0.0
    linked = found.linked.get(sha, set())
    out["sig_dice"] = max((trigram_similarity(trigrams(message), grams)
                           for family, message in linked if family in asked
                           for grams in asked[family]), default=0.0)
    out["same_family"] = float(any(family in asked for family, _ in linked))
    tools = {row.tool} | {family.split(":", 1)[0] for family, _ in linked}
    out["same_tool"] = float(bool(tool) and tool in tools)
    out["same_project"] = float(row.project == run.req.project)
    return out


def feature_table(run: Run, found: Candidates, tool: str | None) -> dict[str, dict]:
    """sha -> the model's inputs, for every candidate."""
    kinds = VECTOR_KINDS + tuple(kind for kind, *_ in BM25_VIEWS)
    top = {kind: tuple((sorted((s.get(kind, 0.0) for s in found.scores.values()),
                               reverse=True) + [0.0, 0.0])[:2]) for kind in kinds}
    asked: dict[str, list[set[str]]] = {}
    for sig in run.signatures:   # once per request, not per candidate
        asked.setdefault(sig.family, []).append(trigrams(sig.message))
    return {sha: features(run, found, sha, tool, top, asked) for sha in found.scores}


def score_all(run: Run, found: Candidates, tool: str | None) -> dict[str, dict]:
    """sha -> {scores, score, matched_kind, row, rerank, relevant} for every candidate."""
    mode = mode_of(run, found.levels)
    rank, answer = models()[mode] if run.vector is not None else (None, None)
    table = feature_table(run, found, tool) if rank is not None else {}
    out = {}
    for sha, sc in found.scores.items():
        kind, best = matched(sc)
        if rank is None:
            fused, relevant = best, _relevant_degraded(run, mode, best, found.linked.get(sha))
        else:
            fused = rank.score(table[sha])
            relevant = answer.score(table[sha]) >= answer.threshold
        out[sha] = {"scores": sc, "score": best, "matched_kind": kind,
                    "row": found.rows[sha], "rerank": fused, "relevant": relevant}
    return out


def matched(scores: dict) -> tuple[str, float]:
    """The kind that matched best and its raw score (cosine, or trigram Dice)."""
    for group in (VECTOR_KINDS, ("trigram",)):
        present = [(scores[k], k) for k in group if k in scores]
        if present:
            best, kind = max(present)
            return kind, best
    return "fulltext", 0.0


def _relevant_degraded(run: Run, mode: str, best: float, linked) -> bool:
    """Without vectors: Dice ≥ TRIGRAM_MIN; for a paste, a near-identical signature
    (same family, message Dice ≥ NEAR_SIGNATURE) unless Dice ≥ TRIGRAM_STRONG."""
    if best < TRIGRAM_MIN:
        return False
    if mode != "paste" or best >= TRIGRAM_STRONG:
        return True
    return any(family == sig.family and trigram_similarity(
        trigrams(message), trigrams(sig.message)) >= NEAR_SIGNATURE
        for sig in run.signatures for family, message in linked or ())
