"""The user's cache folder for poimen: what can be rebuilt (catalogue vectors, the
optimised model). `$POIMEN_CACHE_DIR`, else `$XDG_CACHE_HOME/poimen`, else
`~/.cache/poimen`."""

from __future__ import annotations

import os
from pathlib import Path


def cache_dir() -> Path:
    if os.environ.get("POIMEN_CACHE_DIR"):
        return Path(os.environ["POIMEN_CACHE_DIR"]).expanduser()
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "poimen"
