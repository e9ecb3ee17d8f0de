"""The curated symptom catalogue shipped in `catalogue/*.jsonl`.

Each entry is one well-known failure of one ecosystem: `explains` says its causes in
the words an engineer uses when explaining it, `errors` are the messages the tools
print, `behaviour` is what a person sees. Files whose name starts with `_` hold
prototypes, `{"kind": "failure"|"nonfailure", "texts": [...]}`: generic lessons about a
failure, and memories that explain none (decisions, conventions), used to abstain.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from importlib import resources

CATALOGUE_VERSION = "1"
_FIELDS = ("explains", "errors", "behaviour")


@dataclass(frozen=True)
class Entry:
    id: str
    ecosystem: str
    explains: tuple[str, ...]
    errors: tuple[str, ...]
    behaviour: tuple[str, ...]


@dataclass(frozen=True)
class Catalogue:
    entries: tuple[Entry, ...]
    failure: tuple[str, ...]     # generic failure-lesson prototypes
    nonfailure: tuple[str, ...]  # decision / convention prototypes
    sha: str  # over file names and bytes, in name order


class CatalogueError(ValueError):
    """A catalogue file is malformed."""


def load_catalogue(root=None) -> Catalogue:
    """The shipped catalogue, or the `*.jsonl` files in folder `root`."""
    root = resources.files("poimen.symptoms").joinpath("catalogue") if root is None else root
    files = sorted((f for f in root.iterdir() if f.name.endswith(".jsonl")), key=lambda f: f.name)
    digest = hashlib.sha256(f"catalogue-v{CATALOGUE_VERSION}\n".encode())
    entries: list[Entry] = []
    prototypes: dict[str, list[str]] = {"failure": [], "nonfailure": []}
    seen: set[str] = set()
    for f in files:
        raw = f.read_bytes()
        digest.update(f.name.encode() + b"\0" + raw + b"\0")
        for n, line in enumerate(raw.decode("utf-8").splitlines(), 1):
            if not line.strip():
                continue
            where = f"{f.name}:{n}"
            try:
                row = json.loads(line)
            except json.JSONDecodeError as exc:
                raise CatalogueError(f"{where}: not JSON: {exc}") from exc
            if f.name.startswith("_"):
                if row.get("kind") not in prototypes:
                    raise CatalogueError(f"{where}: prototype kind must be 'failure' or 'nonfailure'")
                prototypes[row["kind"]].extend(_strings(row, "texts", where))
                continue
            entry = _entry(row, f.name.removesuffix(".jsonl"), where)
            if entry.id in seen:
                raise CatalogueError(f"{where}: duplicate entry id {entry.id!r}")
            seen.add(entry.id)
            entries.append(entry)
    return Catalogue(tuple(entries), tuple(prototypes["failure"]),
                     tuple(prototypes["nonfailure"]), digest.hexdigest())


def _entry(row: dict, ecosystem: str, where: str) -> Entry:
    if not isinstance(row.get("id"), str) or not row["id"]:
        raise CatalogueError(f"{where}: entry needs a string id")
    fields = {k: _strings(row, k, where) for k in _FIELDS}
    if not fields["explains"] or not (fields["errors"] or fields["behaviour"]):
        raise CatalogueError(f"{where}: entry {row['id']!r} needs explains and errors or behaviour")
    return Entry(f"{ecosystem}/{row['id']}", ecosystem, **fields)


def _strings(row: dict, key: str, where: str) -> tuple[str, ...]:
    value = row.get(key, [])
    if not isinstance(value, list) or not all(isinstance(v, str) and v.strip() for v in value):
        raise CatalogueError(f"{where}: {key!r} must be a list of non-empty strings")
    return tuple(v.strip() for v in value)
