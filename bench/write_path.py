"""Write path through the real CLI: `mem ingest` evidence MB/s, `mem rebuild --from-log`.

Ingest: one `mem ingest` of N evidence files and one of a single file, into fresh vaults;
MB/s is the N files' bytes over the difference (the process start-up cancels out).
Rebuild: a copy of a built vault replayed from its log; seconds per 10k log records is
extrapolated linearly from the records this vault has (stated in the report).
"""

from __future__ import annotations

import shutil
import tempfile
import time
from pathlib import Path

import corpus
from build import mem


def ingest_rate(count: int = 200, seed: int = 4242) -> dict:
    evidence = [r["evidence"] for r in corpus.generated_lessons(count, seed=seed)]
    with tempfile.TemporaryDirectory(prefix="bench-ingest-") as tmp:
        root = Path(tmp)
        files = []
        for n, text in enumerate(evidence):
            path = root / f"e{n}.log"
            path.write_text(text)
            files.append(str(path))
        timings = {}
        for label, names in (("one", files[:1]), ("all", files)):
            t = time.perf_counter()
            mem(root / f"vault-{label}", "ingest", *names)
            timings[label] = time.perf_counter() - t
    size = sum(len(e.encode()) for e in evidence)
    work = max(timings["all"] - timings["one"], 1e-9)
    return {"files": count, "bytes": size, "one_file_s": round(timings["one"], 2),
            "all_files_s": round(timings["all"], 2),
            "evidence_mb_per_s": round(size / work / 1e6, 4),
            "records_per_s": round((count - 1) / work, 1)}


def rebuild_rate(vault: Path) -> dict:
    with tempfile.TemporaryDirectory(prefix="bench-rebuild-") as tmp:
        copy = Path(tmp) / "vault"
        shutil.copytree(vault, copy)
        t = time.perf_counter()
        result = mem(copy, "rebuild", "--from-log")
        seconds = time.perf_counter() - t
    records = result.get("records") or 0
    return {"records": records, "seconds": round(seconds, 1),
            "projection_drift": len(result.get("projection_drift") or []),
            "seconds_per_10k_records_extrapolated":
                round(seconds / records * 10_000, 1) if records else None}
