"""Retrieval quality on the project's corpus: poimen beside naive baselines, per split.

One vault holds every lesson of the corpus on its evidence (cases, the `a` side of each
look-alike pair, the distractors) and the references as R chunks, built with the real
`mem import` / `mem ref add`. Queries from each split are scored apart, and the naive
baselines answer the same queries over the same lessons in the same run:
- `bm25`: plain BM25 (Okapi, k1 1.5, b 0.75) over each lesson's text plus its evidence;
- `dense`: the best of each lesson's text and evidence cosines (the same embedder).

    .venv/bin/python bench/retrieval.py [--data DIR] [--splits dev,heldout,heldout-w2] [--out FILE]

Figures: recurrence (a second, independent paste) top-1 and MRR, the share answered at
tier 1, variant (the failure told in words) MRR, symptom vs text path on variants,
look-alikes answered at tier 1 with the other failure's lesson (beside the tier-1 share,
always together), and the right reference first. Prints figures, never rows.
"""

from __future__ import annotations

import argparse
import json
import math
import re
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

import corpus  # noqa: E402
from build import mem  # noqa: E402

REPO = corpus.REPO
LESSONS = ("L1", "L2")
DEPTH = 30


def _paste(text: str) -> str:
    return " ".join(text.split())


def case_of_lookalike(rows: dict) -> dict[str, str]:
    """Look-alike id -> the case its `a` side is: the one it names (`a_case`), or (data
    without that field) the case one of whose pastes is its `a` paste; only cases in `rows`."""
    cases = {c["id"] for c in rows["cases"]}
    pastes = {_paste(c[k]): c["id"] for c in rows["cases"] for k in ("evidence", "recurrence")}
    out = {}
    for neg in rows["negatives"]:
        case = neg.get("a_case") or pastes.get(_paste(neg["a"]))
        if case in cases:
            out[neg["id"]] = case
    return out


def lesson_lines(rows: dict) -> list[dict]:
    """`mem import` lines: every lesson on its evidence. A look-alike whose `a` is a case
    gets no second lesson: the case's lesson is its `a` lesson."""
    lines = [{"id": r["id"], "text": r["memory"], "evidence": r["evidence"],
              "tool": r.get("tool", "")} for r in rows["cases"] + rows["distractors"]]
    cases = case_of_lookalike(rows)
    for neg in rows["negatives"]:
        if neg["id"] in cases:
            continue
        memory = neg.get("a_memory") or f"Lesson of this failure: {neg['why_different']}"
        lines.append({"id": neg["id"], "text": memory, "evidence": neg["a"],
                      "tool": neg.get("tool", "")})
    lines += [{"id": d["id"], "text": d["memory"]} for d in rows["decisions"]]
    return lines


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")[:60] or "doc"


def build_vault(rows: dict, vault: Path, docs: Path) -> dict:
    """Import every lesson and reference; {"lessons": id -> sha, "refs": id -> file}."""
    source = vault.parent / "retrieval-import.jsonl"
    source.write_text("".join(json.dumps(line) + "\n" for line in lesson_lines(rows)))
    started = time.perf_counter()
    imported = mem(vault, "import", str(source))
    docs.mkdir(parents=True, exist_ok=True)
    refs = {}
    for ref in rows["reference"]:
        name = f"{_slug(ref['id'])}.md"
        heading = ref.get("heading") or ref["id"]
        (docs / name).write_text(f"# {ref.get('tool', '')} documentation\n\n## {heading}\n\n"
                                 f"{ref['reference']}\n")
        refs[ref["id"]] = name
    if refs:
        mem(vault, "ref", "add", str(docs))
    lessons = {m["id"]: m["sha"] for m in imported["memories"]}
    for neg, case in case_of_lookalike(rows).items():
        lessons[neg] = lessons[case]
    return {"lessons": lessons, "refs": refs,
            "counts": imported["counts"], "build_s": round(time.perf_counter() - started, 1)}


# -- the naive baselines -----------------------------------------------------------------

def tokens(text: str) -> list[str]:
    return re.findall(r"[a-z0-9]+", text.lower())


