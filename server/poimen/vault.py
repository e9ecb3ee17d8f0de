"""The vault: the log plus its LanceDB projections, kept in step.

Every write goes: append to the log (durable) → apply to the projections → advance
the watermark in `projection.json`, all under the log lock. A crash anywhere in
between is repaired on the next open by applying what the log holds past the
watermark. `rebuild()` drops every projection and replays the whole log.
"""

from __future__ import annotations

import json
import logging
import math
import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterable, Sequence

import numpy as np

from .canonical import canonical, sha256_text
from .config import missing_vault
from .deferred import Deferred
from .embed import DIM
from .log import FILE_MODE, Entry, Log, make_dir, private_umask
from .store import FULLTEXT, LESSON_LEVELS, TABLES, Store, _in, _quote
from .views import evidence_texts, evidence_view

VECTOR_LEVELS = ("L1", "L2", "R")
VECTOR_KINDS = ("text", "symptom", "evidence")
NODE_TEXT_LIMIT = 64 * 1024  # evidence beyond this stays in the log, not the node
OPTIMIZE_EVERY = 200         # applied writes between LanceDB housekeeping runs of a table...
OPTIMIZE_SHARE = 50          # ...or a fiftieth of its rows, if more: compaction rewrites it
# ...and a table every lookup reads and writes, after this many writes to it: each lookup
# that sees a known failure adds a file to `occurrences`, and every lookup's seen counts
# open them all (255 one-row files: a 39 ms query, 3.6 ms once compacted, at the 10k bench
# vault). Compacting 16 files into 100k rows took 125 ms, off the answer path.
COMPACT_AFTER_PUTS = {"occurrences": 16}
OPTIMIZE_ATTEMPTS = 3        # an optimize another process's commit preempted is retried


def _warn(message: str) -> None:
    logging.getLogger("poimen.vault").warning("poimen: %s", message)


class VaultError(RuntimeError):
    """A vault cannot be used as asked (missing, not a vault, …)."""


@dataclass
class Applied:
    """What one apply pass wrote; `projection_drift` is filled by rebuilds."""

    records: int = 0
    projection_drift: list[str] = field(default_factory=list)


