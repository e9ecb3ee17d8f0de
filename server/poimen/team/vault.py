"""A team vault: the log on an object store, a local copy per machine.

The local copy is an ordinary `Vault` folder under `POIMEN_STATE_DIR` (default
`$XDG_CACHE_HOME/poimen`), `team/<bucket>-<prefix>-<hash>/`. Its log holds this
machine's own segment (every write is durable there first, so a write is acknowledged
even when the store is unreachable) and `pulled.<writer>.jsonl` segments with the other
writers' records; its LanceDB projections answer every lookup without the network.
`push.json` and `pull.json` hold the watermarks (pushed bytes per own segment, last
chunk per writer), `sync.json` the outcome of the last sync. A sync (pull, then push)
runs when the vault opens, every `POIMEN_SYNC_INTERVAL_S` seconds in the background
(default 60; 0 turns it off; what it pulls is applied there too, so lookups never wait
for it) and on `mem sync`; a write is pushed right after it is acknowledged, by the
background thread, which finishes its push before the process exits.
"""

from __future__ import annotations

import atexit
import hashlib
import logging
import os
import re
import threading
from datetime import datetime, timezone
from pathlib import Path

from ..canonical import canonical
from ..log import append_durably, default_writer
from ..vault import Vault, VaultError
from .objects import Layout, TeamStoreError, open_store
from .sync import PULLED, fetch, parse_chunk, pull, push, read_json, unpushed, write_json

FORMAT = {"format": "poimen-team-vault", "version": 1,
          "log": "log/<writer>/<seq>.jsonl, create-only chunks of canonical log lines"}
EXIT_PUSH_TIMEOUT_S = 60.0
SHA = re.compile(r"[0-9a-f]{64}")
log = logging.getLogger("poimen.team")


def state_dir() -> Path:
    if os.environ.get("POIMEN_STATE_DIR"):
        return Path(os.environ["POIMEN_STATE_DIR"]).expanduser()
    cache = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(cache) / "poimen"


def local_copy(store: Layout) -> Path:
    loc = store.location
    name = re.sub(r"[^A-Za-z0-9_.-]", "_", f"{loc.bucket}-{loc.prefix}".rstrip("-"))[:60]
    digest = hashlib.sha256(f"{loc.uri}\n{store.endpoint}".encode()).hexdigest()[:12]
    return state_dir() / "team" / f"{name}-{digest}"


def sync_interval() -> float:
    raw = os.environ.get("POIMEN_SYNC_INTERVAL_S", "60")
    try:
        return max(0.0, float(raw))
    except ValueError:
        raise VaultError(f"POIMEN_SYNC_INTERVAL_S must be a number of seconds, not {raw!r}") \
            from None


def _now() -> str:
    return datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


