"""A team vault against a folder vault of the same size, in one run (docs/TEAM.md).

    .venv/bin/python bench/team.py [--lessons 1000] [--queries 60] [--writes 20]

Starts a real S3-compatible server (`moto`, tests/s3kit.py) on loopback. The same
`mem import` file goes into a folder vault and, from machine A, into a team vault;
machine B (its own writer id and local state) then opens the team vault (its first sync
builds its copy: timed). Lookup latency: the same requests alternate between an engine
on the folder vault and machine B's engine on its copy (p50/p95, ratio). Write to
visibility: machine A remembers a new lesson; machine B syncs and looks it up until it
is answered (time from A's acknowledgement; B syncing back to back is the floor, a
`POIMEN_SYNC_INTERVAL_S` timer adds up to its interval). Both machines live in this
process (separate state, clients and engines), so the figures leave out process start.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "tests"))

import build  # noqa: E402
import corpus  # noqa: E402
import latency  # noqa: E402
from run import RESULTS, machine  # noqa: E402
from s3kit import BUCKET, S3Server  # noqa: E402

MACHINE_KEYS = ("AWS_ENDPOINT_URL", "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY",
                "AWS_REGION", "AWS_CONFIG_FILE", "AWS_SHARED_CREDENTIALS_FILE",
                "POIMEN_S3_TIMEOUT_S", "POIMEN_WRITER", "POIMEN_STATE_DIR",
                "POIMEN_SYNC_INTERVAL_S")


def become(env: dict) -> None:
    """This process now acts as the machine `env` describes (read when engines open)."""
    for key in MACHINE_KEYS:
        os.environ[key] = env[key]


def lookups(folder, team, requests: list[dict]) -> dict:
    times = {"folder": [], "team": []}
    for n, request in enumerate(requests * 2):     # two passes; engines are warm after one
        pair = (("folder", folder), ("team", team))
        for name, engine in (pair if n % 2 else pair[::-1]):
            start = time.perf_counter()
            engine.context(dict(request, request_id=f"{name}-{n}"))
            if n >= len(requests):
                times[name].append(time.perf_counter() - start)
    out = {name: latency.stats_ms(values) for name, values in times.items()}
    out["ratio_p50"] = round(out["team"]["p50_ms"] / out["folder"]["p50_ms"], 3)
    return out


def visibility(writer, reader, writes: int) -> dict:
    seconds, syncs = [], []
    for n in range(writes):
        failure = (f"Traceback (most recent call last):\n  File \"/srv/vis/job{n}.py\", line "
                   f"2, in <module>\n    import vis_{n}_{time.time_ns()}\n"
                   f"ModuleNotFoundError: No module named 'vis_{n}'\n")
        evidence = writer.ingest(failure, source="ci")
        lesson = writer.remember("L1", f"vis_{n} lives in the internal index ({n}).",
                                 parents=[evidence.evidence_sha])
        acknowledged, rounds = time.perf_counter(), 0
        while True:
            rounds += 1
            reader.vault.sync()
            body = reader.context({"signature_source": failure, "request_id": f"vis-{n}"})
            if body["lessons"] and body["lessons"][0]["sha"] == lesson.sha:
                break
            if time.perf_counter() - acknowledged > 60:
                raise SystemExit(f"bench: write {n} not visible after 60 s")
        seconds.append(time.perf_counter() - acknowledged)
        syncs.append(rounds)
    return dict(latency.stats_ms(seconds), sync_rounds_max=max(syncs))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lessons", type=int, default=1000)
    parser.add_argument("--queries", type=int, default=60)
    parser.add_argument("--writes", type=int, default=20)
    parser.add_argument("--work", type=Path, default=Path("/tmp/poimen-bench-team"))
    args = parser.parse_args()
    rows = corpus.load(corpus.DEFAULT_DATA)
    lessons = corpus.real_lessons(rows)[:args.lessons]
    lessons += corpus.generated_lessons(max(args.lessons - len(lessons), 0), seed=args.lessons)
    source = corpus.write_jsonl(lessons, args.work / f"team-import-{args.lessons}.jsonl")
    result = {"machine": machine(), "lessons": len(lessons)}
    server = S3Server(args.work / "moto").start()
    try:
        vault = f"s3://{BUCKET}/bench"
        a = server.machine(args.work / f"a-{time.time_ns()}", "machine-a")
        b = server.machine(args.work / f"b-{time.time_ns()}", "machine-b")
        folder = args.work / f"folder-{time.time_ns()}"
        build.mem(folder, "import", str(source))
        become(a)
        build.mem(vault, "import", str(source))      # machine A's process, pushed on exit
        from poimen.engine import Engine

        become(b)
        start = time.perf_counter()
        reader = Engine(vault, "bench")
        result["first_sync_s"] = round(time.perf_counter() - start, 2)
        result["stats"] = {"folder": Engine(folder, "bench").stats(), "team": reader.stats()}
        result["stats"]["folder"].pop("vault")              # no path of this machine
        result["stats"]["team"]["team"].pop("local_copy")
        requests = latency.queries(rows, args.queries)
        result["lookup"] = lookups(Engine(folder, "bench"), reader, requests)
        become(a)
        writer = Engine(vault, "bench")
        result["write_to_visible"] = visibility(writer, reader, args.writes)
    finally:
        server.stop()
    result["machine"]["loadavg_end"] = [round(x, 1) for x in os.getloadavg()]
    RESULTS.mkdir(exist_ok=True)
    out = RESULTS / f"{time.strftime('%Y%m%dT%H%M%SZ', time.gmtime())}-team.json"
    out.write_text(json.dumps(result, indent=2))
    print(json.dumps({k: result[k] for k in ("lessons", "first_sync_s", "lookup",
                                             "write_to_visible")}, indent=2))
    print(out)


if __name__ == "__main__":
    main()
