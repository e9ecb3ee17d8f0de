"""The append-only log: the vault's only authoritative state.

Layout: `log/segments/<writer>.jsonl`, one record per line,
`{"sha": sha256(canonical(rec)), "at": ISO time, "rec": {...}}`. Each writer (a host,
by default) appends to its own segment, so segments from several machines merge by
set union. Appends take an inter-process lock (flock), write the whole line and fsync
before returning: a returned append is durable. Re-appending a record whose sha is
already present is a no-op. A torn or garbled last line (crash mid-write, a cut copy) is
cut off on open, kept in `log/torn/`, and the repair itself is logged; a bad line
anywhere else is an error naming its offset, and `salvage()` (`mem verify --repair`)
moves every such line to `log/torn/` and keeps all the good ones.
"""

from __future__ import annotations

import fcntl
import heapq
import json
import logging
import os
import socket
import threading
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Iterable, Iterator

from .canonical import canonical, record_sha, sha256_text

FILE_MODE = 0o600
DIR_MODE = 0o700



def append_durably(path: Path, data: bytes) -> None:
    """Append `data` to `path` (created user-only) in full, then fsync it."""
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, FILE_MODE)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view):]
        os.fsync(fd)
    finally:
        os.close(fd)

class LogCorrupt(RuntimeError):
    """A line in the middle of a segment cannot be read."""

    def __init__(self, segment: str, offset: int, reason: str):
        super().__init__(f"log segment {segment} is corrupt at byte {offset}: {reason}; "
                         "`mem verify --repair` keeps every good record and moves the bad "
                         "lines to log/torn/")
        self.segment, self.offset, self.reason = segment, offset, reason


@dataclass(frozen=True)
class Entry:
    sha: str
    at: str
    rec: dict
    segment: str
    offset: int
    end: int


def default_writer() -> str:
    name = os.environ.get("POIMEN_WRITER") or socket.gethostname() or "local"
    return "".join(c if c.isalnum() or c in "-_." else "_" for c in name)[:64]


def private_umask() -> None:
    """Tighten the process umask so files LanceDB and others create are user-only."""
    os.umask(os.umask(0o077) | 0o077)


def make_dir(path: Path) -> None:
    """Create a user-only folder (and its missing parents)."""
    if not path.is_dir():
        if not path.parent.is_dir():
            make_dir(path.parent)
        path.mkdir(mode=DIR_MODE, exist_ok=True)
        os.chmod(path, DIR_MODE)


def _format_at(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def _parse_line(line: bytes, segment: str, offset: int, verify: bool) -> Entry:
    end = offset + len(line)
    try:
        obj = json.loads(line)
        sha, at, rec = obj["sha"], obj["at"], obj["rec"]
    except (ValueError, KeyError, TypeError) as exc:
        raise LogCorrupt(segment, offset, f"unreadable record ({exc})") from None
    if not isinstance(rec, dict) or not isinstance(sha, str) or not isinstance(at, str):
        raise LogCorrupt(segment, offset, "record has the wrong shape")
    if verify and record_sha(rec) != sha:
        raise LogCorrupt(segment, offset, "sha does not match the record's content")
    return Entry(sha, at, rec, segment, offset, end)


def _write_synced(path: Path, data: bytes) -> None:
    with open(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, FILE_MODE), "wb") as out:
        out.write(data)
        out.flush()
        os.fsync(out.fileno())


