"""The C heap of a long-lived server process, where the C library is glibc (elsewhere
these calls do nothing).

glibc gives each thread that allocates under contention an arena of its own (up to 8
per core) and keeps what is freed in it. A server's threads (the engine's lane, lookup
legs, the copies' loader, the model's loader, LanceDB's runtime) each kept their own:
`mem lsp` at the 10k bench vault peaked ~60 MB lower with two arenas (by hand).
"""

from __future__ import annotations

import ctypes
import functools

M_ARENA_MAX = -8   # mallopt parameter (malloc.h)
SERVER_ARENAS = 2


@functools.lru_cache(maxsize=1)
def _libc():
    try:
        return ctypes.CDLL(None)
    except OSError:
        return None


def limit_arenas(arenas: int = SERVER_ARENAS) -> None:
    """At most `arenas` malloc arenas for threads made from now on (call at start)."""
    mallopt = getattr(_libc(), "mallopt", None)
    if mallopt is not None:
        mallopt(M_ARENA_MAX, arenas)


def trim() -> None:
    """Return the heap's free pages to the system (after a large read is released)."""
    malloc_trim = getattr(_libc(), "malloc_trim", None)
    if malloc_trim is not None:
        malloc_trim(0)
