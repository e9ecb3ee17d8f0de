"""Language-server latency: cold start to first answer, hover from the cache, hover that
needs a lookup. A real `mem lsp` process over a vault seeded from the shared data set,
driven through the protocol. Prints JSON; the ratios compare numbers from this one run.

    .venv/bin/python bench/bench_lsp.py [--hovers 200]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

from lsprotocol import types
from pygls.uris import from_fs_path
from pytest_lsp import client_capabilities, make_test_lsp_client

import corpus

MEM = str(Path(sys.executable).parent / "mem")
RANGE = types.Range(types.Position(0, 0), types.Position(0, 10))


def seed(vault: Path) -> list[dict]:
    from poimen.engine import Engine

    cases = [c for c in corpus.load()["cases"] if c["split"] == "dev"]
    engine = Engine(vault, "bench")
    for case in cases:
        evidence = engine.ingest(case["evidence"], "terminal", tool=case["tool"])
        engine.remember("L1", case["memory"], parents=[evidence.evidence_sha])
    return cases


def forward(client, uri: str, message: str) -> None:
    client.protocol.notify("poimen/diagnostics", {"uri": uri, "diagnostics": [{
        "range": {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 10}},
        "message": message, "source": "bench", "severity": 1}]})


async def hover(client, uri: str):
    return await client.text_document_hover_async(types.HoverParams(
        text_document=types.TextDocumentIdentifier(uri=uri), position=types.Position(0, 2)))


def ms(seconds: list[float]) -> dict:
    ordered = sorted(seconds)
    return {"n": len(seconds), "median_ms": round(statistics.median(ordered) * 1000, 3),
            "p95_ms": round(ordered[int(0.95 * (len(ordered) - 1))] * 1000, 3)}


async def run(vault: Path, workdir: Path, cases: list[dict], hovers: int) -> dict:
    started = time.perf_counter()
    client = make_test_lsp_client()
    await client.start_io(MEM, "lsp")
    await client.initialize_session(types.InitializeParams(
        capabilities=client_capabilities("neovim"),
        initialization_options={"vault": str(vault), "project": "bench", "debounceMs": 0,
                                "legTimeoutS": 60,
                                "answersDir": str(workdir / "answers")}))
    first_uri = from_fs_path(str(workdir / "cold.txt"))
    forward(client, first_uri, cases[0]["recurrence"])
    card = await hover(client, first_uri)
    cold = time.perf_counter() - started
    assert card is not None, "no answer to the first hover"

    lookups = []
    for n, case in enumerate(cases[1:], 1):
        uri = from_fs_path(str(workdir / f"case{n}.txt"))
        t0 = time.perf_counter()
        forward(client, uri, case["recurrence"])
        result = await hover(client, uri)
        lookups.append(time.perf_counter() - t0)
        assert result is not None, case["id"]

    cached = []
    for _ in range(hovers):
        t0 = time.perf_counter()
        result = await hover(client, first_uri)
        cached.append(time.perf_counter() - t0)
        assert result is not None
    await client.shutdown_session()
    await client.stop()
    lookup, from_cache = ms(lookups), ms(cached)
    return {"cold_start_to_first_answer_ms": round(cold * 1000, 1),
            "hover_needing_lookup": lookup, "hover_from_cache": from_cache,
            "ratio_lookup_over_cache_median": round(lookup["median_ms"] / from_cache["median_ms"], 1),
            "ratio_cold_over_cache_median": round(cold * 1000 / from_cache["median_ms"], 1)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hovers", type=int, default=200)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-lsp-") as tmp:
        workdir = Path(tmp)
        t0 = time.perf_counter()
        cases = seed(workdir / "vault")
        seeded = time.perf_counter() - t0
        result = asyncio.run(run(workdir / "vault", workdir, cases, args.hovers))
    result["seed_s"] = round(seeded, 1)
    result["memories"] = len(cases)
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
