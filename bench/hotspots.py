"""Where a lookup's time goes: py-spy samples (every thread) of repeated `Engine.context`
calls over a built vault, folded into the functions with the most inclusive and self time.

    .venv/bin/python bench/hotspots.py VAULT [--lookups 60]
"""

from __future__ import annotations

import argparse
import collections
import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import corpus  # noqa: E402
import latency  # noqa: E402

PY_SPY = Path(sys.executable).parent / "py-spy"


WAITS = ("Condition.wait", "EpollSelector.select", "_worker (", "Event.wait", "Thread.join")


def fold(raw: str, top: int = 15) -> dict:
    """Top functions by inclusive and by self samples from py-spy's raw (collapsed) output,
    over the samples taken inside the lookup (a `poimen/lookup/` module on the stack) that are
    not waiting (a thread blocked on a lock, future or selector)."""
    inclusive, own = collections.Counter(), collections.Counter()
    total = 0
    for line in raw.splitlines():
        stack, _, count = line.rpartition(" ")
        if not stack or not count.isdigit():
            continue
        frames = [f for f in stack.split(";")[1:] if f]
        if not any("poimen/lookup/" in f for f in frames) or any("Embedder._load" in f for f in frames) or \
                any(w in frames[-1] for w in WAITS):
            continue
        n = int(count)
        total += n
        for frame in set(frames):
            if "threading.py" not in frame and "concurrent/futures" not in frame:
                inclusive[frame] += n
        own[frames[-1]] += n
    share = lambda c: [(f, round(100 * n / total, 1)) for f, n in c.most_common(top)]  # noqa: E731
    return {"samples": total, "inclusive_pct": share(inclusive), "self_pct": share(own)}


def profile(vault: Path, lookups: int = 60) -> dict:
    """Run the lookups under py-spy (if installed); the folded result."""
    if not PY_SPY.exists() and not shutil.which("py-spy"):
        return {"error": "py-spy is not installed"}
    with tempfile.TemporaryDirectory(prefix="bench-spy-") as tmp:
        out = Path(tmp) / "raw.txt"
        done = subprocess.run([str(PY_SPY if PY_SPY.exists() else "py-spy"), "record",
                               "--format", "raw", "--rate", "250", "--output", str(out),
                               "--", sys.executable, __file__, str(vault), "--target",
                               "--lookups", str(lookups)], capture_output=True, text=True)
        if done.returncode != 0 or not out.exists():
            return {"error": done.stderr[-1500:]}
        return fold(out.read_text())


def target(vault: Path, lookups: int) -> None:
    from poimen.engine import Engine

    requests = latency.queries(corpus.load(corpus.DEFAULT_DATA), lookups)
    engine = Engine(vault, "bench", create=False)
    engine.context(requests[0])
    for request in requests:
        engine.context(request)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("vault", type=Path)
    parser.add_argument("--lookups", type=int, default=60)
    parser.add_argument("--target", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.target:
        target(args.vault, args.lookups)
    else:
        print(json.dumps(profile(args.vault, args.lookups), indent=2))


if __name__ == "__main__":
    main()
