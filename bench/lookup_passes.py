"""In-process lookups on an existing vault, pass after pass: latency, CPU, LanceDB calls.

A quick A/B for a read-path change: run it once per side (the other side's server code
through `PYTHONPATH=<worktree>/server`), alternating, on the same vault. Prints the first
pass's p50 (each query new to the process), every pass's p50 and mean, the process's CPU
per lookup and, with `--count-calls`, the LanceDB calls per lookup (each a round trip
through LanceDB's event-loop thread) grouped by the poimen function that made them.
`--ingest`: each paste is first recorded as evidence and the lookup names it, as `mem
lsp` does for a command failing in its terminal (the lookup then meets tables one write
newer than its copies); the figures are the lookups', the ingests' p50 beside them.

    .venv/bin/python bench/lookup_passes.py .cache/bench/vault-10000 [--queries 40]
        [--passes 3] [--count-calls] [--ingest]
"""

from __future__ import annotations

import argparse
import collections
import statistics
import time
import traceback
from pathlib import Path

import corpus
import latency


def count_calls() -> tuple[collections.Counter, collections.Counter]:
    """Wrap LanceDB's sync-to-async bridge: (calls, seconds) by poimen caller."""
    import lancedb.background_loop as bridge

    calls, seconds = collections.Counter(), collections.Counter()
    run = bridge.BackgroundEventLoop.run

    def counted(self, future):
        started = time.perf_counter()
        try:
            return run(self, future)
        finally:
            ours = [f for f in traceback.extract_stack(limit=25) if "/poimen/" in f.filename]
            key = (f"{Path(ours[-1].filename).name}:{ours[-1].name}" if ours else "?") + \
                f" <- {getattr(future, '__qualname__', type(future).__name__)}"
            calls[key] += 1
            seconds[key] += time.perf_counter() - started

    bridge.BackgroundEventLoop.run = counted
    return calls, seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("vault", type=Path)
    parser.add_argument("--queries", type=int, default=40)
    parser.add_argument("--passes", type=int, default=3)
    parser.add_argument("--count-calls", action="store_true")
    parser.add_argument("--ingest", action="store_true",
                        help="record each paste as evidence first (the terminal's flow)")
    args = parser.parse_args()
    from poimen import resident
    from poimen.engine import Engine

    engine = Engine(args.vault, "bench", create=False)
    requests = latency.queries(corpus.load(corpus.DEFAULT_DATA), args.queries)
    engine.context(requests[0])                    # model, tokenizer, full-text index
    resident.of(engine.vault.store).prime()        # the copies, as a server holds them
    calls, seconds = count_calls() if args.count_calls else (None, None)
    cpu, times, ingests = time.process_time(), [], []
    for n in range(args.passes):
        for request in requests:
            if args.ingest and request.get("signature_source"):
                started = time.perf_counter()
                paste = f"{request['signature_source']}\n(run {n})"
                request = dict(request, evidence_sha=engine.ingest(paste).evidence_sha)
                ingests.append(time.perf_counter() - started)
            started = time.perf_counter()
            engine.context(request)
            times.append(time.perf_counter() - started)
    cpu = time.process_time() - cpu
    first = latency.stats_ms(times[:len(requests)])["p50_ms"]
    print(f"first pass p50 {first:.1f} ms, all passes p50 "
          f"{latency.stats_ms(times)['p50_ms']:.1f} ms, mean {statistics.mean(times) * 1000:.1f}"
          f" ms, CPU {cpu / len(times) * 1000:.1f} ms per lookup")
    if ingests:
        print(f"{len(ingests)} ingests first, p50 {latency.stats_ms(ingests)['p50_ms']:.1f} ms "
              "(the CPU figure includes them)")
    if calls is not None:
        n = len(times)
        print(f"LanceDB calls per lookup {sum(calls.values()) / n:.1f}")
        for key, count in calls.most_common():
            print(f"  {count / n:6.2f}  {seconds[key] / n * 1000:7.2f} ms  {key}")


if __name__ == "__main__":
    main()
