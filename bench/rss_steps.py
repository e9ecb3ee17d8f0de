"""Where a server's resident memory goes: RSS and peak RSS after each step of loading an
engine and answering its first lookups, in one process (by hand; `/proc/self/status`).

The vault is copied to a temporary folder first (a lookup records occurrences). With
`--trace`, tracemalloc also reports what each step left allocated by Python (and numpy),
which slows every step and adds its own overhead to the RSS figures.

    PYTHONPATH=server .venv/bin/python bench/rss_steps.py .cache/bench/vault-10000
"""

from __future__ import annotations

import argparse
import gc
import importlib
import os
import shutil
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import corpus  # noqa: E402
from proc import rss_mb  # noqa: E402

IMPORTS = ("numpy", "pyarrow.compute", "poimen.engine", "poimen.lookup", "lsprotocol.types",
           "poimen.lsp.server", "onnxruntime", "tokenizers")


def status() -> tuple[float, float]:
    """(VmRSS, VmHWM) of this process in MB."""
    figures = rss_mb(os.getpid())
    return figures["rss_mb"], figures["peak_rss_mb"]


class Steps:
    def __init__(self, trace: bool):
        self.trace, self.last = trace, status()[0]
        print(f"{'start':32s} rss {self.last:7.1f}")

    def __call__(self, name: str, fn):
        traced = tracemalloc.get_traced_memory()[0] if self.trace else 0
        started = time.perf_counter()
        out = fn()
        took = time.perf_counter() - started
        gc.collect()
        rss, peak = status()
        line = (f"{name:32s} rss {rss:7.1f} ({rss - self.last:+7.1f}) peak {peak:7.1f} "
                f"{took * 1000:6.0f} ms")
        if self.trace:
            line += f"  traced {(tracemalloc.get_traced_memory()[0] - traced) / 2**20:+6.1f}"
        print(line, flush=True)
        self.last = rss
        return out


def run(vault: Path, steps: Steps) -> None:
    from poimen import lazy_lancedb

    for name in IMPORTS[:2]:
        steps(f"import {name}", lambda: importlib.import_module(name))
    steps("import lancedb (lazy)", lazy_lancedb.load)
    for name in IMPORTS[2:]:
        steps(f"import {name}", lambda: importlib.import_module(name))
    from poimen import resident
    from poimen.engine import Engine
    from poimen.lookup import warm

    engine = steps("Engine(vault) opened", lambda: Engine(vault, "bench", create=False))
    steps("ONNX session and tokenizer", engine.embedder.load)
    copies = resident.of(engine.vault.store)
    for name in ("memories", "signatures", "vectors"):
        steps(f"resident {name}", getattr(copies, f"_{name}"))
    steps("warm-up lookup", lambda: warm(engine))
    cases = [c for c in corpus.load()["cases"] if c["split"] == "dev"][:11]
    steps("first lookup (a recurrence)",
          lambda: engine.context({"signature_source": cases[0]["recurrence"]}))
    steps("10 more recurrences",
          lambda: [engine.context({"signature_source": c["recurrence"]}) for c in cases[1:]])
    steps("10 variant queries",
          lambda: [engine.context({"task": c["variant_query"]}) for c in cases[1:]])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("vault", type=Path)
    parser.add_argument("--trace", action="store_true", help="tracemalloc as well")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-rss-") as tmp:
        vault = Path(tmp) / "vault"
        shutil.copytree(args.vault, vault)
        if args.trace:
            tracemalloc.start()
        run(vault, Steps(args.trace))


if __name__ == "__main__":
    main()
