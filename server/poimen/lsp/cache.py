"""Answers cached per failure, and the debounced, bounded intake that fills them.

Inputs arrive in floods (diagnostics are republished on every keystroke). The intake
keeps at most one pending job per key (a uri, a terminal command): a newer input for
the same key replaces the older one and restarts its quiet period. At most `limit`
keys wait at once; past that the oldest waiting job is dropped (and counted), so
memory stays bounded however fast the editor sends.
"""

from __future__ import annotations

import asyncio
import logging
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any, Awaitable, Callable, Generic, Hashable, TypeVar

log = logging.getLogger(__name__)

V = TypeVar("V")


class AnswerCache(Generic[V]):
    """Least-recently-used map from a failure key to its answer."""

    def __init__(self, limit: int = 512):
        self.limit = limit
        self._items: OrderedDict[str, V] = OrderedDict()

    def get(self, key: str) -> V | None:
        value = self._items.get(key)
        if value is not None:
            self._items.move_to_end(key)
        return value

    def put(self, key: str, value: V) -> None:
        self._items[key] = value
        self._items.move_to_end(key)
        while len(self._items) > self.limit:
            self._items.popitem(last=False)

    def values(self) -> list[V]:
        return list(self._items.values())

    def clear(self) -> None:
        self._items.clear()

    def __contains__(self, key: str) -> bool:
        return key in self._items

    def __len__(self) -> int:
        return len(self._items)


@dataclass
class _Pending:
    due: float
    job: Any
    done: asyncio.Future = field(default_factory=lambda: asyncio.get_running_loop().create_future())


class Intake:
    """Runs `run(job)` for the latest job per key, after `delay` s of quiet, one at a time."""

    def __init__(self, run: Callable[[Any], Awaitable[None]], delay: float = 0.3,
                 limit: int = 256):
        self._run = run
        self.delay = delay
        self.limit = limit
        self.dropped = 0
        self._pending: OrderedDict[Hashable, _Pending] = OrderedDict()
        self._running: dict[Hashable, asyncio.Future] = {}
        self._wake: asyncio.Event | None = None
        self._worker: asyncio.Task | None = None

    def submit(self, key: Hashable, job: Any) -> None:
        loop = asyncio.get_running_loop()
        due = loop.time() + self.delay
        previous = self._pending.pop(key, None)
        entry = _Pending(due, job)
        if previous is not None:
            entry.done = previous.done  # whoever waits for the old job waits for this one
        self._pending[key] = entry
        while len(self._pending) > self.limit:
            old_key, old = self._pending.popitem(last=False)
            self.dropped += 1
            old.done.set_result(False)
            log.warning("intake full (%d): dropped the input for %s", self.limit, old_key)
        self._start()

    async def settle(self, key: Hashable) -> None:
        """Run `key`'s waiting job now (no quiet period) and wait for it, or for the running one."""
        entry = self._pending.get(key)
        if entry is not None:
            entry.due = 0.0
            self._start()
            await asyncio.shield(entry.done)
        elif key in self._running:
            await asyncio.shield(self._running[key])

    def waiting(self) -> int:
        return len(self._pending)

    def _start(self) -> None:
        if self._wake is None:
            self._wake = asyncio.Event()
        self._wake.set()
        if self._worker is None or self._worker.done():
            self._worker = asyncio.ensure_future(self._work())

    async def _work(self) -> None:
        loop = asyncio.get_running_loop()
        assert self._wake is not None
        while True:
            self._wake.clear()
            if not self._pending:
                await self._wake.wait()
                continue
            key, entry = min(self._pending.items(), key=lambda kv: kv[1].due)
            wait = entry.due - loop.time()
            if wait > 0:
                try:
                    await asyncio.wait_for(self._wake.wait(), wait)
                except asyncio.TimeoutError:
                    pass
                continue
            del self._pending[key]
            self._running[key] = entry.done
            try:
                await self._run(entry.job)
            except Exception:  # one bad input never stops the intake
                log.exception("analysis of %s failed", key)
            finally:
                self._running.pop(key, None)
                if not entry.done.done():
                    entry.done.set_result(True)
