"""Occurrence records acknowledged on the answer path and applied to the tables later.

A lookup that sees a known signature appends its occurrence records to the log (durable,
and a retry with the same request id is the same record, held once) and goes on; a
background thread applies what is pending to the tables and runs the vault's
housekeeping, so no lookup waits for either. It gathers what arrives within APPLY_AFTER_S
into one write: each write is a LanceDB commit (~15 ms of CPU) and a new table version
every copy of the table reads again, and back-to-back lookups (an editor's diagnostics,
a hover after them) would otherwise pay one each beside the next answer. `wait()` and
the interpreter's exit apply at once. Until a record is applied, `pending()`
holds it for seen counts (`Store.occurrence_times` counts a record once, whether the
table holds it yet or not). The log stays the truth: records a process leaves
unapplied at its end are applied by the next `catch_up`.
"""

from __future__ import annotations

import atexit
import logging
import threading

EXIT_WAIT_S = 10.0   # at interpreter exit, how long pending records may still be applied
APPLY_AFTER_S = 1.0  # how long the background apply gathers records before writing them
_running: dict[threading.Thread, "Deferred"] = {}   # background applies, by thread
log = logging.getLogger("poimen.vault")


class Deferred:
    def __init__(self, vault):
        self.vault = vault
        self._lock = threading.Lock()
        self._pending: dict[str, tuple[str, str]] = {}   # sha -> (sig_sha, at)
        self._thread: threading.Thread | None = None
        self._now = threading.Event()   # apply without waiting out APPLY_AFTER_S
        self._appended: tuple[str, int, int] | None = None   # segment, run start, end

    def acknowledge(self, records: list[dict]) -> list[tuple[str, bool]]:
        """Append occurrence records durably; (sha, newly appended) per record. They are
        applied once `start()` is called (a lookup calls it after its answer, so the
        apply does not take CPU from the answer)."""
        span: list = []
        results = self.vault.log.append_timed(records, span)
        with self._lock:
            for rec, (sha, new, at) in zip(records, results):
                if new:
                    self._pending[sha] = (rec["sig_sha"], at)
            if span:
                name, before, after = span
                held = self._appended
                self._appended = (name, held[1] if held and held[0] == name
                                  and held[2] == before else before, after)
        return [(sha, new) for sha, new, _ in results]

    def only_own(self, sizes: dict[str, int], mark: dict[str, int]) -> bool:
        """Whether all the log holds past the watermark `mark` is occurrences this
        process acknowledged and has yet to apply: lines it appended in one unbroken
        run at the end of its segment, every other segment applied."""
        with self._lock:
            if not self._pending or self._appended is None:
                return False
            name, start, end = self._appended
        return (sizes.get(name) == end and start <= mark.get(name, 0) <= end and all(
            size == mark.get(other, 0) for other, size in sizes.items() if other != name))

    def start(self) -> None:
        """Apply what is pending on the background thread (started if need be)."""
        with self._lock:
            if self._pending and self._thread is None:
                self._thread = threading.Thread(target=self._run, name="poimen-apply",
                                                daemon=True)
                _running[self._thread] = self
                self._thread.start()

    def wait(self, timeout: float | None = None) -> bool:
        """Until the background apply has ended, applying at once (what was pending is in
        the tables, or waits for the next catch_up); False if it still runs after
        `timeout` seconds."""
        with self._lock:
            thread = self._thread
            if thread is not None:
                self._now.set()
        if thread is not None:
            thread.join(timeout)
        return thread is None or not thread.is_alive()

    def pending(self) -> dict[str, tuple[str, str]]:
        """Acknowledged occurrences maybe not in the table yet: sha -> (sig_sha, at)."""
        with self._lock:
            return dict(self._pending)

    def _run(self) -> None:
        try:
            while True:
                self._now.wait(APPLY_AFTER_S)
                if not self._apply_once():
                    break
        finally:
            _running.pop(threading.current_thread(), None)

    def _apply_once(self) -> bool:
        """Apply what is pending; False when the thread should end (nothing left, or
        the log is not all applied: the records wait for the next catch_up)."""
        with self._lock:
            applying = list(self._pending)
            if not applying:
                self._thread = None
                self._now.clear()
                return False
        vault, done = self.vault, False
        try:
            with vault.log.locked():
                vault.catch_up()
                done = vault.log.sizes() == vault._watermark()
                if done:
                    vault._housekeeping(len(applying))
        except Exception as exc:  # noqa: BLE001 - the log holds them; nothing is lost
            log.warning("poimen: occurrences not applied yet (%s: %s)",
                        type(exc).__name__, exc)
        with self._lock:
            if done:
                for sha in applying:
                    self._pending.pop(sha, None)
            else:
                self._thread = None
                self._now.clear()
        return done


@atexit.register
def _drain() -> None:
    for thread, deferred in list(_running.items()):
        deferred._now.set()
        thread.join(EXIT_WAIT_S)
