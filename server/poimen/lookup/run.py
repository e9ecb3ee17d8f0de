"""One lookup in progress: the request, the engine's parts, its legs, notes and timings.

Every leg runs under a timeout on a thread of one long-lived pool (`legs()`, threads
started once, not per lookup); a failing leg answers empty with a `degraded` note, never
an error (`Settings.fault_injection` injects failures in tests).
"""

from __future__ import annotations

import threading
import time
from concurrent.futures import ThreadPoolExecutor, TimeoutError as LegTimeout
from typing import Callable

import numpy as np

from .. import budget as budgeting
from .. import resident
from ..config import DEFAULT_LEG_TIMEOUT_S
from .request import Request


LEG_THREADS = 32   # legs of concurrent lookups; a timed-out leg keeps its thread a while
_pool: ThreadPoolExecutor | None = None
_pool_lock = threading.Lock()


def legs() -> ThreadPoolExecutor:
    """The process's leg pool, started on first use (idle threads are reused)."""
    global _pool
    with _pool_lock:
        if _pool is None:
            _pool = ThreadPoolExecutor(max_workers=LEG_THREADS, thread_name_prefix="poimen-leg")
        return _pool


class LegFault(RuntimeError):
    """A failure injected into a leg through `Settings.fault_injection`."""


class Run:
    def __init__(self, engine, req: Request):
        self.engine, self.req = engine, req
        self.store = resident.of(engine.vault.store)
        self.settings = engine.settings
        self.faults = dict(getattr(self.settings, "fault_injection", {}) or {})
        self.timeout = float(getattr(self.settings, "leg_timeout_s", DEFAULT_LEG_TIMEOUT_S))
        self.degraded: list[str] = []
        self.latency: dict[str, float] = {}
        self.vector: np.ndarray | None = None
        self.query = ""          # what is embedded (task + signature excerpts)
        self.fulltext = ""       # what BM25 is asked (task + the whole paste)
        self.signatures: list = []
        self.source = ""          # the redacted signature_source
        self.count: budgeting.TokenCounter | None = None
        self._futures: list = []

    def fault(self, leg: str) -> None:
        mode = self.faults.get(leg)
        if not mode:
            return
        if mode.startswith("delay:"):
            time.sleep(float(mode.split(":", 1)[1]))
        else:
            raise LegFault(f"injected fault in {leg}")

    def leg(self, name: str, fn: Callable, empty):
        """Run `fn` as a leg on the leg pool; returns a getter that waits (with the
        timeout)."""
        start = time.perf_counter()

        def body():
            self.fault(name)
            return fn()

        future = self.start(body)

        def result(timeout: float | None = None):
            limit = self.timeout if timeout is None else timeout
            try:
                return future.result(timeout=limit)
            except LegTimeout:
                self.degraded.append(f"{name}: timed out after {limit:g}s")
            except Exception as exc:  # noqa: BLE001 - a leg's failure is never the caller's
                self.degraded.append(f"{name}: failed ({type(exc).__name__}: {exc})")
            finally:
                self.latency[name] = round((time.perf_counter() - start) * 1000, 1)
            return empty

        return result

    def start(self, fn: Callable, *args):
        """`fn(*args)` on the leg pool, for a leg to wait on (its failure is that leg's)."""
        future = legs().submit(fn, *args)
        self._futures.append(future)
        return future

    def cancel(self) -> None:
        """Drop the legs not started yet (tier 3 when its answer is not taken)."""
        for future in self._futures:
            future.cancel()
