"""A process's figures read from /proc (Linux), for the benchmarks."""

from __future__ import annotations

from pathlib import Path


def rss_mb(pid: int) -> dict:
    """Current and peak resident set of a process, from /proc."""
    fields = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        key, _, value = line.partition(":")
        if key in ("VmRSS", "VmHWM"):
            fields[key] = round(int(value.split()[0]) / 1024, 1)
    return {"rss_mb": fields.get("VmRSS"), "peak_rss_mb": fields.get("VmHWM")}
