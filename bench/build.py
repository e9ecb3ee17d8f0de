"""Scale vaults built with the real `mem import` (timed: that is the write-path figure).

A built vault is kept under the work directory with a `bench-build.json` beside it
(input sha, counts, seconds, date), so a re-run at the same size and input reuses it
and reports the import figures from when it was built.
"""

from __future__ import annotations

import hashlib
import json
import resource
import subprocess
import sys
import time
from datetime import datetime, timezone
from pathlib import Path

import corpus

MEM = str(Path(sys.executable).parent / "mem")


def mem(vault: Path, *args: str, stdin: str | None = None, timeout: float = 36_000) -> dict:
    done = subprocess.run([MEM, "--vault", str(vault), "--project", "bench", "--json", *args],
                          input=stdin, capture_output=True, text=True, timeout=timeout)
    if done.returncode != 0:
        raise SystemExit(f"bench: mem {' '.join(args)} failed: {done.stderr[-2000:]}")
    return json.loads(done.stdout) if done.stdout.strip() else {}


def children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def build(size: int, rows: dict, work: Path) -> dict:
    """A vault of `size` lessons (every real one, the rest generated); import timed."""
    real = corpus.real_lessons(rows)
    lessons = real[:size] + corpus.generated_lessons(max(size - len(real), 0), seed=size)
    blob = "".join(json.dumps(r, ensure_ascii=False, sort_keys=True) + "\n" for r in lessons)
    sha = hashlib.sha256(blob.encode()).hexdigest()
    vault = work / f"vault-{size}"
    meta_path = work / f"vault-{size}.bench-build.json"
    building = work / f"vault-{size}.building"
    while building.exists():  # another bench process is building this vault
        time.sleep(5)
    if meta_path.is_file() and vault.is_dir():
        meta = json.loads(meta_path.read_text())
        if meta.get("input_sha") == sha:
            return dict(meta, reused=True)
    subprocess.run(["rm", "-rf", str(vault)], check=True)
    source = corpus.write_jsonl(lessons, work / f"import-{size}.jsonl")
    cpu0, t0 = children_cpu(), time.perf_counter()
    result = mem(vault, "import", str(source))
    wall, cpu = time.perf_counter() - t0, children_cpu() - cpu0
    evidence_bytes = sum(len(e.encode()) for r in lessons for e in
                         ([r["evidence"]] if isinstance(r["evidence"], str) else r["evidence"]))
    meta = {"size": size, "input_sha": sha, "lessons": len(lessons),
            "real": min(size, len(real)), "generated": max(size - len(real), 0),
            "counts": result.get("counts", {}), "import_wall_s": round(wall, 1),
            "import_cpu_s": round(cpu, 1), "evidence_bytes": evidence_bytes,
            "memories_per_s_wall": round(len(lessons) / wall, 2),
            "memories_per_s_cpu": round(len(lessons) / cpu, 2) if cpu else None,
            "built": datetime.now(timezone.utc).isoformat(timespec="seconds"),
            "loadavg_after": list(__import__("os").getloadavg())}
    meta_path.write_text(json.dumps(meta, indent=2))
    return dict(meta, reused=False)


if __name__ == "__main__":
    size = int(sys.argv[1])
    work = Path(sys.argv[2] if len(sys.argv) > 2 else "/tmp/poimen-bench")
    work.mkdir(parents=True, exist_ok=True)
    print(json.dumps(build(size, corpus.load(corpus.DEFAULT_DATA), work), indent=2))