class Log:
    def __init__(self, root: Path, writer: str | None = None):
        self.root = Path(root)
        self.segments_dir = self.root / "segments"
        self.writer = writer or default_writer()
        self._thread_lock = threading.RLock()
        self._depth = 0
        self._lock_fd: int | None = None
        self._shas: set[str] = set()
        self._read_upto: dict[str, int] = {}
        self._last_at = ""

    # -- locking -----------------------------------------------------------------
    @contextmanager
    def locked(self, follow: bool = True):
        """Hold the inter-process lock (re-entrant within this process); on first taking
        it, learn what other processes appended (unless `follow` is False)."""
        with self._thread_lock:
            if self._depth == 0:
                make_dir(self.root)
                fd = os.open(self.root / ".lock", os.O_RDWR | os.O_CREAT, FILE_MODE)
                fcntl.flock(fd, fcntl.LOCK_EX)
                self._lock_fd = fd
            self._depth += 1
            try:
                if self._depth == 1 and follow:
                    self._follow()
                yield
            finally:
                self._depth -= 1
                if self._depth == 0 and self._lock_fd is not None:
                    fcntl.flock(self._lock_fd, fcntl.LOCK_UN)
                    os.close(self._lock_fd)
                    self._lock_fd = None

    # -- opening and repair ---------------------------------------------------------
    def open(self) -> list[dict]:
        """Create the layout and repair torn tails; returns the repairs made."""
        make_dir(self.segments_dir)
        repairs = []
        with self.locked(follow=False):   # a garbled last line would stop the reading
            for path in self.segment_paths():
                repair = self._repair_tail(path)
                if repair:
                    repairs.append(repair)
            self._follow()
            for repair in repairs:
                self.append(repair)
        return repairs

    def _repair_tail(self, path: Path) -> dict | None:
        size = path.stat().st_size
        if size == 0:
            return None
        with open(path, "rb") as fh:
            fh.seek(max(0, size - 1))
            if fh.read(1) == b"\n":
                return self._cut_garbled_last_line(path, size)
            start = max(0, size - (1 << 16))
            while True:
                fh.seek(start)
                chunk = fh.read(size - start)
                cut = chunk.rfind(b"\n")
                if cut >= 0 or start == 0:
                    break
                start = max(0, start - (1 << 20))
        tail_offset = start + cut + 1 if cut >= 0 else 0
        tail = chunk[cut + 1:] if cut >= 0 else chunk
        try:
            _parse_line(tail, path.name, tail_offset, verify=True)
            complete = True
        except LogCorrupt:
            complete = False
        if complete:  # the whole record made it; only its newline is missing
            fd = os.open(path, os.O_RDWR)
            try:
                os.lseek(fd, 0, os.SEEK_END)
                os.write(fd, b"\n")
                os.fsync(fd)
            finally:
                os.close(fd)
            return self._repair_record(path, tail_offset, tail, "completed newline")
        return self._cut(path, tail_offset, tail, "cut torn tail")

    def _cut_garbled_last_line(self, path: Path, size: int) -> dict | None:
        """A last line that ends in a newline but is not a record (garbled, or written
        half and then followed by a newline) is cut like a torn tail."""
        with open(path, "rb") as fh:
            start = max(0, size - (1 << 16))
            while True:
                fh.seek(start)
                chunk = fh.read(size - start)
                cut = chunk.rfind(b"\n", 0, len(chunk) - 1)
                if cut >= 0 or start == 0:
                    break
                start = max(0, start - (1 << 20))
        offset = start + cut + 1 if cut >= 0 else 0
        line = chunk[cut + 1:]
        if not line.strip():
            return None
        try:
            _parse_line(line, path.name, offset, verify=True)
            return None
        except LogCorrupt:
            return self._cut(path, offset, line, "cut garbled last record")

    def _cut(self, path: Path, offset: int, tail: bytes, action: str) -> dict:
        """Keep `tail` in log/torn/ (fsynced), then truncate the segment to `offset`."""
        self._keep_torn(path, offset, tail)
        fd = os.open(path, os.O_RDWR)
        try:
            os.ftruncate(fd, offset)
            os.fsync(fd)
        finally:
            os.close(fd)
        return self._repair_record(path, offset, tail, action)

    def _keep_torn(self, path: Path, offset: int, data: bytes) -> None:
        make_dir(self.root / "torn")
        _write_synced(self.root / "torn" / f"{path.stem}-{offset}.bin", data)

    def _repair_record(self, path: Path, offset: int, tail: bytes, action: str) -> dict:
        self._read_upto.pop(path.name, None)
        return {"type": "log_repair", "segment": path.name, "offset": offset,
                "torn_bytes": len(tail), "torn_sha": sha256_text(tail.decode("utf-8", "replace")),
                "action": action}

    def salvage(self) -> list[dict]:
        """Move every unreadable line of every segment to log/torn/ and keep the rest
        (each segment rewritten whole, then renamed into place); the repairs are logged.
        Offsets change: the projections must be rebuilt afterwards."""
        make_dir(self.segments_dir)
        repairs = []
        with self.locked(follow=False):
            for path in self.segment_paths():
                repairs += self._salvage_segment(path)
            self._shas.clear()
            self._read_upto.clear()
            self._follow()
            for repair in repairs:
                self.append(repair)
        return repairs

    def _salvage_segment(self, path: Path) -> list[dict]:
        good, repairs, offset = [], [], 0
        with open(path, "rb") as fh:
            for line in fh:
                try:
                    _parse_line(line, path.name, offset, verify=True)
                    good.append(line if line.endswith(b"\n") else line + b"\n")
                except LogCorrupt:
                    if line.strip():
                        repairs.append((offset, line))
                offset += len(line)
        if not repairs:
            return []
        for at, line in repairs:
            self._keep_torn(path, at, line)
        tmp = path.with_suffix(".salvage")
        _write_synced(tmp, b"".join(good))
        os.replace(tmp, path)
        return [self._repair_record(path, at, line, "salvaged unreadable record")
                for at, line in repairs]

    # -- reading ------------------------------------------------------------------
    def segment_paths(self) -> list[Path]:
        if not self.segments_dir.is_dir():
            return []
        return sorted(self.segments_dir.glob("*.jsonl"))

    def read_segment(self, path: Path, start: int = 0, verify: bool = False,
                     skip_bad: bool = False) -> Iterator[Entry]:
        """Complete lines of one segment from byte `start`; a torn tail is not yielded.
        An unreadable line raises LogCorrupt, or with `skip_bad` is passed over with a
        warning that names it and the command that salvages the rest."""
        with open(path, "rb") as fh:
            fh.seek(start)
            offset = start
            for line in fh:
                if not line.endswith(b"\n"):
                    return
                if line.strip():
                    try:
                        yield _parse_line(line, path.name, offset, verify)
                    except LogCorrupt as exc:
                        if not skip_bad:
                            raise
                        logging.getLogger("poimen.log").warning("poimen: %s", exc)
                offset += len(line)

    def entries(self, verify: bool = False, skip_bad: bool = False) -> list[Entry]:
        """Every record, merged across segments by time (then segment, then position)."""
        streams = [self.read_segment(p, verify=verify, skip_bad=skip_bad)
                   for p in self.segment_paths()]
        return list(heapq.merge(*streams, key=lambda e: (e.at, e.segment, e.offset)))

    def entries_after(self, offsets: dict[str, int]) -> tuple[list[Entry], dict[str, int]]:
        """Records past `offsets` (segment -> byte), and the offsets after them; unreadable
        lines are passed over with a warning (`entries` and `mem verify` report them)."""
        new_offsets = dict(offsets)
        found = sorted(self._after(offsets, new_offsets),
                       key=lambda e: (e.at, e.segment, e.offset))
        return found, new_offsets

    def _after(self, offsets: dict[str, int], reached: dict[str, int]) -> Iterator[Entry]:
        """Records past `offsets`, segment by segment, as they are read (unreadable lines
        passed over); `reached[segment]` is set to where each segment's reading ended."""
        for path in self.segment_paths():
            start = offsets.get(path.name, 0)
            if path.stat().st_size <= start:
                continue
            end = start
            for entry in self.read_segment(path, start, skip_bad=True):
                yield entry
                end = entry.end
            reached[path.name] = end

    def at_record_start(self, segment: str, offset: int) -> bool:
        """Whether `offset` is where a line of `segment` starts (or its end)."""
        path = self.segments_dir / segment
        if offset == 0:
            return path.exists()
        try:
            with open(path, "rb") as fh:
                fh.seek(offset - 1)
                return fh.read(1) == b"\n"
        except OSError:
            return False

    def sizes(self) -> dict[str, int]:
        return {p.name: p.stat().st_size for p in self.segment_paths()}

    def _follow(self) -> None:
        """Learn the shas other processes appended since we last looked. Streamed: at
        open the whole log is read, and holding its records at once cost ~100 MB of
        resident memory at the 10k bench vault, never given back to the system."""
        own = f"{self.writer}.jsonl"
        for entry in self._after(self._read_upto, self._read_upto):
            self._shas.add(entry.sha)
            if entry.segment == own:
                self._last_at = max(self._last_at, entry.at)

    # -- appending ------------------------------------------------------------------
    def contains(self, sha: str) -> bool:
        with self.locked():
            return sha in self._shas

    def append(self, rec: dict) -> tuple[str, bool]:
        """Append one record; returns (sha, appended). Durable when it returns."""
        return self.append_many([rec])[0]

    def append_many(self, recs: Iterable[dict]) -> list[tuple[str, bool]]:
        return [(sha, new) for sha, new, _ in self.append_timed(recs)]

    def append_timed(self, recs: Iterable[dict], span: list | None = None
                     ) -> list[tuple[str, bool, str | None]]:
        """`append_many`, with each new record's `at` (None for one already held). When
        lines were written, `span` (if given) receives (segment, its size before, after)."""
        results = []
        with self.locked():
            make_dir(self.segments_dir)
            path = self.segments_dir / f"{self.writer}.jsonl"
            lines = []
            for rec in recs:
                sha = record_sha(rec)
                if sha in self._shas:
                    results.append((sha, False, None))
                    continue
                at = self._next_at()
                lines.append(canonical({"at": at, "rec": rec, "sha": sha}) + "\n")
                self._shas.add(sha)
                results.append((sha, True, at))
            if lines:
                repair = self._repair_tail(path) if path.exists() else None
                if repair:  # a writer died mid-line since we opened: never glue onto it
                    sha = record_sha(repair)
                    self._shas.add(sha)
                    lines.insert(0, canonical({"at": self._next_at(), "rec": repair,
                                               "sha": sha}) + "\n")
                data = "".join(lines).encode("utf-8")
                append_durably(path, data)
                size = path.stat().st_size
                if self._read_upto.get(path.name, 0) + len(data) == size:
                    self._read_upto[path.name] = size
                if span is not None:
                    span[:] = [path.name, size - len(data), size]
        return results

    def _next_at(self) -> str:
        now = _format_at(datetime.now(timezone.utc))
        if now <= self._last_at:
            last = datetime.strptime(self._last_at, "%Y-%m-%dT%H:%M:%S.%fZ")
            now = _format_at(last + timedelta(microseconds=1))
        self._last_at = now
        return now
