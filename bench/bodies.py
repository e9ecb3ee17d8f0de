"""Guard for lookup changes that must not change answers: a digest of every answer body.

Builds a small vault from the DEV split of tests/corpus (`retrieval.build_vault`: the
dev cases, look-alikes and references, and the first `--distractors` dev distractors),
kept under `--work` and copied afresh for each run (a lookup records occurrences), then
asks every dev query through `Engine.context` and writes, per query, the tier, memory
ids, scores (rounded) and seen counts, and a sha256 of the whole canonical body with
its `last_seen` timestamps taken out. Two runs of the same lookup code give
byte-identical files (three of three on 1,948 answers since `mem import` and `mem ref
add` leave the full-text index complete; before, two answers flipped with the moment
housekeeping folded the rows it lacked into it); `--compare` lists the answers that
differ between two files.

    PYTHONPATH=server .venv/bin/python bench/bodies.py --out /tmp/after.json
    .venv/bin/python bench/bodies.py --compare /tmp/before.json /tmp/after.json
"""

from __future__ import annotations

import argparse
import hashlib
import json
import shutil
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import corpus  # noqa: E402
from retrieval import build_vault, lesson_lines  # noqa: E402

DISTRACTORS = 150


def dev_rows(distractors: int) -> dict:
    rows = {kind: [r for r in items if r["split"] == "dev"]
            for kind, items in corpus.load().items()}
    rows["distractors"] = rows["distractors"][:distractors]
    return rows


def queries(rows: dict) -> list[tuple[str, dict]]:
    """(name, request) for every dev query: recurrences, variants, look-alikes, refs."""
    out = []
    for case in rows["cases"]:
        out.append((f"recurrence:{case['id']}", {"signature_source": case["recurrence"]}))
        out.append((f"variant:{case['id']}", {"task": case["variant_query"]}))
    out += [(f"lookalike:{n['id']}", {"signature_source": n["b"]}) for n in rows["negatives"]]
    out += [(f"reference:{r['id']}", {"signature_source": r["query"]})
            for r in rows["reference"]]
    return [(name, dict(request, scope="all-projects")) for name, request in out]


def _no_timestamps(value):
    if isinstance(value, dict):
        return {k: _no_timestamps(v) for k, v in value.items() if k != "last_seen"}
    if isinstance(value, list):
        return [_no_timestamps(v) for v in value]
    return value


def digest(body: dict) -> dict:
    from poimen.canonical import canonical

    def r(x):
        return None if x is None else round(float(x), 4)

    return {"tier": body["tier"],
            "lessons": [[i["tier"], i["sha"][:16], r(i.get("score")), r(i["rerank"]),
                         i["seen_count"], i.get("match")] for i in body["lessons"]],
            "skills": [[i["sha"][:16], r(i["rerank"])] for i in body["skills"]],
            "references": [[i["sha"][:16], r(i["rerank"])] for i in body["references"]],
            "signatures": [[s["sig_sha"][:16], s["known"], s.get("seen_count")]
                           for s in body["signatures"]],
            "degraded": body["degraded"],
            "body_sha": hashlib.sha256(canonical(_no_timestamps(body)).encode()).hexdigest()}


def built_vault(rows: dict, work: Path) -> Path:
    """The dev vault for these rows, built once under `work` (keyed by its input)."""
    key = hashlib.sha256(json.dumps(lesson_lines(rows) + rows["reference"],
                                    sort_keys=True).encode()).hexdigest()[:16]
    home = work / f"dev-{key}"
    if not (home / "done").is_file():
        shutil.rmtree(home, ignore_errors=True)
        home.mkdir(parents=True)
        built = build_vault(rows, home / "vault", home / "docs")
        (home / "built.json").write_text(json.dumps(built, sort_keys=True))
        (home / "done").write_text("")
    return home / "vault"


def run(work: Path, distractors: int, repeat: int = 1) -> dict:
    from poimen.engine import Engine

    rows = dev_rows(distractors)
    source = built_vault(rows, work)
    with tempfile.TemporaryDirectory(prefix="bench-bodies-") as tmp:
        vault = Path(tmp) / "vault"
        shutil.copytree(source, vault)
        engine = Engine(vault, "bench")
        asked = queries(rows)
        out = {}
        for round_ in range(repeat):   # a second round sees the first's occurrences
            for name, request in asked:
                out[f"{round_}:{name}"] = digest(engine.context(request))
    return {"vault": source.parent.name, "queries": len(asked), "bodies": out}


def compare(before: Path, after: Path) -> int:
    """Print the answers that differ (field by field); the number of them."""
    a, b = (json.loads(p.read_text())["bodies"] for p in (before, after))
    differ = sorted(k for k in a.keys() | b.keys() if a.get(k) != b.get(k))
    for key in differ:
        old, new = a.get(key) or {}, b.get(key) or {}
        for field in sorted(old.keys() | new.keys()):
            if field != "body_sha" and old.get(field) != new.get(field):
                print(f"{key} {field}:\n  - {old.get(field)}\n  + {new.get(field)}")
    print(f"{len(differ)} of {len(a)} answers differ")
    return len(differ)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path)
    parser.add_argument("--compare", type=Path, nargs=2, metavar=("BEFORE", "AFTER"))
    parser.add_argument("--work", type=Path,
                        default=Path(tempfile.gettempdir()) / "poimen-bodies")
    parser.add_argument("--distractors", type=int, default=DISTRACTORS)
    parser.add_argument("--repeat", type=int, default=2,
                        help="rounds of every query (seen counts grow between rounds)")
    args = parser.parse_args()
    if args.compare:
        raise SystemExit(1 if compare(*args.compare) else 0)
    if args.out is None:
        parser.error("--out or --compare is needed")
    result = run(args.work, args.distractors, args.repeat)
    args.out.write_text(json.dumps(result, indent=1, sort_keys=True) + "\n")
    print(f"{len(result['bodies'])} bodies -> {args.out}")


if __name__ == "__main__":
    main()
