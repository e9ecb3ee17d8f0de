"""`make bench`: quality, latency and scale, write path and memory, in one run.

    .venv/bin/python bench/run.py [--full] [--data DIR] [--sizes 1000,5000] [--work DIR]

Quick profile (default): retrieval quality (poimen beside naive baselines, dev and
held-out splits of the corpus), one 1k vault, the ANN microbenchmark
to 30k vectors. `--full` adds 10k and 100k vaults, the ANN microbenchmark to 100k and
the other engineers' benchmarks (signatures, derived filter, LSP). Results go to
`bench/results/<stamp>.json` and `.md`, with PNG plots; the targets are checked there.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import subprocess
import sys
import time
from datetime import datetime, timezone
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import ann  # noqa: E402
import build  # noqa: E402
import corpus  # noqa: E402
import hotspots  # noqa: E402
import latency  # noqa: E402
import report  # noqa: E402
import retrieval  # noqa: E402
import write_path  # noqa: E402

RESULTS = HERE / "results"
EXTRAS = ("bench_signatures.py", "bench_derived.py", "bench_lsp.py", "bench_redact.py")


def command(argv: list[str]) -> str:
    """The command line as typed, its absolute paths made relative to the repo."""
    def one(arg: str) -> str:
        flag, eq, value = arg.rpartition("=")
        if value.startswith("/"):
            return flag + eq + corpus.shown(value)
        return arg
    return " ".join(one(a) for a in argv)


def machine() -> dict:
    cpu = next((line.split(":", 1)[1].strip() for line in
                Path("/proc/cpuinfo").read_text().splitlines() if line.startswith("model name")),
               platform.processor())
    mem_kb = int(next(line.split()[1] for line in Path("/proc/meminfo").read_text().splitlines()
                      if line.startswith("MemTotal")))
    commit = subprocess.run(["git", "-C", str(HERE.parent), "rev-parse", "--short", "HEAD"],
                            capture_output=True, text=True).stdout.strip()
    return {"cpu": cpu, "cores": os.cpu_count(), "memory_gb": round(mem_kb / 1e6, 1),
            "python": platform.python_version(), "commit": commit,
            "loadavg_start": [round(x, 1) for x in os.getloadavg()]}


def extras() -> dict:
    out = {}
    for script in EXTRAS:
        done = subprocess.run([sys.executable, str(HERE / script)], capture_output=True,
                              text=True, timeout=7200)
        try:
            out[script] = json.loads(done.stdout)
        except ValueError:
            out[script] = {"returncode": done.returncode, "stdout": done.stdout[-4000:],
                           "stderr": done.stderr[-2000:]}
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--full", action="store_true", help="10k and 100k vaults too")
    parser.add_argument("--data", type=Path, default=corpus.DEFAULT_DATA,
                        help="a data set in the shared format (default: the repo's corpus)")
    parser.add_argument("--sizes", default=None, help="vault sizes, e.g. 1000,5000")
    parser.add_argument("--queries", type=int, default=None, help="context queries per size")
    parser.add_argument("--work", type=Path, default=corpus.REPO / ".cache" / "bench",
                        help="where scale vaults are built and kept for re-runs")
    parser.add_argument("--skip", default="", help="comma list: retrieval,scale,write,ann")
    args = parser.parse_args()
    sizes = [int(s) for s in (args.sizes or ("1000,10000,100000" if args.full else "1000"))
             .split(",")]
    skip = set(filter(None, args.skip.split(",")))
    count = args.queries or (150 if args.full else 60)
    args.work.mkdir(parents=True, exist_ok=True)
    started = datetime.now(timezone.utc)
    result = {"date": started.isoformat(timespec="seconds"), "machine": machine(),
              "profile": "full" if args.full else "quick", "command": command(sys.argv),
              "data": corpus.data_name(args.data)}
    rows = corpus.load(args.data)
    if "retrieval" not in skip:
        print("bench: retrieval", flush=True)
        result["retrieval"] = retrieval.run(args.data, work=args.work)
    vaults = {}
    if "scale" not in skip:
        result["scale"] = []
        requests = latency.queries(rows, count)
        for size in sizes:
            print(f"bench: vault of {size}", flush=True)
            built = build.build(size, rows, args.work)
            vault = args.work / f"vault-{size}"
            vaults[size] = vault
            entry = {"size": size, "build": built,
                     "in_process": latency.in_process(vault, requests)}
            print(f"bench: http and lsp at {size}", flush=True)
            entry["http"] = latency.over_http(vault, requests, args.work / f"serve-{size}.log")
            entry["lsp"] = latency.over_lsp(vault, args.work / f"lsp-{size}", rows["cases"])
            if size == max(sizes):
                print(f"bench: py-spy profile of lookups at {size}", flush=True)
                entry["hotspots"] = hotspots.profile(vault, count)
            result["scale"].append(entry)
    if "write" not in skip:
        print("bench: write path", flush=True)
        imported = args.work / "write-import-vault"
        shutil.rmtree(imported, ignore_errors=True)
        result["write"] = {"import": write_path.import_rate(keep=imported),
                           "ingest": write_path.ingest_rate(),
                           "embeddings_per_memory": write_path.embeddings_per_memory(),
                           "embedding_batching": write_path.embedding_batching()}
        result["write"]["rebuild"] = write_path.rebuild_rate(imported)
        result["write"]["rebuild"]["vault"] = "the imported vault"
    if "ann" not in skip and vaults:
        print("bench: ann", flush=True)
        base, queries = vectors_of(vaults[max(vaults)])
        result["ann"] = ann.measure(base, queries, [1000, 10000, 100000] if args.full
                                    else [1000, 10000, 30000], index_from=10000)
    if args.full:
        result["extras"] = extras()
    result["machine"]["loadavg_end"] = [round(x, 1) for x in os.getloadavg()]
    result["elapsed_s"] = round((datetime.now(timezone.utc) - started).total_seconds())
    result["targets"] = report.targets(result)
    stamp = started.strftime("%Y%m%dT%H%M%SZ")
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / f"{stamp}.json").write_text(json.dumps(result, indent=2))
    plots = report.plots(result, RESULTS, stamp)
    (RESULTS / f"{stamp}.md").write_text(report.markdown(result, plots))
    print((RESULTS / f"{stamp}.md").read_text())


def vectors_of(vault: Path):
    """The vault's vectors (the ANN base) and 60 of them as queries."""
    import lancedb
    import numpy as np

    table = lancedb.connect(str(vault / "lance")).open_table("vectors").to_arrow()
    matrix = np.stack(table["vector"].to_numpy(zero_copy_only=False)).astype(np.float32)
    rng = np.random.default_rng(1)
    return matrix, matrix[rng.choice(len(matrix), min(60, len(matrix)), replace=False)]


if __name__ == "__main__":
    time.tzset()
    main()
