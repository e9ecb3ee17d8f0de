"""Read-path latency over one built vault, with the floors measured in the same run.

In process: `Engine.context` per query (first pass: each query new to the process;
second pass: the same queries again), the per-leg latencies the lookup logs, the query
embedding alone, LanceDB's vector search alone, and a brute-force numpy search over the
same vectors. Over HTTP: a real `mem serve` on loopback, cold start to first answer and
`POST /memory/context` per query. Over LSP: a real `mem lsp` driven by pytest-lsp (reusing
`bench_lsp`): cold start, hover needing a lookup, hover from the cache, and the server's RSS.
Queries: real recurrences (known failures), variant symptoms, and generated failures that
are not in the vault (unknown ones, which fall through to tier 3).
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import shutil
import socket
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

import corpus
from proc import rss_mb

MEM = str(Path(sys.executable).parent / "mem")


def stats_ms(seconds: list[float]) -> dict:
    ordered = sorted(seconds)
    pick = lambda q: ordered[min(int(q * len(ordered)), len(ordered) - 1)] * 1000  # noqa: E731
    return {"n": len(ordered), "p50_ms": round(statistics.median(ordered) * 1000, 2),
            "p95_ms": round(pick(0.95), 2), "min_ms": round(ordered[0] * 1000, 2)}


def queries(rows: dict, count: int) -> list[dict]:
    """Context requests: a third known recurrences, a third variants, a third unknown."""
    cases = rows["cases"]
    unknown = corpus.generated_lessons(count, seed=987_654)
    out = []
    for n in range(count):
        case = cases[(n // 3) % len(cases)]   # distinct per kind up to 3 x len(cases)
        kind = n % 3
        if kind == 0:
            out.append({"signature_source": case["recurrence"], "request_id": f"q{n}"})
        elif kind == 1:
            out.append({"task": case["variant_query"]})
        else:
            out.append({"signature_source": unknown[n]["evidence"], "request_id": f"q{n}"})
    return [dict(q, scope="all-projects") for q in out]


class LegLog(logging.Handler):
    """Collects the per-leg latencies `poimen.context` logs for each lookup."""

    def __init__(self):
        super().__init__()
        self.legs: list[dict] = []

    def emit(self, record):
        try:
            self.legs.append(json.loads(record.getMessage())["latency_ms"])
        except (ValueError, KeyError):
            pass


def query_text(engine, request: dict) -> str:
    """What the lookup embeds: the task, else the signatures' excerpts, else the paste."""
    if request.get("task"):
        return request["task"]
    source = request.get("signature_source") or ""
    excerpts = dict.fromkeys(s.excerpt for s in engine.signatures(source)[:3])
    return "\n".join(excerpts) or source.strip()[:4000]


