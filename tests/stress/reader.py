"""A long-lived reader doing lookups on a vault while writers write.

    python reader.py VAULT STOP_FILE URL        (VAULT: a folder or s3://bucket/prefix)

Until STOP_FILE exists (and every view below has shown a memory, at most 180 s more):
raw searches and three-tier lookups on one long-lived engine (as the LSP server and
`mem serve` hold one), the same vector search on a store opened afresh, and
`POST /memory/context` to the `mem serve` at URL (must answer 200); every
memory a lookup returns is read back and must be whole (its row, its full text). Prints
one JSON line: lookups, memories read by each, every error or torn read.
"""
from __future__ import annotations

import json
import random
import sys
import time
import traceback
from pathlib import Path

QUERIES = ("npm ERESOLVE peer conflict", "certificate expired in docker build",
           "pytest timeout waiting for lock", "OOMKilled pod restarts", "checksum mismatch",
           "permission denied on socket", "DNS resolution failed in CI")


def main() -> None:
    vault, stop, url = sys.argv[1], Path(sys.argv[2]), sys.argv[3]
    import httpx

    from poimen.engine import Engine
    from poimen.store import Store

    engine = Engine(vault, project="conc")
    rng = random.Random(5)
    report = {"lookups": 0, "memories_read": 0, "fresh_reads": 0, "served": 0,
              "served_lessons": 0, "errors": [], "torn": []}
    deadline = None
    while True:   # after STOP_FILE, until every view has shown the writers' work (or 180 s):
        if stop.exists():   # on a team vault a machine sees writes after its next sync
            deadline = deadline or time.monotonic() + 180
            seen = report["served_lessons"] and report["fresh_reads"] and report["memories_read"]
            if seen or time.monotonic() > deadline:
                break
        query = rng.choice(QUERIES)
        try:
            hits = engine.search(query, limit=5)
            body = engine.context({"task": query, "scope": "all-projects"})
            report["lookups"] += 2
            for hit in hits:
                memory = engine.memory(hit["sha"])
                report["memories_read"] += 1
                if memory is None or not memory["text"] or memory["text"] != hit["text"]:
                    report["torn"].append(hit["sha"])
            for lesson in body.get("lessons", []):
                if not lesson.get("text"):
                    report["torn"].append(lesson.get("sha"))
            fresh = Store(engine.vault.path / "lance")   # a team vault: its local copy
            vector = engine.embedder.embed_one(query)
            for hit in fresh.search_vectors(vector, kind="text", limit=5):
                row = fresh.memories([hit.memory_sha]).get(hit.memory_sha)
                report["fresh_reads"] += 1
                if row is None or not row.text:
                    report["torn"].append(hit.memory_sha)
            answer = httpx.post(url + "/memory/context", timeout=300, json={
                "task": query, "scope": "all-projects"})
            if answer.status_code != 200:
                report["errors"].append(f"HTTP {answer.status_code}: {answer.text[:200]}")
            else:
                report["served"] += 1
                for lesson in answer.json()["lessons"]:
                    report["served_lessons"] += 1
                    memory = engine.memory(lesson["sha"])
                    if memory is None or not memory["text"] or not lesson["text"]:
                        report["torn"].append(lesson["sha"])
        except Exception as exc:   # the test fails on any of these; record, keep reading
            where = " > ".join(f"{Path(f.filename).name}:{f.lineno}"
                               for f in traceback.extract_tb(exc.__traceback__))
            report["errors"].append(f"{type(exc).__name__}: {exc}"[:300] + f" (at {where})")
        time.sleep(0.05)
    print(json.dumps(report))


if __name__ == "__main__":
    main()
