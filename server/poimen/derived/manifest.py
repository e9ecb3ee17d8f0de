"""The artifact manifest `<vault>/.artifacts.jsonl`: one line per emitted skill or reference.

Each line is `{"kind", "name", "sha256", "shingles", "emitted_at", "scheme"}`, where
`shingles` are 16-hex-digit hashes in order of first occurrence and `scheme` names the
normalisation and shingle size they were made with. Appends take an exclusive
`fcntl.flock` on `<vault>/.artifacts.lock` and are fsynced; reads take it shared.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import re
import sys
from array import array
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Iterable

from ..log import append_durably
from .shingles import SCHEME, shingles

KINDS = ("skill", "reference")
MANIFEST = ".artifacts.jsonl"
LOCK = ".artifacts.lock"
_SHA256 = re.compile(r"[0-9a-f]{64}")


class ManifestError(ValueError):
    """A manifest line that cannot be read; `line` is 1-based."""

    def __init__(self, path: Path, line: int, problem: str):
        super().__init__(f"{path}:{line}: {problem}")
        self.path, self.line, self.problem = path, line, problem


@dataclass(frozen=True)
class Artifact:
    """One emitted text as the manifest knows it; `shingles` are distinct, in text order."""
    kind: str
    name: str
    sha256: str
    shingles: tuple[int, ...]
    emitted_at: str

    @property
    def key(self) -> tuple[str, str, str]:
        return (self.kind, self.name, self.sha256)

    def to_json(self) -> str:
        return json.dumps({"kind": self.kind, "name": self.name, "sha256": self.sha256,
                           "shingles": [f"{s:016x}" for s in self.shingles],
                           "emitted_at": self.emitted_at, "scheme": SCHEME},
                          ensure_ascii=False, separators=(",", ":"))


def make_artifact(kind: str, name: str, text: str) -> Artifact:
    """An artifact for `text`, stamped now; raises ValueError for unusable input."""
    if kind not in KINDS:
        raise ValueError(f"artifact kind must be one of {KINDS}, got {kind!r}")
    if not name or not name.strip():
        raise ValueError("artifact name must not be empty")
    fingerprint = shingles(text)
    if not fingerprint:
        raise ValueError(f"artifact {name!r} has no words to recognise it by")
    return Artifact(kind, name, hashlib.sha256(text.encode("utf-8")).hexdigest(), fingerprint,
                    datetime.now(timezone.utc).isoformat(timespec="seconds").replace("+00:00", "Z"))


@contextmanager
def _locked(vault_dir: Path, mode: int):
    fd = os.open(vault_dir / LOCK, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, mode)
        yield
    finally:
        os.close(fd)  # closing releases the lock


def _parse_line(path: Path, number: int, raw: bytes) -> Artifact:
    def fail(problem: str) -> ManifestError:
        return ManifestError(path, number, problem)

    try:
        entry = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as err:
        raise fail(f"not a JSON line ({err})") from None
    if not isinstance(entry, dict):
        raise fail("not a JSON object")
    missing = [k for k in ("kind", "name", "sha256", "shingles", "emitted_at", "scheme")
               if k not in entry]
    if missing:
        raise fail(f"missing {', '.join(missing)}")
    if entry["kind"] not in KINDS:
        raise fail(f"kind must be one of {KINDS}, got {entry['kind']!r}")
    if entry["scheme"] != SCHEME:
        raise fail(f"shingled with scheme {entry['scheme']!r}, this poimen uses {SCHEME!r}"
                   " (record the artifact again)")
    if not isinstance(entry["name"], str) or not entry["name"]:
        raise fail("name must be a non-empty string")
    if not isinstance(entry["sha256"], str) or not _SHA256.fullmatch(entry["sha256"]):
        raise fail("sha256 must be 64 lowercase hex digits")
    if not isinstance(entry["emitted_at"], str):
        raise fail("emitted_at must be a string")
    hashes = entry["shingles"]
    try:
        if not (isinstance(hashes, list) and hashes and set(map(len, hashes)) == {16}
                and len(set(hashes)) == len(hashes)):
            raise ValueError
        values = array("Q", bytes.fromhex("".join(hashes)))
    except (TypeError, ValueError):
        raise fail("shingles must be a non-empty list of distinct 16-hex-digit strings"
                   ) from None
    if sys.byteorder == "little":
        values.byteswap()
    return Artifact(entry["kind"], entry["name"], entry["sha256"], tuple(values),
                    entry["emitted_at"])


@dataclass(frozen=True)
class ManifestPosition:
    """How much of a manifest has been read: bytes and lines so far, and how it began
    (its inode and first bytes, to tell a replaced file from a grown one)."""
    inode: int = 0
    head: bytes = b""
    offset: int = 0
    lines: int = 0


_HEAD = 256


def _read(path: Path, since: ManifestPosition
          ) -> tuple[list[Artifact], ManifestPosition, bool]:
    """Artifacts after `since`, the new position, and whether the file was read anew."""
    try:
        with path.open("rb") as manifest:
            stat = os.fstat(manifest.fileno())
            inode, head = stat.st_ino, manifest.read(_HEAD)
            restarted = (stat.st_size < since.offset
                         or (inode, head[:len(since.head)]) != (since.inode, since.head))
            if restarted:
                since = ManifestPosition(inode, head)
            manifest.seek(since.offset)
            data = manifest.read()
    except FileNotFoundError:
        return [], ManifestPosition(), since != ManifestPosition()
    artifacts = [_parse_line(path, number, raw)
                 for number, raw in enumerate(data.split(b"\n"), start=since.lines + 1)
                 if raw.strip()]
    return artifacts, ManifestPosition(inode, head, since.offset + len(data),
                                       since.lines + data.count(b"\n")), restarted


def read_manifest(vault_dir: Path) -> list[Artifact]:
    """Every artifact in the manifest, in order; a missing or empty manifest gives []."""
    return read_appended(vault_dir, ManifestPosition())[0]


def read_appended(vault_dir: Path, since: ManifestPosition
                  ) -> tuple[list[Artifact], ManifestPosition, bool]:
    """Artifacts appended after `since`, where reading stopped, and whether the manifest
    was replaced (then every artifact in it is returned)."""
    vault_dir = Path(vault_dir)
    if not (vault_dir / MANIFEST).exists():
        return [], ManifestPosition(), since != ManifestPosition()
    with _locked(vault_dir, fcntl.LOCK_SH):
        return _read(vault_dir / MANIFEST, since)


def record_artifact(vault_dir: Path, kind: str, name: str, text: str) -> Artifact:
    """Append `text` as an emitted artifact; recording identical content again is a no-op.

    Returns the stored artifact (the earlier one when it was already recorded).
    Raises ManifestError if the existing manifest is corrupt (nothing is appended).
    """
    return record_artifacts(vault_dir, [(kind, name, text)])[0]


def record_artifacts(vault_dir: Path, items: Iterable[tuple[str, str, str]]) -> list[Artifact]:
    """`record_artifact` for many (kind, name, text) at once: one read, one fsynced write.

    All or nothing: a bad item or a corrupt manifest raises before anything is appended.
    """
    vault_dir = Path(vault_dir)
    if not vault_dir.is_dir():
        raise ValueError(f"vault {vault_dir} does not exist")
    wanted = [make_artifact(kind, name, text) for kind, name, text in items]
    path = vault_dir / MANIFEST
    with _locked(vault_dir, fcntl.LOCK_EX):
        stored = {a.key: a for a in _read(path, ManifestPosition())[0]}
        fresh = {a.key: a for a in wanted if a.key not in stored}
        if fresh:
            _append(vault_dir, path, "".join(a.to_json() + "\n" for a in fresh.values()))
            stored.update(fresh)
    return [stored[a.key] for a in wanted]


def _append(vault_dir: Path, path: Path, lines: str) -> None:
    created = not path.exists()
    data = lines.encode("utf-8")
    if not created and path.stat().st_size and not path.read_bytes().endswith(b"\n"):
        data = b"\n" + data  # never glue onto a last line that lost its newline
    append_durably(path, data)
    if created:
        dir_fd = os.open(vault_dir, os.O_RDONLY)
        try:
            os.fsync(dir_fd)
        finally:
            os.close(dir_fd)