class BM25:
    """Okapi BM25 over documents given as {id: text}."""

    def __init__(self, docs: dict[str, str], k1: float = 1.5, b: float = 0.75):
        self.ids = sorted(docs)
        self.tf = [Counter(tokens(docs[i])) for i in self.ids]
        self.len = np.array([sum(tf.values()) for tf in self.tf], float)
        self.avg = float(self.len.mean()) if len(self.len) else 1.0
        df = Counter(t for tf in self.tf for t in tf)
        n = len(self.ids)
        self.idf = {t: math.log(1 + (n - d + 0.5) / (d + 0.5)) for t, d in df.items()}
        self.k1, self.b = k1, b

    def ranked(self, query: str, limit: int = DEPTH) -> list[str]:
        scores = np.zeros(len(self.ids))
        for term in set(tokens(query)):
            idf = self.idf.get(term)
            if idf is None:
                continue
            tf = np.array([d.get(term, 0) for d in self.tf], float)
            scores += idf * tf * (self.k1 + 1) / (
                tf + self.k1 * (1 - self.b + self.b * self.len / self.avg))
        order = sorted(range(len(self.ids)), key=lambda i: (-scores[i], self.ids[i]))
        return [self.ids[i] for i in order[:limit] if scores[i] > 0]


class Dense:
    """max(text cosine, evidence cosine) per lesson, with poimen's embedder."""

    def __init__(self, embedder, lessons: list[dict]):
        self.embedder = embedder
        self.ids = [line["id"] for line in lessons]
        self.text = embedder.embed([line["text"] for line in lessons])
        self.evidence = embedder.embed([line.get("evidence") or line["text"]
                                        for line in lessons])

    def ranked(self, query: str, limit: int = DEPTH) -> list[str]:
        q = self.embedder.embed_one(query)
        scores = np.maximum(self.text @ q, self.evidence @ q)
        order = sorted(range(len(self.ids)), key=lambda i: (-scores[i], self.ids[i]))
        return [self.ids[i] for i in order[:limit]]


# -- scoring ------------------------------------------------------------------------------

def rank_of(target, ranked: list) -> int | None:
    return ranked.index(target) + 1 if target in ranked else None


def summary(ranks: list[int | None]) -> dict:
    n = len(ranks)
    return {"n": n, "top1": round(sum(r == 1 for r in ranks) / n, 4) if n else None,
            "top1_count": sum(r == 1 for r in ranks),
            "mrr": round(sum(1 / r for r in ranks if r) / n, 4) if n else None}


SLICES = ("dev", "heldout", "heldout-w2", "heldout-w3", "heldout-w4", "heldout-w5",
          "heldout-w6", "heldout-w7", "heldout-w8", "heldout-w9",
          "heldout-w10", "heldout-w11", "heldout-w12",
          "heldout-w13")


def in_slice(row: dict, name: str) -> bool:
    """`dev`, `heldout`, or `heldout-<wave>`: the held-out rows of the parts collected in
    one later wave (`*-w2`, `*-w3`), each first scored after every change it judges was
    made, so each is a clean held-out set once (docs/BENCHMARKS.md says which runs saw it)."""
    split, _, wave = name.partition("-")
    return row["split"] == split and (not wave or row.get("part", "").endswith(f"-{wave}"))


