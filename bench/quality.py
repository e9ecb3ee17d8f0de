"""Retrieval quality on a failure data set, per retrieval path, over one crowded vault.

The vault is built with the real CLI: every case and distractor as an L1 lesson with its
evidence as parent, the decisions (no evidence), one lesson per negative pair on its `a`
failure, and the reference texts as markdown documents (`mem ref add`, R chunks).
Queries go to four paths over the same vault: full text only (BM25, `search_fulltext`),
text vectors only, symptom vectors only, and the full three-tier `Engine.context`.

    .venv/bin/python bench/quality.py [--data DIR] [--limit N]
"""

from __future__ import annotations

import argparse
import json
import re
import tempfile
import time
from pathlib import Path

import corpus
from build import mem

LESSONS = ("L1", "L2")
DEPTH = 30


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")[:60] or "doc"


def build_vault(rows: dict, vault: Path, docs: Path) -> dict:
    """Import everything; returns {"lessons": id -> sha, "negatives": id -> sha, "refs": id -> file}."""
    lines = corpus.real_lessons(rows)
    lines += [{"id": d["id"], "text": d["memory"]} for d in rows["decisions"]]
    lines += [{"id": n["id"], "evidence": n["a"],
               "text": f"Lesson for this failure (case a of a look-alike pair): "
                       f"{n['why_different']}"} for n in rows["negatives"]]
    source = corpus.write_jsonl(lines, vault.parent / "quality-import.jsonl")
    started = time.perf_counter()
    imported = mem(vault, "import", str(source))
    shas = {m["id"]: m["sha"] for m in imported["memories"]}
    docs.mkdir(parents=True, exist_ok=True)
    refs = {}
    for ref in rows["reference"]:
        name = f"{_slug(ref['id'])}.md"
        (docs / name).write_text(f"# {ref['tool']} documentation\n\n## {ref['id']}\n\n"
                                 f"{ref['reference']}\n")
        refs[ref["id"]] = name
    if refs:
        mem(vault, "ref", "add", str(docs))
    return {"lessons": shas, "negatives": {n["id"]: shas.get(n["id"]) for n in rows["negatives"]},
            "refs": refs, "counts": imported["counts"],
            "build_s": round(time.perf_counter() - started, 1)}


def rank_of(target: str, ranked: list[str]) -> int | None:
    """1-based rank of `target` in `ranked`, or None."""
    return ranked.index(target) + 1 if target in ranked else None


def summarise(ranks: list[int | None]) -> dict:
    n = len(ranks)
    return {"n": n, "top1": round(sum(r == 1 for r in ranks) / n, 4) if n else None,
            "top1_count": sum(r == 1 for r in ranks),
            "mrr": round(sum(1 / r for r in ranks if r) / n, 4) if n else None}


class Paths:
    """The four retrieval paths over one engine, each answering a ranked sha list."""

    def __init__(self, engine):
        self.engine = engine

    def fulltext(self, query: str) -> list[str]:
        return [h.memory_sha for h in self.engine.store.search_fulltext(
            query, limit=DEPTH, levels=LESSONS)]

    def vector(self, query: str, kind: str) -> list[str]:
        vector = self.engine.embedder.embed_one(query)
        return [h.memory_sha for h in self.engine.store.search_vectors(
            vector, kind=kind, limit=DEPTH, levels=LESSONS)]

    def context(self, request: dict) -> dict:
        return self.engine.context(dict(request, scope="all-projects"))


def lesson_order(body: dict) -> list[str]:
    return [i["sha"] for i in body["lessons"]]


def evaluate(engine, rows: dict, built: dict) -> dict:
    """Every metric of the quality report, from one built vault."""
    paths = Paths(engine)
    shas = built["lessons"]
    per_path = {q: {p: [] for p in ("fulltext", "text", "symptom", "context")}
                for q in ("recurrence", "variant_query")}
    tier1, misses = [], []
    for case in rows["cases"]:
        target = shas.get(case["id"])
        for query in ("recurrence", "variant_query"):
            text = case[query]
            ranks = per_path[query]
            ranks["fulltext"].append(rank_of(target, paths.fulltext(text)))
            ranks["text"].append(rank_of(target, paths.vector(text, "text")))
            ranks["symptom"].append(rank_of(target, paths.vector(text, "symptom")))
            request = {"signature_source": text} if query == "recurrence" else {"task": text}
            body = paths.context(request)
            ranks["context"].append(rank_of(target, lesson_order(body)))
            if query == "recurrence":
                tier1.append(any(i["sha"] == target and i["tier"] == 1 for i in body["lessons"]))
            if ranks["context"][-1] != 1:
                misses.append({"case": case["id"], "query": query, "tier": body["tier"],
                               **{f"rank_{p}": r[-1] for p, r in ranks.items()}})
    false_tier1 = []
    for neg in rows["negatives"]:
        lesson = built["negatives"].get(neg["id"])
        body = paths.context({"signature_source": neg["b"]})
        shared = {s.sig_sha for s in engine.signatures(neg["a"])} & \
                 {s.sig_sha for s in engine.signatures(neg["b"])}
        hit = any(i["sha"] == lesson and i["tier"] == 1 for i in body["lessons"])
        if hit or shared:
            false_tier1.append({"negative": neg["id"], "tier1_hit": hit,
                                "shared_signatures": len(shared)})
    tier3 = []
    for ref in rows["reference"]:
        body = paths.context({"signature_source": ref["query"]})
        top = body["references"][0]["path"] if body["references"] else None
        tier3.append({"id": ref["id"], "correct": top is not None and
                      Path(top).name == built["refs"][ref["id"]], "tier": body["tier"],
                      "lessons_above": len(body["lessons"])})
    report = {q: {p: summarise(r) for p, r in paths_.items()} for q, paths_ in per_path.items()}
    return {"paths": report,
            "tier1_hit_rate_recurrence": round(sum(tier1) / len(tier1), 4) if tier1 else None,
            "false_tier1_hits": sum(f["tier1_hit"] for f in false_tier1),
            "negatives": len(rows["negatives"]), "negative_faults": false_tier1,
            "tier3_accuracy": round(sum(t["correct"] for t in tier3) / len(tier3), 4)
            if tier3 else None, "tier3": tier3, "context_misses": misses,
            "vault": {"counts": built["counts"], "build_s": built["build_s"],
                      "references": len(built["refs"])}}


def run(data: Path, limit: int | None = None, work: Path | None = None,
        rebuild: bool = False) -> dict:
    """Build the quality vault from `data` (the first `limit` rows of each file) and score
    it; with `rebuild`, also time `mem rebuild --from-log` on it afterwards."""
    from poimen.engine import Engine
    from write_path import rebuild_rate

    rows = corpus.load(data)
    if limit:
        rows = {k: v[:limit] for k, v in rows.items()}
    with tempfile.TemporaryDirectory(prefix="bench-quality-", dir=work) as tmp:
        vault = Path(tmp) / "vault"
        built = build_vault(rows, vault, Path(tmp) / "docs")
        engine = Engine(vault, "bench")
        started = time.perf_counter()
        result = evaluate(engine, rows, built)
        result["evaluate_s"] = round(time.perf_counter() - started, 1)
        if rebuild:
            result["rebuild"] = rebuild_rate(vault)
    result["data"] = corpus.shown(data)
    result["rows"] = {k: len(v) for k, v in rows.items()}
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=corpus.DEFAULT_DATA)
    parser.add_argument("--limit", type=int, default=None, help="first N rows of each file")
    args = parser.parse_args()
    print(json.dumps(run(args.data, args.limit), indent=2))


if __name__ == "__main__":
    main()
