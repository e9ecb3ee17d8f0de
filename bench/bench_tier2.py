"""Tier-2 ranking: fusion rules for symptom, text and evidence cosines and BM25, measured
over one built quality vault (see bench/quality.py), without and through the full lookup.

The evidence path (cosine to each lesson's L0 parents) has no stored vectors today; this
bench embeds the parents itself as a prototype. Cases are split in two halves by a hash of
their id (tune on one, report on the other).

    .venv/bin/python bench/bench_tier2.py WORK_DIR

WORK_DIR/vault and WORK_DIR/built.json are built once with quality.build_vault (the real
`mem import`) and reused. The second table is the full lookup (`Engine.context`, variant
queries as `task`) under each gating/fusion setting of poimen.context for prose requests.
"""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path

import numpy as np

import corpus

DEPTH = 60


def half(case_id: str) -> str:
    return "A" if hashlib.sha256(case_id.encode()).digest()[0] % 2 == 0 else "B"


def query_text(engine, text: str, as_source: bool) -> str:
    from poimen import context
    from poimen.redact import redact
    from poimen.signatures import extract

    if not as_source:
        return text
    source = redact(text).text
    sigs = extract(source)
    req = context.Request(None, None, text, "bench", "all-projects", 1200, None)
    return context._query_text(req, source, None, sigs)


class Pool:
    """Every lesson's cosines and BM25 for one query."""

    def __init__(self, engine):
        self.engine, self.store = engine, engine.vault.store
        lessons = self.store.all_memories(("L1", "L2"))
        self.lessons = {r.sha: r for r in lessons}
        parents = sorted({p for r in lessons for p in r.parents})
        rows = self.store.memories(parents)
        self.l0_of = {r.sha: [p for p in r.parents if p in rows] for r in lessons}
        texts = [rows[p].text for p in parents if p in rows]
        vecs = engine.embedder.embed(texts) if texts else np.zeros((0, 384))
        self.l0_vec = {p: v for p, v in zip([p for p in parents if p in rows], vecs)}
        self.lesson_of = {}
        for sha, ps in self.l0_of.items():
            for p in ps:
                self.lesson_of.setdefault(p, []).append(sha)

    def scores(self, query: str) -> dict[str, dict[str, float]]:
        vec = self.engine.embedder.embed_one(query)
        out: dict[str, dict[str, float]] = {sha: {} for sha in self.lessons}
        for kind in ("symptom", "text"):
            for h in self.store.search_vectors(vec, kind=kind, limit=DEPTH,
                                               levels=("L1", "L2")):
                out[h.memory_sha][kind] = h.score
        for sha, ps in self.l0_of.items():
            if ps:
                out[sha]["evidence"] = max(float(np.dot(vec, self.l0_vec[p])) for p in ps)
        for h in self.store.search_fulltext(query, limit=DEPTH, levels=("L1", "L2")):
            out[h.memory_sha]["bm25_text"] = h.score
        for h in self.store.search_fulltext(query, limit=DEPTH, levels=("L0",)):
            for sha in self.lesson_of.get(h.memory_sha, ()):
                out[sha]["bm25_ev"] = max(h.score, out[sha].get("bm25_ev", 0.0))
        return out


def _rank(scores: dict[str, float]) -> list[str]:
    return [s for s, _ in sorted(scores.items(), key=lambda x: (-x[1], x[0]))]


def _rrf(lists: list[list[str]], k: int = 60) -> dict[str, float]:
    out: dict[str, float] = {}
    for ranked in lists:
        for i, sha in enumerate(ranked):
            out[sha] = out.get(sha, 0.0) + 1 / (k + i + 1)
    return out


def _z(S: dict, kinds, weights=None) -> dict[str, float]:
    """CombSUM of per-query z-normalised cosines (a path's missing score is its minimum)."""
    weights = weights or (1,) * len(kinds)
    out = {x: 0.0 for x in S}
    for kind, w in zip(kinds, weights):
        vals = {x: s[kind] for x, s in S.items() if kind in s}
        if len(vals) < 2:
            continue
        arr = np.array(list(vals.values()))
        mu, sd, lo = arr.mean(), arr.std() or 1.0, arr.min()
        for x in S:
            out[x] += w * (vals.get(x, lo) - mu) / sd
    return out