def evaluate(engine, rows: dict, built: dict, baselines: dict, split: str) -> dict:
    """Every figure for the queries of one slice (see `in_slice`)."""
    shas = built["lessons"]
    cases = [c for c in rows["cases"] if in_slice(c, split)]
    ranks = {q: {p: [] for p in ("poimen", "bm25", "dense")} for q in ("recurrence", "variant")}
    paths = {"symptom": [], "text": []}
    tier1 = []
    for case in cases:
        target = shas.get(case["id"])
        for q, text, request in (("recurrence", case["recurrence"],
                                  {"signature_source": case["recurrence"]}),
                                 ("variant", case["variant_query"],
                                  {"task": case["variant_query"]})):
            body = engine.context(dict(request, scope="all-projects"))
            order = [i["sha"] for i in body["lessons"]]
            ranks[q]["poimen"].append(rank_of(target, order))
            for name, baseline in baselines.items():
                ranks[q][name].append(rank_of(case["id"], baseline.ranked(text)))
            if q == "recurrence":
                tier1.append(any(i["sha"] == target and i["tier"] == 1
                                 for i in body["lessons"]))
            else:
                vector = engine.embedder.embed_one(text)
                for kind in paths:
                    found = [h.memory_sha for h in engine.store.search_vectors(
                        vector, kind=kind, limit=DEPTH, levels=LESSONS)]
                    paths[kind].append(rank_of(target, found))
    lookalike = []
    for neg in (n for n in rows["negatives"] if in_slice(n, split)):
        body = engine.context({"signature_source": neg["b"], "scope": "all-projects"})
        other = shas.get(neg["id"])
        lookalike.append({"tier1_other": any(i["sha"] == other and i["tier"] == 1
                                             for i in body["lessons"]),
                          "any_other": any(i["sha"] == other for i in body["lessons"])})
    refs = []
    for ref in (r for r in rows["reference"] if in_slice(r, split)):
        body = engine.context({"signature_source": ref["query"], "scope": "all-projects"})
        top = body["references"][0]["path"] if body["references"] else None
        refs.append({"first": top is not None and Path(top).name == built["refs"][ref["id"]],
                     "lessons_above": len(body["lessons"]) > 0,
                     "wrong_tier1": any(i["tier"] == 1 for i in body["lessons"])})
    n_look = len(lookalike)
    return {
        "cases": len(cases),
        "recurrence": {p: summary(r) for p, r in ranks["recurrence"].items()},
        "variant": {p: summary(r) for p, r in ranks["variant"].items()},
        "tier1_share": round(sum(tier1) / len(tier1), 4) if tier1 else None,
        "variant_paths": {k: summary(r) for k, r in paths.items()},
        "lookalikes": {"n": n_look,
                       "tier1_other": sum(x["tier1_other"] for x in lookalike),
                       "returned_other": sum(x["any_other"] for x in lookalike)},
        "references": {"n": len(refs), "first": sum(x["first"] for x in refs),
                       "share_first": round(sum(x["first"] for x in refs) / len(refs), 4)
                       if refs else None,
                       "with_lessons_above": sum(x["lessons_above"] for x in refs)},
    }


def wave_of(row: dict) -> int:
    """The wave a row's part was collected in: `<name>-w<N>`, else 1."""
    name, _, wave = row.get("part", "").rpartition("-w")
    return int(wave) if name and wave.isdigit() else 1


def run(data: Path | None, splits=SLICES, work: Path | None = None,
        until_wave: int | None = None) -> dict:
    from poimen.engine import Engine

    rows = corpus.load(data)
    if until_wave is not None:
        rows = {name: [r for r in items if wave_of(r) <= until_wave]   # distractors: wave 1
                for name, items in rows.items()}
    with tempfile.TemporaryDirectory(prefix="bench-retrieval-", dir=work,
                                     ignore_cleanup_errors=True) as tmp:
        vault = Path(tmp) / "vault"
        built = build_vault(rows, vault, Path(tmp) / "docs")
        engine = Engine(vault, "bench")
        lines = [line for line in lesson_lines(rows) if line.get("evidence")]
        baselines = {"bm25": BM25({line["id"]: line["text"] + "\n" + line["evidence"]
                                   for line in lines}),
                     "dense": Dense(engine.embedder, lines)}
        started = time.perf_counter()
        result = {split: evaluate(engine, rows, built, baselines, split) for split in splits
                  if any(in_slice(c, split) for c in rows["cases"])}
        result["evaluate_s"] = round(time.perf_counter() - started, 1)
        engine.vault.deferred.wait()   # its occurrences applied before the vault goes
        result["vault"] = {"counts": built["counts"], "build_s": built["build_s"]}
    result["data"] = corpus.data_name(data) + (
        f" (waves up to {until_wave})" if until_wave is not None else "")
    result["rows"] = {k: dict(Counter(r["split"] for r in v)) for k, v in rows.items()}
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=None,
                        help="a directory in the shared set's format (default: tests/corpus)")
    parser.add_argument("--splits", default=",".join(SLICES),
                        help="slices to score: dev, heldout, heldout-<wave> (the held-out rows "
                             "of one wave's parts, e.g. heldout-w3); a slice with no rows is "
                             "left out")
    parser.add_argument("--until-wave", type=int, default=None, metavar="N",
                        help="the repo's corpus without the parts of waves after N (keeps a "
                             "later wave clean: unscored, even inside the held-out total)")
    parser.add_argument("--out", type=Path, default=None, help="also write the JSON here")
    args = parser.parse_args()
    result = run(args.data, args.splits.split(","), until_wave=args.until_wave)
    text = json.dumps(result, indent=2)
    if args.out:
        args.out.write_text(text + "\n")
    print(text)


if __name__ == "__main__":
    main()