class Vault:
    def __init__(self, path: Path, embed: Callable[[list[str]], np.ndarray],
                 model_id: str = "",
                 reproject: Callable[[list[tuple[str, list[str]]]], list[str]] | None = None,
                 create: bool = True):
        self.path = Path(path).expanduser()
        missing = None if create else missing_vault(self.path)
        if missing:
            raise VaultError(missing)
        private_umask()
        make_dir(self.path)
        self.log = Log(self.path / "log")
        self.store = Store(self.path / "lance")
        self._embed = embed
        self.model_id = model_id
        self._reproject = reproject  # (memory, evidence) pairs -> projection shas, for rebuilds
        self._since_optimize: dict[str, int] = {}
        self._optimize_every: dict[str, int] = {}
        self.deferred = Deferred(self)
        self.repairs = self.log.open()
        with self.log.locked():
            self.rebuilt_because = self._out_of_step()
            if self.rebuilt_because:
                _warn(f"rebuilding the projections from the log: {self.rebuilt_because}")
                self.rebuild(skip_bad=True)
            else:
                self._add_missing_columns()
                self.catch_up()

    def _out_of_step(self) -> str | None:
        """Why the projections cannot simply catch up from the watermark (they hold what
        the log no longer has, or are gone), or None."""
        marks, lance = self._watermark(), (self.path / "lance" / "memories.lance").is_dir()
        if not marks:   # tables that a reader created before anything was written hold
            written = any(self.log.sizes().values())   # nothing to lose: not a reason
            return "projection.json is missing" if lance and written else None
        for repair in self.repairs:
            if repair["action"] != "completed newline" \
                    and marks.get(repair["segment"], 0) > repair["offset"]:
                return (f"log segment {repair['segment']} was cut at byte "
                        f"{repair['offset']} after it was projected")
        sizes = self.log.sizes()
        for segment, offset in sorted(marks.items()):
            if offset > sizes.get(segment, -1):
                return f"projection.json points past the end of log segment {segment}"
            if not self.log.at_record_start(segment, offset):
                return f"projection.json points inside a record of log segment {segment}"
        return None if lance else "the projections (lance/) are missing"

    def _add_missing_columns(self) -> None:
        """Bring projections an older version wrote up to today's columns, in place, from
        the rows they hold (nothing is embedded again): each lesson's `findable` words."""
        if not (self.path / "lance" / "memories.lance").is_dir() \
                or FULLTEXT not in self.store.missing_columns():
            return
        _warn("adding the full-text view of lessons with their evidence (once)")
        self.store.add_findable()
        rows = {r["sha"]: r for r in self.store.table("memories").to_arrow().to_pylist()}

        def node(sha):
            row = rows.get(sha)
            return None if row is None else (row["level"], row["text"], row["parents"] or ())

        lessons = [dict(row, findable=findable(row["text"], evidence_texts(
            row["parents"] or (), node))) for row in rows.values() if row["level"] in LESSON_LEVELS]
        self.store.put("memories", lessons, upsert=True)
        self.settle()

    # -- embedding ----------------------------------------------------------------
    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Vectors for texts (the embedder memoises, so pre-embedding outside the lock pays)."""
        return self._embed(list(texts)) if texts else np.zeros((0, DIM), np.float32)

    # -- the watermark ----------------------------------------------------------------
    def _watermark_path(self) -> Path:
        return self.path / "projection.json"

    def _watermark(self) -> dict[str, int]:
        try:
            return json.loads(self._watermark_path().read_text())["offsets"]
        except (FileNotFoundError, ValueError, KeyError):
            return {}

    def _save_watermark(self, offsets: dict[str, int]) -> None:
        tmp = self._watermark_path().with_suffix(".tmp")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, FILE_MODE)
        with open(fd, "w") as fh:
            fh.write(canonical({"offsets": offsets}))
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, self._watermark_path())

    def catch_up(self, reading: bool = False) -> int:
        """Apply what the log holds past the watermark (after a crash, or another writer).
        `reading` (a lookup's look at what others wrote): when all the log holds past it
        is this process's own acknowledged occurrences, they are left to the background
        apply (`deferred`; seen counts take them from its pending records) instead of
        applied here, on the answer path, after waiting for the lock that apply holds."""
        sizes, mark = self.log.sizes(), self._watermark()
        if sizes == mark or (reading and self.deferred.only_own(sizes, mark)):
            self.store.refresh()
            return 0
        with self.log.locked():
            entries, offsets = self.log.entries_after(self._watermark())
            self._apply(entries, upsert=True)
            self._save_watermark(offsets)
            self.store.refresh()
            return len(entries)

    def fetch_missing(self, sha: str) -> bool:
        """Bring in the record `sha` this vault lacks; a folder holds all it ever will
        (a team vault syncs once: a teammate's record another machine served)."""
        return False

    # -- writing ------------------------------------------------------------------
    def commit(self, records: Iterable[dict]) -> list[tuple[str, bool]]:
        """Append records and project them; returns (sha, newly appended) per record."""
        records = list(records)
        with self.log.locked():
            self.catch_up()
            results = self.log.append_many(records)
            entries, offsets = self.log.entries_after(self._watermark())
            self._apply(entries, upsert=False)
            self._save_watermark(offsets)
            self._housekeeping(len(entries))
        return results

    def acknowledge(self, records: list[dict]) -> list[tuple[str, bool]]:
        """Occurrence records: logged durably now, applied in the background (`deferred`)."""
        return self.deferred.acknowledge(records)

    def _housekeeping(self, applied: int) -> None:
        """Optimize each table after OPTIMIZE_EVERY applied writes, or a fiftieth of its
        rows, or COMPACT_AFTER_PUTS writes to it: compacting rewrites the table (and the
        memories' full-text index) whole, so a fixed interval made an import quadratic
        (~2.6 GB of rewritten files kept at 100k rows, a 100k import at 7 lessons/s)."""
        due = []
        for name in TABLES:
            self._since_optimize[name] = self._since_optimize.get(name, 0) + applied
            if name not in self._optimize_every:   # first write of this process
                self._optimize_every[name] = self._optimize_interval(name)
            if (self._since_optimize[name] >= self._optimize_every[name]
                    or self.store.puts.get(name, 0) >= COMPACT_AFTER_PUTS.get(name, math.inf)):
                due.append(name)
        if due and self._optimize(due):   # also brings the FTS index up to date
            for name in due:
                self._since_optimize[name] = 0
                self._optimize_every[name] = self._optimize_interval(name)

    def settle(self) -> None:
        """Fold the rows a bulk write added into the memories' full-text index now.
        Until housekeeping does, LanceDB scores the rows its index lacks apart, with
        statistics of their own, so a lookup's BM25 features (and answers) would change
        when it ran, at a moment that depends on timing."""
        with self.log.locked():
            if self._optimize(["memories"]):
                self._since_optimize["memories"] = 0

    def _optimize(self, names: Sequence[str]) -> bool:
        """`store.optimize(names)` and the full-text index, retried when another
        process's commit preempted it (a reader making the full-text index commits
        outside the log lock); False, with a warning, if it still did not go through:
        the rows are written, and the next housekeeping tries again."""
        for attempt in range(OPTIMIZE_ATTEMPTS):
            if attempt:
                self.store.refresh()
                time.sleep(0.05 * attempt)
            try:
                self.store.optimize(names)
                self.store.ensure_fulltext()
                return True
            except RuntimeError as exc:
                if "conflict" not in str(exc).lower():
                    raise
                conflict = exc
        _warn(f"housekeeping of {', '.join(names)} put off: {conflict}")
        return False

    def _optimize_interval(self, name: str) -> int:
        return max(OPTIMIZE_EVERY, self.store.count(name) // OPTIMIZE_SHARE)

    def rebuild(self, progress: Callable[[int, int], None] | None = None,
                batch: int = 256, skip_bad: bool = False) -> Applied:
        """Drop every projection and replay the whole log (an unreadable line stops it,
        or with `skip_bad` is passed over with a warning)."""
        with self.log.locked():
            entries = self.log.entries(verify=True, skip_bad=skip_bad)
            self.store.drop()
            total = Applied()
            for start in range(0, len(entries), batch):
                part = self._apply(entries[start:start + batch], upsert=False, check=True)
                total.records += part.records
                total.projection_drift += part.projection_drift
                if progress:
                    progress(min(start + batch, len(entries)), len(entries))
            self._save_watermark(self.log.sizes())
            self.store.optimize()
            self.store.reindex_fulltext()
        return total

    def verify(self) -> list[str]:
        """Problems found: unreadable log lines, and projections that differ from the log."""
        from .log import LogCorrupt

        try:
            entries = self.log.entries(verify=True)
        except LogCorrupt as exc:
            return [str(exc)]
        problems = []
        if self.log.sizes() != self._watermark():
            problems.append("projections have not applied the whole log")
        nodes = {e.sha for e in entries if e.rec.get("type") in ("evidence", "memory", "reference")}
        stored = {row["sha"] for row in self.store.dump("memories")}
        for sha in sorted(nodes - stored):
            problems.append(f"log record {sha} has no memory row")
        for sha in sorted(stored - nodes):
            problems.append(f"memory row {sha} is not in the log")
        vectors = {(r["memory_sha"], r["kind"]) for r in self.store.dump("vectors")}
        expected = {(e.sha, "text") for e in entries
                    if e.rec.get("type") in ("memory", "reference")}
        expected |= {(e.rec["memory"], "symptom") for e in entries
                     if e.rec.get("type") == "projection" and e.rec["lines"]}
        nodes_by_sha = {e.sha: ("L0", e.rec["text"][:NODE_TEXT_LIMIT], ())
                        if e.rec["type"] == "evidence" else
                        (e.rec["level"], e.rec["text"], e.rec.get("parents", ()))
                        for e in entries if e.rec.get("type") in ("evidence", "memory")}
        expected |= {(e.sha, "evidence") for e in entries if e.rec.get("type") == "memory"
                     and evidence_view(evidence_texts(e.rec.get("parents", ()),
                                                      nodes_by_sha.get))}
        for sha, kind in sorted(expected - vectors):
            problems.append(f"memory {sha} lacks its {kind} vector")
        for sha, kind in sorted(vectors - expected):
            problems.append(f"{kind} vector for {sha} has no log record")
        return problems

    # -- projecting records -----------------------------------------------------------
    def _apply(self, entries: list[Entry], upsert: bool, check: bool = False) -> Applied:
        batch = _Batch(self.store)
        applied = Applied()
        batch.prefetch_signatures([p for e in entries if e.rec.get("type") in ("memory", "reinforced")
                                   for p in e.rec.get("parents", ())])
        for entry in entries:
            handler = getattr(self, "_on_" + str(entry.rec.get("type")), None)
            if handler is not None:
                handler(entry, batch, applied, check)
            applied.records += 1
        if batch.checks:  # re-projected together: one embedding batch
            again = self._reproject([(text, evidence) for _, text, evidence, _ in batch.checks])
            applied.projection_drift += [memory for (memory, _, _, logged), sha
                                         in zip(batch.checks, again) if sha != logged]
        texts = [row["_text"] for row in batch.rows["vectors"].values()]
        vectors = self.embed(texts)
        for row, vec in zip(batch.rows["vectors"].values(), vectors):
            row.pop("_text")
            row["vector"] = vec.tolist()
            row["model"] = self.model_id
        batch.flush(upsert)
        return applied

    def _on_evidence(self, entry: Entry, batch: "_Batch", applied: Applied, check: bool):
        rec = entry.rec
        batch.add_memory(entry, "L0", rec["text"][:NODE_TEXT_LIMIT], rec)
        for sig in rec.get("signatures", ()):
            batch.add_signature(sig, entry.sha, "L0", rec.get("project", ""), entry.at)

    def _on_reference(self, entry: Entry, batch: "_Batch", applied: Applied, check: bool):
        batch.add_memory(entry, "R", entry.rec["text"], entry.rec)
        batch.add_vector(entry.sha, "text", "R", entry.rec.get("project", ""),
                         entry.rec["text"])

    def _on_memory(self, entry: Entry, batch: "_Batch", applied: Applied, check: bool):
        rec = entry.rec
        level = rec["level"]
        project = rec.get("project", "")
        evidence = batch.evidence_texts(rec.get("parents", ()))
        batch.add_memory(entry, level, rec["text"], rec, evidence)
        batch.add_vector(entry.sha, "text", level, project, rec["text"])
        view = evidence_view(evidence)
        if view:
            batch.add_vector(entry.sha, "evidence", level, project, view)
        if rec.get("supersedes"):
            batch.supersede(rec["supersedes"], entry.sha)
        batch.link_parent_signatures(entry.sha, level, project, rec.get("parents", ()),
                                     entry.at)

    def _on_reinforced(self, entry: Entry, batch: "_Batch", applied: Applied, check: bool):
        rec = entry.rec
        memory = batch.memory(rec["memory"])
        if memory is None:
            return
        parents = list(dict.fromkeys(list(memory["parents"]) + list(rec["parents"])))
        batch.change_memory(rec["memory"], {"parents": parents, "findable": findable(
            memory["text"], batch.evidence_texts(parents))})
        batch.link_parent_signatures(rec["memory"], memory["level"], memory["project"],
                                     rec["parents"], entry.at)

    def _on_projection(self, entry: Entry, batch: "_Batch", applied: Applied, check: bool):
        rec = entry.rec
        text = "\n".join(line["text"] for line in rec["lines"])
        if check and self._reproject is not None:
            memory = batch.memory(rec["memory"])
            if memory is not None:
                batch.checks.append((rec["memory"], memory["text"], self.evidence_messages(
                    memory["parents"], batch), rec["projection_sha"]))
        batch.rows["projections"][rec["memory"]] = {
            "memory_sha": rec["memory"], "text": text, "lines": canonical(rec["lines"]),
            "dropped": canonical(rec.get("dropped", [])), "model_id": rec["model_id"],
            "prompt_sha": rec["prompt_sha"], "projection_sha": rec["projection_sha"]}
        memory = batch.memory(rec["memory"])
        if text and memory is not None:
            batch.add_vector(rec["memory"], "symptom", memory["level"], memory["project"],
                             text, live=not memory["superseded_by"])

    def _on_occurrence(self, entry: Entry, batch: "_Batch", applied: Applied, check: bool):
        rec = entry.rec
        batch.rows["occurrences"][entry.sha] = {
            "sha": entry.sha, "sig_sha": rec["sig_sha"], "project": rec.get("project", ""),
            "request_id": rec.get("request_id") or "", "at": entry.at}

    # -- helpers for the engine ------------------------------------------------------
    def evidence_messages(self, parents: Sequence[str], batch: "_Batch | None" = None
                          ) -> list[str]:
        """Normalised failure messages in the given evidence (parents), in order."""
        return self.evidence_messages_many([parents], batch)[0]

    def evidence_messages_many(self, parent_lists: Sequence[Sequence[str]],
                               batch: "_Batch | None" = None) -> list[list[str]]:
        """`evidence_messages` for several memories, with one store query."""
        if batch is None:
            batch = _Batch(self.store)
            batch.prefetch_signatures([p for parents in parent_lists for p in parents])
        out = []
        for parents in parent_lists:
            messages = []
            for parent in parents:
                for sig in sorted(batch.signatures_for(parent), key=lambda s: s["id"]):
                    if sig["level"] == "L0" and sig["message"] not in messages:
                        messages.append(sig["message"])
            out.append(messages)
        return out


class _Batch:
    """Rows gathered while applying records, flushed to LanceDB in one go per table."""

    def __init__(self, store: Store):
        self.store = store
        self.rows: dict[str, dict[str, dict]] = {t: {} for t in (
            "memories", "vectors", "signatures", "occurrences", "projections")}
        self.changes: dict[str, dict] = {}   # memory sha -> column changes (stored rows)
        self.checks: list[tuple[str, str, list[str], str]] = []  # (memory, text, evidence, logged sha)
        self._stored_signatures: dict[str, list[dict]] = {}  # memory sha -> stored links
        self._pending_signatures: dict[str, list[dict]] = {}  # memory sha -> batch's links

    def memory(self, sha: str) -> dict | None:
        if sha in self.rows["memories"]:
            return self.rows["memories"][sha]
        stored = self.store.memories([sha]).get(sha)
        if stored is None:
            return None
        row = {"sha": stored.sha, "level": stored.level, "text": stored.text,
               "project": stored.project, "superseded_by": stored.superseded_by,
               "parents": list(stored.parents)}
        row.update(self.changes.get(sha, {}))
        return row

    def evidence_texts(self, parents: Sequence[str]) -> list[str]:
        """The texts of the L0 evidence a memory with these parents rests on."""
        def node(sha):
            row = self.memory(sha)
            return None if row is None else (row["level"], row["text"], row["parents"])
        return evidence_texts(parents, node)

    def add_memory(self, entry: Entry, level: str, text: str, rec: dict,
                   evidence: Sequence[str] = ()) -> None:
        meta = {k: rec[k] for k in ("without_evidence", "heading", "path", "meta")
                if k in rec}
        self.rows["memories"][entry.sha] = {
            "sha": entry.sha, "level": level, "text": text,
            "project": rec.get("project", ""), "tool": rec.get("tool") or "",
            "source": rec.get("source", ""), "created": entry.at, "superseded_by": "",
            "parents": list(rec.get("parents", ())), "meta": canonical(meta),
            "findable": findable(text, evidence)}

    def change_memory(self, sha: str, values: dict) -> None:
        if sha in self.rows["memories"]:
            self.rows["memories"][sha].update(values)
        else:
            self.changes.setdefault(sha, {}).update(values)

    def add_vector(self, sha: str, kind: str, level: str, project: str, text: str,
                   live: bool = True) -> None:
        self.rows["vectors"][f"{sha}:{kind}"] = {
            "id": f"{sha}:{kind}", "memory_sha": sha, "kind": kind, "level": level,
            "project": project, "model": "", "live": live, "_text": text}

    def add_signature(self, sig: dict, memory_sha: str, level: str, project: str,
                      at: str) -> None:
        key = f"{sig['sig_sha']}:{memory_sha}"
        if key in self.rows["signatures"]:
            return  # the first link stands, as in the store
        row = self.rows["signatures"][key] = {
            "id": key, "sig_sha": sig["sig_sha"], "memory_sha": memory_sha, "level": level,
            "tool": sig.get("tool", ""), "kind": sig.get("kind", ""),
            "family": sig.get("family", ""), "message": sig.get("message", ""),
            "project": project, "at": at}
        self._pending_signatures.setdefault(memory_sha, []).append(row)

    def prefetch_signatures(self, memory_shas: Sequence[str]) -> None:
        """Read the stored signature links of these memories in one query."""
        wanted = [s for s in dict.fromkeys(memory_shas) if s not in self._stored_signatures]
        if wanted:
            for sha in wanted:
                self._stored_signatures[sha] = []
            for row in self.store.signatures_of(wanted):
                self._stored_signatures[row["memory_sha"]].append(row)

    def signatures_for(self, memory_sha: str) -> list[dict]:
        pending = self._pending_signatures.get(memory_sha)
        if pending:
            return pending
        if memory_sha not in self._stored_signatures:
            self.prefetch_signatures([memory_sha])
        return self._stored_signatures[memory_sha]

    def link_parent_signatures(self, memory_sha: str, level: str, project: str,
                               parents: Sequence[str], at: str) -> None:
        for parent in parents:
            for sig in self.signatures_for(parent):
                if sig["level"] == "L0":
                    self.add_signature(sig, memory_sha, level, project, at)

    def supersede(self, old: str, new: str) -> None:
        self.change_memory(old, {"superseded_by": new})
        for kind in VECTOR_KINDS:
            key = f"{old}:{kind}"
            if key in self.rows["vectors"]:
                self.rows["vectors"][key]["live"] = False
        self.changes.setdefault(old, {})["_vectors_dead"] = True

    def flush(self, upsert: bool) -> None:
        for name, rows in self.rows.items():
            self.store.put(name, list(rows.values()), upsert=upsert)
        dead = [sha for sha, v in self.changes.items() if v.pop("_vectors_dead", False)]
        changed = {sha: v for sha, v in self.changes.items()
                   if v and sha not in self.rows["memories"]}
        if changed:
            stored = self.store.table("memories").search().where(
                _in("sha", changed)).limit(len(changed) + 1).to_list()
            for row in stored:
                row.update(changed[row["sha"]])
            self.store.put("memories", stored, upsert=True)
        if dead:
            self.store.update("vectors", _in("memory_sha", dead), {"live": False})


def findable(text: str, evidence: Sequence[str]) -> str:
    """What full-text search finds a memory by: its text and the evidence it rests on,
    as one document (a paste's words in a lesson and in its evidence add up)."""
    return "\n".join([text, *evidence])[:NODE_TEXT_LIMIT]


def projection_record(memory_sha: str, projection) -> dict:
    """The log record for a symptom projection (see `poimen.symptoms.Projection`)."""
    lines = [{"text": line.text, "origin": line.origin} for line in projection.lines]
    return {"type": "projection", "memory": memory_sha, "lines": lines,
            "dropped": [list(d) for d in projection.dropped],
            "model_id": projection.model_id, "prompt_sha": projection.prompt_sha,
            "projection_sha": sha256_text(canonical(lines))}