def rules():
    g = lambda s, k: s.get(k, 0.0)  # noqa: E731
    bm = lambda s: g(s, "bm25_text") + g(s, "bm25_ev")  # noqa: E731
    return {
        "text": lambda S: {x: g(s, "text") for x, s in S.items()},
        "symptom": lambda S: {x: g(s, "symptom") for x, s in S.items()},
        "evidence": lambda S: {x: g(s, "evidence") for x, s in S.items()},
        "bm25 text+ev": lambda S: {x: bm(s) for x, s in S.items()},
        "max(sym,text) [current]": lambda S: {x: max(g(s, "symptom"), g(s, "text"))
                                              for x, s in S.items()},
        "max(text,ev)": lambda S: {x: max(g(s, "text"), g(s, "evidence")) for x, s in S.items()},
        "max(sym,text,ev)": lambda S: {x: max(g(s, "symptom"), g(s, "text"), g(s, "evidence"))
                                       for x, s in S.items()},
        "mean(sym,text)": lambda S: {x: (g(s, "symptom") + g(s, "text")) / 2
                                     for x, s in S.items()},
        "mean(sym,text,ev)": lambda S: {x: (g(s, "symptom") + g(s, "text") + g(s, "evidence"))
                                        / 3 for x, s in S.items()},
        "mean(text,ev)": lambda S: {x: (g(s, "text") + g(s, "evidence")) / 2
                                    for x, s in S.items()},
        "z(sym,text)": lambda S: _z(S, ("symptom", "text")),
        "z(sym,text,ev)": lambda S: _z(S, ("symptom", "text", "evidence")),
        "z(text,ev)": lambda S: _z(S, ("text", "evidence")),
        "z(sym,text)+0.5z(ev)": lambda S: _z(S, ("symptom", "text", "evidence"), (1, 1, .5)),
        "0.4sym+0.6text": lambda S: {x: .4 * g(s, "symptom") + .6 * g(s, "text")
                                     for x, s in S.items()},
        "0.6sym+0.4text": lambda S: {x: .6 * g(s, "symptom") + .4 * g(s, "text")
                                     for x, s in S.items()},
        "mean(sym,text)+0.5ev": lambda S: {x: (g(s, "symptom") + g(s, "text")) / 2
                                           + .5 * g(s, "evidence") for x, s in S.items()},
        "max(mean(sym,text),ev)": lambda S: {x: max((g(s, "symptom") + g(s, "text")) / 2,
                                                    g(s, "evidence")) for x, s in S.items()},
        "rrf(sym,text)": lambda S: _rrf([_rank({x: g(s, k) for x, s in S.items()})
                                         for k in ("symptom", "text")]),
        "rrf(sym,text,ev)": lambda S: _rrf([_rank({x: g(s, k) for x, s in S.items()})
                                            for k in ("symptom", "text", "evidence")]),
        "rrf(text,ev)": lambda S: _rrf([_rank({x: g(s, k) for x, s in S.items()})
                                        for k in ("text", "evidence")]),
        "rrf(sym,text,ev,bm25)": lambda S: _rrf(
            [_rank({x: g(s, k) for x, s in S.items()}) for k in ("symptom", "text", "evidence")]
            + [_rank({x: bm(s) for x, s in S.items()})]),
        "rrf(max(sym,text,ev),bm25)": lambda S: _rrf(
            [_rank({x: max(g(s, "symptom"), g(s, "text"), g(s, "evidence"))
                    for x, s in S.items()}), _rank({x: bm(s) for x, s in S.items()})]),
    }


def evaluate(vault: Path, built: dict) -> dict:
    from poimen.engine import Engine

    rows = corpus.load(corpus.DEFAULT_DATA)
    engine = Engine(vault, "bench")
    pool = Pool(engine)
    table: dict = {}
    for case in rows["cases"]:
        target = built["lessons"][case["id"]]
        for query in ("recurrence", "variant_query"):
            scores = pool.scores(query_text(engine, case[query], query == "recurrence"))
            for name, rule in rules().items():
                ranked = _rank(rule(scores))
                rank = ranked.index(target) + 1
                table.setdefault((query, name), []).append((half(case["id"]), rank))
    out = {}
    for (query, name), ranks in table.items():
        row = {}
        for part in ("A", "B", "all"):
            rs = [r for h, r in ranks if part in ("all", h)]
            row[part] = {"top1": sum(r == 1 for r in rs), "n": len(rs),
                         "mrr": round(sum(1 / r for r in rs) / len(rs), 3)}
        out[f"{query} | {name}"] = row
    return out


def ablate(vault: Path, built: dict) -> None:
    """Variant queries through the full lookup: prose fusion (max or mean) x prose floor."""
    from poimen import context
    from poimen.engine import Engine

    rows = corpus.load(corpus.DEFAULT_DATA)
    engine = Engine(vault, "bench")
    init, floor = context.Hits.__init__, context.PROSE_MIN_SIMILARITY
    try:
        for mean in (False, True):
            for gate in (0.45, 0.40, 0.35, 0.0):
                context.PROSE_MIN_SIMILARITY = gate
                context.Hits.__init__ = lambda self, prose=False, _m=mean: init(
                    self, prose and _m)
                ranks: dict[str, list] = {"A": [], "B": []}
                for case in rows["cases"]:
                    target = built["lessons"][case["id"]]
                    body = engine.context({"task": case["variant_query"],
                                           "scope": "all-projects"})
                    order = [i["sha"] for i in body["lessons"]]
                    ranks[half(case["id"])].append(
                        order.index(target) + 1 if target in order else None)
                line = "  ".join(f"{part}: {_summary(rs)}" for part, rs in
                                 (("A", ranks["A"]), ("B", ranks["B"]),
                                  ("all", ranks["A"] + ranks["B"])))
                print(f"lookup | {'mean' if mean else 'max'} floor {gate:.2f}  {line}",
                      flush=True)
    finally:
        context.Hits.__init__, context.PROSE_MIN_SIMILARITY = init, floor


def _summary(ranks: list) -> str:
    top1 = sum(r == 1 for r in ranks)
    return f"{top1}/{len(ranks)} {sum(1 / r for r in ranks if r) / len(ranks):.3f}"


def main() -> None:
    import quality

    work = Path(sys.argv[1])
    vault, built_path = work / "vault", work / "built.json"
    if not built_path.is_file():
        built = quality.build_vault(corpus.load(corpus.DEFAULT_DATA), vault, work / "docs")
        built_path.write_text(json.dumps(built))
    built = json.loads(built_path.read_text())
    for key, row in evaluate(vault, built).items():
        print(f"{key:45s} " + "  ".join(f"{p}: {v['top1']}/{v['n']} {v['mrr']:.3f}"
                                         for p, v in row.items()), flush=True)
    ablate(vault, built)


if __name__ == "__main__":
    main()
