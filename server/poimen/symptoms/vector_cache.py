"""The symptom catalogue's embeddings, cached on disk between processes.

Embedding the whole catalogue takes tens of seconds on a small CPU, and every process
that projects symptoms needs it. The vectors are kept in the user cache folder
(`$POIMEN_CACHE_DIR`, else `$XDG_CACHE_HOME/poimen`, else `~/.cache/poimen`), one file
per (catalogue texts, embedder model id). A file is used only if its key, shape and
dtype match and a probe text embeds bit-equal to the vector stored with it (so a
changed model file, runtime or CPU recomputes instead of mixing vectors); anything
else, a missing or corrupt file included, is recomputed and rewritten atomically.
The cache is an optimisation only: when it cannot be read or written, vectors are
computed as before.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from pathlib import Path

import numpy as np

from ..cache_dir import cache_dir

FORMAT = "poimen-catalogue-vectors-v1"
KEEP = 8  # cache files kept, most recently used first (catalogue edits make new ones)
PROBE = "error: the catalogue cache probe failed to resolve module 'poimen' (exit 1)"


def cache_key(texts: list[str], model_id: str) -> str:
    body = json.dumps([FORMAT, model_id, texts], ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(body.encode("utf-8")).hexdigest()


def catalogue_vectors(texts: list[str], embedder, folder: Path | None = None) -> np.ndarray:
    """`embedder.embed(texts)`, from the cache when it holds this embedder's own vectors."""
    key = cache_key(texts, embedder.model_id)
    path = (folder or cache_dir()) / f"catalogue-{key[:32]}.npz"
    probe = embedder.embed([PROBE])[0]
    vectors = _load(path, key, len(texts), probe)
    if vectors is None:
        vectors = embedder.embed(texts)
        _save(path, key, vectors, probe)
        _prune(path.parent)
    else:
        try:
            os.utime(path)  # recently used: kept by _prune
        except OSError:
            pass
    return vectors


def _load(path: Path, key: str, rows: int, probe: np.ndarray) -> np.ndarray | None:
    try:
        with np.load(path, allow_pickle=False) as data:
            stored_key, vectors, stored_probe = str(data["key"]), data["vectors"], data["probe"]
    except Exception:  # noqa: BLE001 - missing, truncated or not ours: recompute
        return None
    if (stored_key != key or vectors.dtype != np.float32 or vectors.shape != (rows, len(probe))
            or stored_probe.dtype != np.float32 or not np.array_equal(stored_probe, probe)
            or not np.isfinite(vectors).all()):
        return None
    return vectors


def _save(path: Path, key: str, vectors: np.ndarray, probe: np.ndarray) -> None:
    try:
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=path.name + ".", suffix=".tmp", dir=path.parent)
        try:
            with os.fdopen(fd, "wb") as fh:
                np.savez(fh, key=np.array(key), vectors=vectors, probe=probe)
                fh.flush()
                os.fsync(fh.fileno())
            os.replace(tmp, path)
        except BaseException:
            os.unlink(tmp)
            raise
    except OSError:
        pass  # read-only or full cache folder: the vectors are simply not kept


def _prune(folder: Path) -> None:
    """Drop all but the KEEP most recently used cache files."""
    try:
        files = sorted(folder.glob("catalogue-*.npz"), key=lambda f: f.stat().st_mtime_ns,
                       reverse=True)
        for old in files[KEEP:]:
            old.unlink()
    except OSError:
        pass  # another process pruned first, or the folder is not ours to change