def in_process(vault: Path, requests: list[dict]) -> dict:
    """Context lookup in one process, cold start included, and the floors. The query
    embedding floor uses an embedder of its own: the engine's memoises vectors by text,
    so the second pass (same queries again) is answered with memoised query vectors."""
    import resource

    from poimen.lookup.candidates import SEARCH_LIMIT
    from poimen.embed import Embedder
    from poimen.engine import Engine

    def cpu() -> float:
        usage = resource.getrusage(resource.RUSAGE_SELF)
        return usage.ru_utime + usage.ru_stime

    t0 = time.perf_counter()
    engine = Engine(vault, "bench", create=False)
    engine.context(requests[0])
    cold = time.perf_counter() - t0
    handler = LegLog()
    logger = logging.getLogger("poimen.context")
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    passes, cpu_ms = [], []
    try:
        for _ in range(2):
            times, cpu0 = [], cpu()
            for request in requests:
                t = time.perf_counter()
                engine.context(request)
                times.append(time.perf_counter() - t)
            passes.append(times)
            cpu_ms.append(round((cpu() - cpu0) * 1000 / len(requests), 1))
    finally:
        logger.removeHandler(handler)
    legs = {}
    for entry in handler.legs:
        for leg, value in entry.items():
            legs.setdefault(leg, []).append(value / 1000)
    texts = [query_text(engine, request) for request in requests]
    floor = Embedder()
    floor.embed_one("load the model")
    embed_t, vectors, cpu0 = [], [], cpu()
    for text in texts:
        t = time.perf_counter()
        vectors.append(floor.embed_one(text))
        embed_t.append(time.perf_counter() - t)
    embed_cpu = round((cpu() - cpu0) * 1000 / len(texts), 1)
    lance_t = []
    for vector in vectors:
        t = time.perf_counter()
        engine.store.search_vectors(vector, kind="symptom", limit=SEARCH_LIMIT,
                                    levels=("L1", "L2"), include_superseded=True)
        lance_t.append(time.perf_counter() - t)
    fts_t = []
    for text in texts:
        t = time.perf_counter()
        engine.store.search_fulltext(text, limit=SEARCH_LIMIT, levels=("L1", "L2"),
                                     include_superseded=True)
        fts_t.append(time.perf_counter() - t)
    table = engine.store.table("vectors").to_arrow()
    kinds = np.array(table["kind"].to_pylist())
    matrix = np.stack(table["vector"].to_numpy(zero_copy_only=False))[kinds == "symptom"]
    numpy_t = []
    for vector in vectors:
        t = time.perf_counter()
        scores = matrix @ vector
        top = np.argpartition(-scores, min(SEARCH_LIMIT, len(scores) - 1))[:SEARCH_LIMIT]
        top[np.argsort(-scores[top])]
        numpy_t.append(time.perf_counter() - t)
    return {"cold_start_to_first_answer_ms": round(cold * 1000, 1),
            "context_first_pass": stats_ms(passes[0]), "context_second_pass": stats_ms(passes[1]),
            "cpu_ms_per_lookup": {"first_pass": cpu_ms[0], "second_pass": cpu_ms[1],
                                  "query_embedding": embed_cpu},
            "legs": {leg: stats_ms(v) for leg, v in sorted(legs.items())},
            "floor_query_embedding": stats_ms(embed_t),
            "lancedb_vector_search": stats_ms(lance_t),
            "lancedb_fulltext_search": stats_ms(fts_t),
            "floor_numpy_bruteforce": stats_ms(numpy_t),
            "symptom_vectors": int(len(matrix)), "all_vectors": int(len(kinds))}


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def over_http(vault: Path, requests: list[dict], log: Path) -> dict:
    """A real `mem serve`: cold start to first answer, then POSTs with keep-alive."""
    import httpx

    port = _free_port()
    url = f"http://127.0.0.1:{port}/memory/context"
    started = time.perf_counter()
    with open(log, "w") as err:
        proc = subprocess.Popen([MEM, "--vault", str(vault), "--project", "bench", "serve",
                                 "--port", str(port)], stdout=subprocess.DEVNULL, stderr=err)
    try:
        with httpx.Client(timeout=120) as client:
            while True:
                if proc.poll() is not None:
                    raise SystemExit(f"bench: mem serve exited: {log.read_text()[-2000:]}")
                try:
                    response = client.post(url, json=requests[0])
                    break
                except httpx.TransportError:
                    time.sleep(0.02)
            cold = time.perf_counter() - started
            if response.status_code != 200:
                raise SystemExit(f"bench: /memory/context said {response.status_code}")
            idle = rss_mb(proc.pid)
            times = []
            for request in requests * 2:
                t = time.perf_counter()
                response = client.post(url, json=request)
                times.append(time.perf_counter() - t)
                response.raise_for_status()
            after = rss_mb(proc.pid)
    finally:
        proc.terminate()
        proc.wait(timeout=30)
    return {"cold_start_to_first_answer_ms": round(cold * 1000, 1),
            "post_context": stats_ms(times), "rss_after_first_answer": idle,
            "rss_after_answering": after}


def lsp_children() -> list[int]:
    pids = []
    for task in Path(f"/proc/{os.getpid()}/task").iterdir():
        pids += [int(p) for p in (task / "children").read_text().split()]
    return pids


async def _over_lsp(vault: Path, workdir: Path, cases: list[dict], hovers: int) -> dict:
    import bench_lsp
    from lsprotocol import types
    from pygls.uris import from_fs_path
    from pytest_lsp import client_capabilities, make_test_lsp_client

    before = set(lsp_children())
    started = time.perf_counter()
    client = make_test_lsp_client()
    await client.start_io(MEM, "lsp")
    server = next(iter(set(lsp_children()) - before))
    await client.initialize_session(types.InitializeParams(
        capabilities=client_capabilities("neovim"),
        initialization_options={"vault": str(vault), "project": "bench", "debounceMs": 0,
                                "answersDir": str(workdir / "answers")}))
    idle = rss_mb(server)
    first = from_fs_path(str(workdir / "cold.txt"))
    bench_lsp.forward(client, first, cases[0]["recurrence"])
    card = await bench_lsp.hover(client, first)
    cold = time.perf_counter() - started
    if card is None:
        raise SystemExit("bench: no answer to the first hover")
    lookups = []
    for n, case in enumerate(cases):
        uri = from_fs_path(str(workdir / f"case{n}.txt"))
        t0 = time.perf_counter()
        bench_lsp.forward(client, uri, case["recurrence"])
        await bench_lsp.hover(client, uri)
        lookups.append(time.perf_counter() - t0)
    cached = []
    for _ in range(hovers):
        t0 = time.perf_counter()
        await bench_lsp.hover(client, first)
        cached.append(time.perf_counter() - t0)
    after = rss_mb(server)
    await client.shutdown_session()
    await client.stop()
    return {"cold_start_to_first_answer_ms": round(cold * 1000, 1),
            "hover_needing_lookup": stats_ms(lookups), "hover_from_cache": stats_ms(cached),
            "rss_idle_after_initialize": idle, "rss_after_answering": after}


def over_lsp(vault: Path, workdir: Path, cases: list[dict], hovers: int = 200) -> dict:
    """Hover figures from a real `mem lsp`; `workdir` (its workspace) is emptied first."""
    shutil.rmtree(workdir, ignore_errors=True)
    workdir.mkdir(parents=True)
    return asyncio.run(_over_lsp(vault, workdir, cases, hovers))
