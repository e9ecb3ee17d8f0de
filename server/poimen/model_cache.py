"""The embedding model's optimised graph, kept on disk so that a process loads it ready.

ONNX Runtime optimises the int8 model at every load, folding its weights into float32
copies on the heap. Saved once, with its weights in a file of their own, the optimised
graph loads with every optimisation off and maps its weights from that file: at the 10k
bench vault the session took 0.2 s and +59 MB instead of 0.7 s and +165 MB
(docs/BENCHMARKS.md, run L3).

A copy is kept only when it gives the very vectors the model gives: when it is written,
one probe text is run through both and the copy is dropped on any difference. Copies
are keyed by the model file, the runtime's version and the CPU (an optimised graph may
use the instructions of the machine that made it), under `models/` in the user's cache
folder (`poimen/cache_dir.py`); `POIMEN_MODEL_CACHE=off` turns it off. A copy that
cannot be written or read is only a slower start, never an error.
"""

from __future__ import annotations

import hashlib
import logging
import os
import platform
import shutil
from pathlib import Path
from typing import Callable

import numpy as np

from .cache_dir import cache_dir

log = logging.getLogger("poimen.embed")

MODEL = "model.onnx"
WEIGHTS = "model.weights"


def cache_root() -> Path | None:
    """Where optimised models are kept, or None when the cache is turned off."""
    if os.environ.get("POIMEN_MODEL_CACHE", "").strip().lower() in ("off", "0", "no"):
        return None
    return cache_dir()


def _cpu() -> str:
    """The CPU's model name and feature flags (what an optimised graph may depend on)."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as fh:
            lines = [line for line in fh if line.startswith(("model name", "flags"))]
    except OSError:
        return platform.processor()
    return "".join(sorted(set(lines)))


def folder_for(model_path: Path, runtime_version: str) -> Path | None:
    """The folder that holds (or will hold) this model's optimised copy."""
    root = cache_root()
    if root is None:
        return None
    stat = model_path.stat()
    key = "\n".join([str(model_path.resolve()), str(stat.st_size), str(stat.st_mtime_ns),
                     runtime_version, platform.machine(), _cpu()])
    return root / "models" / hashlib.sha256(key.encode()).hexdigest()[:24]


def load(ort, model_path: Path, options: Callable[[], object],
         probe: Callable[[object], object]):
    """An inference session for `model_path`: from its optimised copy when one is kept,
    else optimised now, saving a copy that `probe` (session → output) shows to agree."""
    folder = folder_for(model_path, ort.__version__)
    if folder is None:
        return _session(ort, model_path, options, optimise=True)
    if (folder / MODEL).is_file():
        try:
            return _session(ort, folder / MODEL, options, optimise=False)
        except Exception as exc:  # noqa: BLE001 - a bad copy only means optimising again
            log.warning("optimised model copy unusable (%s); optimising the model", exc)
            shutil.rmtree(folder, ignore_errors=True)
    scratch = folder.with_name(f"{folder.name}.{os.getpid()}.tmp")
    try:
        scratch.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        log.info("optimised model not kept: %s", exc)
        return _session(ort, model_path, options, optimise=True)
    try:
        session = _session(ort, model_path, options, optimise=True, save=scratch / MODEL)
        _keep(ort, session, scratch, folder, options, probe)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return session


def _session(ort, path: Path, options: Callable[[], object], optimise: bool,
             save: Path | None = None):
    opts = options()
    if not optimise:
        opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    if save is not None:
        opts.optimized_model_filepath = str(save)
        opts.add_session_config_entry(
            "session.optimized_model_external_initializers_file_name", WEIGHTS)
        opts.add_session_config_entry(
            "session.optimized_model_external_initializers_min_size_in_bytes", "1024")
    return ort.InferenceSession(str(path), opts, providers=["CPUExecutionProvider"])


def _keep(ort, session, scratch: Path, folder: Path, options, probe) -> None:
    """Move the saved copy into place if it runs and agrees with `session` bit for bit."""
    try:
        copy = _session(ort, scratch / MODEL, options, optimise=False)
        same = np.array_equal(np.asarray(probe(session)), np.asarray(probe(copy)))
        del copy   # its weights are mapped from the scratch folder about to be renamed
        if not same:
            log.warning("optimised model copy gives other vectors; not kept")
            return
        scratch.rename(folder)
    except OSError as exc:   # another process kept one first, or the disk said no
        log.info("optimised model not kept: %s", exc)
    except Exception as exc:  # noqa: BLE001 - the copy is an optimisation only
        log.warning("optimised model copy failed its check (%s); not kept", exc)
