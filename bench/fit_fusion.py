"""Fit the lookup's fusion models on the corpus's dev split; write lookup/weights.json.

A vault of the dev rows only (dev cases and look-alike `a` sides on their evidence, every
distractor, dev references as R chunks) is built with the real CLI; each dev query goes
through the lookup's own candidate and feature steps (`poimen.lookup.prepare`,
`candidates.gather`, `fusion.feature_table`), and a logistic model per mode is fitted
(numpy, L2, fixed iterations from zero: deterministic):
- `paste`: recurrences (`signature_source`); the case's lesson is the positive;
- `prose`: variants (`task`);
- `reference`: reference queries over R chunks; the case's chunk is the positive.
Queries with no right lesson add negatives only: a reference case (nobody here hit it)
and the `b` side of a look-alike (the `a` lesson in the vault is the other failure's).
Each mode's threshold maximises, on dev, the reciprocal rank of right answers kept minus
the reference cases that still get a lesson (a look-alike's neighbour at tier 2 is a
fair "similar"; at tier 1 it would not be, and tier 1 is the signature's, not the
threshold's). Held-out rows are never loaded.

    .venv/bin/python bench/fit_fusion.py [--data DIR] [--dry-run]
"""

from __future__ import annotations

import argparse
import json
import tempfile
from pathlib import Path

import numpy as np

import retrieval

WEIGHTS = retrieval.REPO / "server" / "poimen" / "lookup" / "weights.json"
L2 = 0.001     # on the class-weighted mean loss
STEPS = 100
NO_ANSWER_COST = 1.0


def fit(x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, float]:
    """Logistic regression by Newton's method (L2 on the weights, classes weighted
    equally): exact and deterministic, converged in a few dozen steps."""
    xb = np.hstack([x, np.ones((len(x), 1))])
    pos = max(float(y.sum()), 1.0)
    weight = np.where(y > 0, 0.5 / pos, 0.5 / max(len(y) - pos, 1.0))
    penalty = np.diag([L2] * x.shape[1] + [0.0])
    beta = np.zeros(xb.shape[1])
    for _ in range(STEPS):
        p = 1 / (1 + np.exp(-np.clip(xb @ beta, -60, 60)))
        grad = xb.T @ (weight * (p - y)) + penalty @ beta
        hess = xb.T @ (xb * (weight * p * (1 - p))[:, None]) + penalty
        step = np.linalg.solve(hess + 1e-9 * np.eye(len(beta)), grad)
        beta -= step
        if np.abs(step).max() < 1e-8:
            break
    return beta[:-1], float(beta[-1])


def threshold(queries: list[list[tuple[float, bool]]]) -> float:
    """The cut maximising kept reciprocal rank minus wrong answers to unanswerable
    queries; `queries`: each query's (score, right) per candidate."""
    cuts = sorted({round(s, 4) for q in queries for s, _ in q})
    best, best_gain = 0.5, -1e9
    for cut in [c for c in cuts if 0.02 <= c <= 0.98] or [0.5]:
        gain = 0.0
        for q in queries:
            ranked = sorted(q, key=lambda c: -c[0])
            answerable = any(right for _, right in q)
            if answerable:
                rank = next(i for i, (_, right) in enumerate(ranked, 1) if right)
                gain += (1 / rank) if ranked[rank - 1][0] >= cut else 0.0
            elif ranked and ranked[0][0] >= cut:
                gain -= NO_ANSWER_COST
        if gain > best_gain:
            best, best_gain = cut, gain
    return best


def collect(engine, built: dict, rows: dict) -> dict[str, list]:
    """mode -> [(feature rows, right flags)] per query, from the lookup's own steps."""
    from poimen.lookup import candidates, fusion, parse_request, prepare, query

    def features(request: dict, levels: tuple, right) -> tuple[list, list]:
        run, tool = prepare(engine, parse_request(dict(request, scope="all-projects"),
                                                  "bench", 1200))
        run.vector = query.vector(run)
        found = candidates.gather(run, levels)
        table = fusion.feature_table(run, found, tool)
        shas = sorted(table)
        return [table[s] for s in shas], [right(found.rows[s]) for s in shas]

    lessons = built["lessons"]
    out = {"paste": [], "prose": [], "reference": [], "lookalike": []}
    for case in rows["cases"]:
        target = lessons.get(case["id"])
        out["paste"].append(features({"signature_source": case["recurrence"]},
                                     ("L1", "L2"), lambda row: row.sha == target))
        out["prose"].append(features({"task": case["variant_query"]}, ("L1", "L2"),
                                     lambda row: row.sha == target))
    for neg in rows["negatives"]:   # the other failure's lesson is never the answer
        out["lookalike"].append(features({"signature_source": neg["b"]}, ("L1", "L2"),
                                         lambda row: False))
    for ref in rows["reference"]:
        name = built["refs"][ref["id"]]
        out["paste"].append(features({"signature_source": ref["query"]}, ("L1", "L2"),
                                     lambda row: False))
        out["reference"].append(features({"signature_source": ref["query"]}, ("R",),
                                         lambda row: Path(row.meta.get("path") or "").name
                                         == name))
    return out


def _fitted(queries: list, names: tuple, extra: list = ()) -> dict:
    """A logistic model over `names`, fitted on `queries` (+ `extra`, negatives-only
    queries), with the threshold that `threshold` picks on `queries`."""
    fitted = list(queries) + list(extra)
    x = np.array([[f[n] for n in names] for feats, _ in fitted for f in feats])
    y = np.array([float(r) for _, rights in fitted for r in rights])
    w, b = fit(x, y)
    scores = [[(float(1 / (1 + np.exp(-(np.array([f[n] for n in names]) @ w + b)))), right)
               for f, right in zip(feats, rights)] for feats, rights in queries]
    return {"features": list(names), "weights": [round(float(v), 4) for v in w],
            "bias": round(b, 4), "threshold": threshold(scores),
            "queries": len(queries), "candidates": int(len(y)), "positives": int(y.sum())}


def fit_modes(collected: dict) -> dict:
    """Per mode, the rank model (every feature) and the answer model (absolute
    features only), each with the threshold its scores pick."""
    from poimen.lookup.fusion import ANSWER_FEATURES, FEATURES

    lookalikes = collected.pop("lookalike", [])
    modes = {}
    for mode, queries in collected.items():
        extra = lookalikes if mode == "paste" else []
        modes[mode] = {"rank": _fitted(queries, FEATURES, extra),
                       "answer": _fitted(queries, ANSWER_FEATURES, extra)}
    return modes


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=None)
    parser.add_argument("--dry-run", action="store_true", help="print, do not write")
    args = parser.parse_args()
    from poimen.engine import Engine
    from poimen.lookup import fusion

    rows = retrieval.corpus.load(args.data)
    dev = {name: [r for r in items if name in ("distractors", "decisions")
                  or r["split"] == "dev"] for name, items in rows.items()}
    with tempfile.TemporaryDirectory(prefix="fit-fusion-") as tmp:
        vault = Path(tmp) / "vault"
        built = retrieval.build_vault(dev, vault, Path(tmp) / "docs")
        engine = Engine(vault, "bench")
        modes = fit_modes(collect(engine, built, dev))
    data = {"version": 1, "fitted_on": {
        "corpus": retrieval.corpus.data_name(args.data), "split": "dev",
        "rows": {k: len(v) for k, v in dev.items()}}, "modes": modes}
    text = json.dumps(data, indent=1)
    print(text)
    if not args.dry_run:
        WEIGHTS.write_text(text + "\n")
        fusion.models.cache_clear()


if __name__ == "__main__":
    main()