class TeamVault(Vault):
    def __init__(self, uri: str, embed, model_id: str = "", reproject=None,
                 create: bool = True):
        try:
            self.remote = open_store(uri)
        except TeamStoreError as exc:
            raise VaultError(str(exc)) from None
        self.uri = self.remote.uri
        self._sync_lock = threading.Lock()
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._applying = threading.Event()   # the background thread is applying a pull
        self._thread: threading.Thread | None = None
        self._missing: set[str] = set()   # shas read, not found even after a sync
        super().__init__(local_copy(self.remote), embed, model_id, reproject, create=True)
        self.opened = self.sync(create=create)   # what the sync at open did
        self.interval = sync_interval()
        if self.interval > 0:
            self._start_thread()
        atexit.register(self.close)

    # -- files of the local copy ---------------------------------------------------------
    def _file(self, name: str) -> Path:
        return self.path / name

    # -- syncing ------------------------------------------------------------------------
    def sync(self, create: bool = False, apply: bool = True) -> dict:
        """Pull the other writers' records, push ours, apply them to the projections
        (unless `apply` is false: the next read applies); never raises for the network."""
        with self._sync_lock:
            result = {"at": _now(), "ok": True, "pulled": 0, "pushed_chunks": 0,
                      "problems": []}
            try:
                self._check_marker(create)
                result["pulled"], result["problems"] = pull(
                    self.log, self.remote, self._file("pull.json"))
                result["pushed_chunks"] = self._push()
            except TeamStoreError as exc:
                result.update(ok=False, error=str(exc))
            write_json(self._file("sync.json"), result)
            self._missing.clear()
        if apply:
            self.catch_up()
        return result

    def fetch_missing(self, sha: str) -> bool:
        """A read of a sha this copy lacks (another machine served a teammate's record
        not pulled here yet): one sync, then wait for what it pulled (or the background
        thread is applying) to be applied. A sha still missing is not fetched again
        until the next sync."""
        if not SHA.fullmatch(sha) or sha in self._missing:
            return False
        if not self.log.contains(sha):
            self.sync(apply=False)
        Vault.catch_up(self)   # under the log lock: waits for an apply under way
        if self.log.contains(sha):
            return True
        self._missing.add(sha)
        return False

    def _push(self) -> int:
        return push(self.log, self.remote, self._file("push.json"), self._file(".push.lock"),
                    self._file("pull.json"))

    def _check_marker(self, create: bool) -> None:
        team = read_json(self._file("team.json"))
        if team.get("marker"):
            return
        if not self.remote.has_marker():
            if not create:
                raise VaultError(f"no team vault at {self.uri} (run `mem init` first)")
            self.remote.create_marker(canonical(FORMAT).encode())
        write_json(self._file("team.json"), {"uri": self.uri, "marker": True})

    def commit(self, records):
        return self._pushed(super().commit(records))

    def acknowledge(self, records):
        return self._pushed(super().acknowledge(records))

    def _pushed(self, results):
        if any(new for _, new in results):
            self._start_thread()
            self._wake.set()
        return results

    def _start_thread(self) -> None:
        if self._thread is None or not self._thread.is_alive():
            self._thread = threading.Thread(target=self._loop, name="poimen-team-sync",
                                            daemon=True)
            self._thread.start()

    def _loop(self) -> None:
        while not self._stop.is_set():
            woke = self._wake.wait(self.interval or None)
            self._wake.clear()
            if self._stop.is_set():
                break
            if woke:
                self._push_quietly()
            elif self.sync(apply=False)["pulled"]:
                self._apply_quietly()
        self._push_quietly()   # what was written before close goes up before exit

    def _apply_quietly(self) -> None:
        """Apply pulled records now, so no lookup waits for it; at the interpreter's exit
        the embedder may already be shut down: the next read applies them instead."""
        self._applying.set()
        try:
            self.catch_up()
        except Exception as exc:  # noqa: BLE001 - the log holds them; nothing is lost
            log.info("team: applying pulled records deferred (%s)", type(exc).__name__)
        finally:
            self._applying.clear()

    def catch_up(self, reading: bool = False) -> int:
        """As for a folder; while the background thread applies a pull, a read answers
        from the tables as they are instead of waiting for it (writes still wait)."""
        if self._applying.is_set() and threading.current_thread() is not self._thread:
            self.store.refresh()
            return 0
        return super().catch_up(reading)

    def _push_quietly(self) -> None:
        if not read_json(self._file("sync.json")).get("ok", True):
            if self.sync(apply=False)["pulled"]:   # the store was away: a whole sync
                self._apply_quietly()
            return
        with self._sync_lock:
            try:
                self._push()
            except TeamStoreError as exc:
                last = read_json(self._file("sync.json"))
                last.update(ok=False, error=str(exc), at=_now())
                write_json(self._file("sync.json"), last)

    def close(self) -> None:
        """Stop the background sync after pushing what is pending (bounded)."""
        self._stop.set()
        self._wake.set()
        if self._thread is not None:
            self._thread.join(EXIT_PUSH_TIMEOUT_S)

    def sync_note(self) -> str | None:
        """The lookup's `degraded` note when the last sync could not reach the store."""
        last = read_json(self._file("sync.json"))
        if last and not last.get("ok", True):
            return ("team: the object store was unreachable at the last sync; "
                    "answered from this machine's copy")
        return None

    # -- the vault's own checks, on the union --------------------------------------------
    def rebuild(self, progress=None, batch: int = 256):
        self.sync()
        return super().rebuild(progress, batch)

    def verify(self) -> list[str]:
        """The local checks, plus: every chunk is readable and valid, every record in the
        store is in this copy, everything this machine pushed is in the store."""
        result = self.sync()
        problems = super().verify()
        if not result["ok"]:
            return problems + [result["error"]]
        problems += result["problems"]
        try:
            remote = self._remote_shas(problems)
        except TeamStoreError as exc:
            return problems + [str(exc)]
        local = {e.sha for e in self.log.entries()}
        for sha in sorted(remote - local):
            problems.append(f"record {sha} is in the store but not in this copy")
        pushed = read_json(self._file("push.json")).get("segments", {})
        for entry in self.log.entries():
            if not entry.segment.startswith(PULLED) and entry.end <= pushed.get(
                    entry.segment, 0) and entry.sha not in remote:
                problems.append(f"record {entry.sha} was pushed but is not in the store")
        if unpushed(self.log, read_json(self._file("push.json"))):
            problems.append("records written here are not pushed yet")
        return problems

    def _remote_shas(self, problems: list[str]) -> set[str]:
        found, bad = fetch(self.remote, {})
        problems += bad
        shas = set()
        for writer, chunks in found.items():
            for seq, data in chunks:
                try:
                    shas.update(sha for sha, _ in parse_chunk(
                        data, self.remote.chunk_key(writer, seq)))
                except TeamStoreError as exc:
                    problems.append(str(exc))
        return shas

    def team_stats(self) -> dict:
        """Writers, chunks in the store (when reachable) and how far this copy has pulled."""
        marks = read_json(self._file("pull.json")).get("writers", {})
        writers = {w: {"pulled_chunks": n + 1} for w, n in marks.items()}
        reachable = True
        try:
            for writer in self.remote.writers():
                writers.setdefault(writer, {"pulled_chunks": 0})["store_chunks"] = len(
                    self.remote.chunks(writer))
        except TeamStoreError:
            reachable = False
        return {"uri": self.uri, "writer": default_writer(), "local_copy": str(self.path),
                "reachable": reachable, "writers": writers,
                "unpushed_bytes": unpushed(self.log, read_json(self._file("push.json"))),
                "last_sync": read_json(self._file("sync.json"))}

    def adopt(self, folder: Path) -> int:
        """Copy a folder vault's log into this copy (times and shas kept; pushed by the
        next sync); returns the records new to this vault."""
        from ..log import Log

        source = Path(folder).expanduser() / "log"
        if not (source / "segments").is_dir():
            raise VaultError(f"no vault at {folder}")
        entries = Log(source).entries(verify=True)
        with self.log.locked():
            lines = [(canonical({"at": e.at, "rec": e.rec, "sha": e.sha}) + "\n").encode()
                     for e in entries if not self.log.contains(e.sha)]
            if lines:
                append_durably(self.log.segments_dir / f"{self.log.writer}.import.jsonl",
                             b"".join(lines))
        return len(lines)
