"""Resolution capture: which files changed between a failing run and the passing one.

A snapshot is taken, read-only, when a terminal command fails: HEAD plus the content
hash of every file that differed from HEAD then. When the same command later exits 0,
a file counts as changed if its content now differs from what it was at the snapshot.
Nothing is written to the repository (`git hash-object` without `-w`).
"""

from __future__ import annotations

import subprocess
from dataclasses import dataclass, field
from pathlib import Path

GIT_TIMEOUT_S = 10
MAX_FILES = 200


@dataclass
class Snapshot:
    root: str
    head: str | None
    dirty: dict[str, str | None] = field(default_factory=dict)  # path -> blob sha (None: deleted)


@dataclass
class Failing:
    """A terminal command's last failure, waiting for the run that passes."""

    failure: object            # inputs.Failure
    evidence_sha: str | None
    snapshot: Snapshot | None
    offered: bool = False


def _git(cwd: str, *args: str, stdin: str | None = None) -> str | None:
    try:
        done = subprocess.run(["git", *args], cwd=cwd, input=stdin, capture_output=True,
                              text=True, timeout=GIT_TIMEOUT_S, check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout if done.returncode == 0 else None


def _hashes(root: str, paths: list[str]) -> dict[str, str | None]:
    present = [p for p in paths if (Path(root) / p).is_file()]
    out: dict[str, str | None] = {p: None for p in paths}
    if present:
        shas = (_git(root, "hash-object", "--stdin-paths", stdin="\n".join(present)) or "").split()
        out.update(zip(present, shas))
    return out


def _candidates(root: str, since: str | None) -> list[str]:
    tracked = _git(root, "diff", "--name-only", since) if since else _git(root, "ls-files")
    untracked = _git(root, "ls-files", "--others", "--exclude-standard")
    names = (tracked or "").splitlines() + (untracked or "").splitlines()
    return list(dict.fromkeys(n for n in names if n))[:MAX_FILES]


def snapshot(cwd: str | None) -> Snapshot | None:
    """The working tree's state now, or None outside a git repository."""
    if not cwd:
        return None
    root = (_git(cwd, "rev-parse", "--show-toplevel") or "").strip()
    if not root:
        return None
    head = (_git(root, "rev-parse", "HEAD") or "").strip() or None
    return Snapshot(root, head, _hashes(root, _candidates(root, head)))


def changed_since(snap: Snapshot | None) -> list[str]:
    """Files (relative to the repository root) whose content changed since `snap`."""
    if snap is None:
        return []
    paths = list(dict.fromkeys(_candidates(snap.root, snap.head) + list(snap.dirty)))
    now = _hashes(snap.root, paths)
    changed = []
    for path in paths:
        before = snap.dirty[path] if path in snap.dirty else _blob_at(snap, path)
        if now.get(path) != before:
            changed.append(path)
    return changed[:MAX_FILES]


def _blob_at(snap: Snapshot, path: str) -> str | None:
    if snap.head is None:
        return None
    return (_git(snap.root, "rev-parse", f"{snap.head}:{path}") or "").strip() or None
