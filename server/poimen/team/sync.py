"""Moving log records between this machine's copy and the object store.

Push: the complete lines this machine's own segments hold past their pushed offset go
up as create-only chunks, `log/<writer>/<seq>.jsonl`, each the exact bytes of whole
lines. If the chunk's number is taken (another machine under the same writer name, or
our own put whose acknowledgement a crash lost), the existing object is read: our own
bytes (or a prefix of them) count as pushed, anything else moves us to the next free
number. Nothing is ever overwritten.

Pull: every writer's chunks past this machine's watermark for that writer are fetched,
each line checked (valid record, sha matches its content), and the records this copy
does not hold yet are appended to the local segment `pulled.<writer>.jsonl`, fsynced,
before the watermark moves. The vault is the union of all chunks; a record met twice
(the same lesson written on two machines, a retried occurrence) is kept once.
"""

from __future__ import annotations

import fcntl
import json
import os
import re
from contextlib import contextmanager
from pathlib import Path

from ..canonical import canonical, record_sha
from ..log import FILE_MODE, Log, append_durably
from .objects import Layout, TeamStoreError

PULLED = "pulled."                 # local segments holding other writers' records
CHUNK_BYTES = 4 * 1024 * 1024       # a chunk's size before the next one starts
WRITER_NAME = re.compile(r"^[A-Za-z0-9_.-]{1,64}$")


class ChunkCorrupt(TeamStoreError):
    """A chunk holds a line that is not a valid record."""


def read_json(path: Path) -> dict:
    try:
        return json.loads(path.read_text())
    except (FileNotFoundError, ValueError):
        return {}


def write_json(path: Path, value: dict) -> None:
    """Replace a small state file atomically and durably."""
    tmp = path.with_name(path.name + ".tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, FILE_MODE)
    with open(fd, "w") as fh:
        fh.write(canonical(value))
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(tmp, path)


@contextmanager
def file_lock(path: Path):
    fd = os.open(path, os.O_RDWR | os.O_CREAT, FILE_MODE)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        fcntl.flock(fd, fcntl.LOCK_UN)
        os.close(fd)


def own_segments(log: Log) -> list[Path]:
    return [p for p in log.segment_paths() if not p.name.startswith(PULLED)]


def unpushed(log: Log, state: dict) -> int:
    """Bytes of this machine's own records not yet in the object store."""
    done = state.get("segments", {})
    return sum(max(0, p.stat().st_size - done.get(p.name, 0)) for p in own_segments(log))


def _complete_lines(path: Path, start: int) -> bytes:
    with open(path, "rb") as fh:
        fh.seek(start)
        data = fh.read()
    return data[:data.rfind(b"\n") + 1]


def _split(data: bytes) -> list[bytes]:
    chunks, start = [], 0
    while start < len(data):
        end = start + CHUNK_BYTES
        if end < len(data):
            cut = data.rfind(b"\n", start, end)
            end = cut + 1 if cut >= start else data.index(b"\n", end) + 1
        chunks.append(data[start:end])
        start = end
    return chunks


def push(log: Log, store: Layout, state_path: Path, lock_path: Path,
         pull_path: Path) -> int:
    """Push this machine's unpushed records; returns the chunks created. A chunk we
    created right after the last one pulled from its writer counts as pulled (this copy
    holds its records), so our own chunks are not fetched back."""
    created: list[tuple[str, int]] = []
    with file_lock(lock_path):
        state = read_json(state_path)
        state.setdefault("segments", {})
        state.setdefault("next", {})
        for path in own_segments(log):
            writer = path.stem
            offset = state["segments"].get(path.name, 0)
            for chunk in _split(_complete_lines(path, offset)):
                while chunk:
                    seq = state["next"].get(writer, 0)
                    if store.put_new(store.chunk_key(writer, seq), chunk):
                        done = len(chunk)
                        created.append((writer, seq))
                    else:
                        there = store.get(store.chunk_key(writer, seq)) or b""
                        done = len(there) if there and chunk.startswith(there) else 0
                    state["next"][writer] = seq + 1
                    offset += done
                    chunk = chunk[done:]
                    state["segments"][path.name] = offset
                    write_json(state_path, state)
    if created:
        with log.locked():
            pulled = read_json(pull_path)
            marks = pulled.setdefault("writers", {})
            for writer, seq in created:
                if marks.get(writer, -1) == seq - 1:
                    marks[writer] = seq
            write_json(pull_path, pulled)
    return len(created)


def parse_chunk(data: bytes, key: str) -> list[tuple[str, bytes]]:
    """(sha, line) for each record of a chunk; ChunkCorrupt names the first bad line."""
    out = []
    for number, line in enumerate(data.splitlines(keepends=True), 1):
        try:
            obj = json.loads(line)
            ok = (set(obj) == {"at", "rec", "sha"} and isinstance(obj["rec"], dict)
                  and isinstance(obj["at"], str) and record_sha(obj["rec"]) == obj["sha"]
                  and (canonical(obj) + "\n").encode("utf-8") == line)
        except (ValueError, TypeError):
            ok = False
        if not ok:
            raise ChunkCorrupt(f"chunk {key} line {number} is not a valid log record")
        out.append((obj["sha"], line))
    return out


def fetch(store: Layout, watermarks: dict[str, int]
          ) -> tuple[dict[str, list[tuple[int, bytes]]], list[str]]:
    """New chunks per writer (in order), and problems met (bad names, corrupt chunks)."""
    found, problems = {}, []
    for writer in store.writers():
        if not WRITER_NAME.match(writer):
            problems.append(f"ignored a writer folder with an unusable name: {writer!r}")
            continue
        chunks = []
        for seq in store.chunks(writer, watermarks.get(writer, -1)):
            data = store.get(store.chunk_key(writer, seq))
            if data is None:
                break
            chunks.append((seq, data))
        found[writer] = chunks
    return found, problems


def pull(log: Log, store: Layout, state_path: Path) -> tuple[int, list[str]]:
    """Bring other writers' new records into the local log; (records added, problems)."""
    found, problems = fetch(store, read_json(state_path).get("writers", {}))
    added = 0
    with log.locked():
        state = read_json(state_path)
        marks = state.setdefault("writers", {})
        seen: set[str] = set()
        for writer, chunks in sorted(found.items()):
            lines = []
            for seq, data in chunks:
                if seq <= marks.get(writer, -1):
                    continue
                key = store.chunk_key(writer, seq)
                try:
                    records = parse_chunk(data, key)
                except ChunkCorrupt as exc:
                    problems.append(str(exc))
                    break   # later chunks wait until this one is readable
                for sha, line in records:
                    if sha not in seen and not log.contains(sha):
                        seen.add(sha)
                        lines.append(line)
                marks[writer] = seq
            if lines:
                append_durably(log.segments_dir / f"{PULLED}{writer}.jsonl", b"".join(lines))
                added += len(lines)
        write_json(state_path, state)
    return added, problems
