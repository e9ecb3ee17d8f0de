"""MRR of symptom, text and both search paths on the shared failure data, via the real Engine.

The 27 case lessons are remembered with their `evidence` ingested as L0 parents, the
distractor lessons likewise, the decisions without evidence (164 memories). Each case's
`variant_query` and `recurrence` is then searched with `Engine.search(kind=...)`;
reciprocal rank of the case's memory (0 when not in the top LIMIT) is averaged, over all
cases and over the two halves that bench_tier2.py splits them into (by a hash of the id).

    .venv/bin/python bench/bench_symptoms.py [--data DIR] [--catalogue DIR] [--ablate] [--json]

`--catalogue DIR` matches against the `*.jsonl` files in DIR instead of the shipped catalogue
(to compare two versions of it in the same run conditions).

`--ablate` first removes from the catalogue, for every case, the entry that best matches
its lesson: the numbers a failure the catalogue has no entry for would get.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

import corpus
from bench_tier2 import half
from poimen.engine import Engine, Proposal
from poimen.symptoms.catalogue import Catalogue, load_catalogue
from poimen.symptoms.embedded import CatalogueGenerator

LIMIT = 50
QUERIES = ("variant_query", "recurrence")
KINDS = ("symptom", "text", "both")


def rows(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.open(encoding="utf-8") if line.strip()]


def ablated(generator: CatalogueGenerator, cases: list[dict]) -> tuple[CatalogueGenerator, list[str]]:
    own = []
    for case in cases:
        scores, _ = generator.scores(case["memory"], [])
        own.append(generator.catalogue.entries[int(np.argmax(scores))].id)
    cat = generator.catalogue
    kept = tuple(e for e in cat.entries if e.id not in set(own))
    return CatalogueGenerator(generator.embedder, Catalogue(kept, cat.failure, cat.nonfailure,
                                                           cat.sha)), sorted(set(own))


def load(engine: Engine, cases, distractors, decisions) -> dict[str, str]:
    shas, proposals, ids = {}, [], []
    for row in cases + distractors:
        ingested = engine.ingest(row["evidence"], source="terminal", tool=row.get("tool"))
        parents = (ingested.evidence_sha,) if ingested.evidence_sha else ()
        proposals.append(Proposal("L1", row["memory"], parents, None, not parents))
        ids.append(row["id"])
    for row in decisions:
        proposals.append(Proposal("L1", row["memory"], (), None, True))
        ids.append(row["id"])
    for row_id, result in zip(ids, engine.remember_many(proposals)):
        if result.sha:
            shas[row_id] = result.sha
    return shas


def mrr(ranks: list[int | None]) -> float:
    return round(sum(1 / r for r in ranks if r) / len(ranks), 3) if ranks else 0.0


def evaluate(engine: Engine, cases, shas) -> dict:
    table = {}
    for query in QUERIES:
        for kind in KINDS:
            ranks = []
            for case in cases:
                order = [h["sha"] for h in engine.search(case[query], kind=kind, limit=LIMIT)]
                target = shas.get(case["id"])
                ranks.append(order.index(target) + 1 if target in order else None)
            halves = {h: [r for c, r in zip(cases, ranks) if half(c["id"]) == h] for h in "AB"}
            table[f"{query}/{kind}"] = {
                "mrr": mrr(ranks), "top1": sum(r == 1 for r in ranks), "n": len(ranks),
                "halves": {h: {"mrr": mrr(r), "n": len(r)} for h, r in halves.items()}}
    return table


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, default=corpus.DEFAULT_DATA,
                    help="data set folder (default: $POIMEN_DATA, else ../shared beside the repo)")
    ap.add_argument("--catalogue", type=Path, default=None)
    ap.add_argument("--ablate", action="store_true")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    cases, decisions = rows(args.data / "cases.jsonl"), rows(args.data / "decisions.jsonl")
    distractors = rows(args.data / "distractors.jsonl")
    with tempfile.TemporaryDirectory() as tmp:
        engine = Engine(Path(tmp) / "vault", project="bench")
        removed = []
        if args.catalogue:
            engine._generator = CatalogueGenerator(engine.embedder, load_catalogue(args.catalogue))
        if args.ablate:
            engine._generator, removed = ablated(engine.generator, cases)
        started = time.perf_counter()
        shas = load(engine, cases, distractors, decisions)
        projected = {sha for sha in shas.values() if (engine.symptoms(sha) or {}).get("lines")}
        report = {"generator": engine.generator.model_id, "memories": len(shas),
                  "with_symptoms": {"cases": sum(shas.get(c["id"]) in projected for c in cases),
                                    "decisions": sum(shas.get(d["id"]) in projected for d in decisions),
                                    "distractors": sum(shas.get(d["id"]) in projected
                                                       for d in distractors)},
                  "ablated_entries": removed, "mrr": evaluate(engine, cases, shas),
                  "seconds": round(time.perf_counter() - started, 1)}
    if args.json:
        json.dump(report, sys.stdout, indent=2)
        print()
    else:
        print(f"generator {report['generator']}; {report['memories']} memories; "
              f"with symptoms {report['with_symptoms']}"
              + (f"; ablated {len(removed)} entries" if removed else ""))
        print("| query | symptom | text | both |\n|---|---|---|---|")
        for query in QUERIES:
            cells = [f"{report['mrr'][f'{query}/{k}']['mrr']:.2f} "
                     f"({report['mrr'][f'{query}/{k}']['top1']}/{len(cases)})" for k in KINDS]
            print(f"| `{query}` | " + " | ".join(cells) + " |")
        print("\nsplit halves (MRR A / B):\n\n| query | symptom | text | both |\n|---|---|---|---|")
        for query in QUERIES:
            cells = ["{A[mrr]:.2f} / {B[mrr]:.2f}".format(**report["mrr"][f"{query}/{k}"]["halves"])
                     for k in KINDS]
            print(f"| `{query}` | " + " | ".join(cells) + " |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
