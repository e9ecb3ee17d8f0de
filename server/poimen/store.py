"""LanceDB projections of the log: memory nodes, vectors, signatures, occurrences.

Nothing here is authoritative; `Vault.rebuild` drops it all and replays the log. Writes
come only from `Vault` (under the log lock); reads come from anywhere.
"""

from __future__ import annotations

import json
import os
import shutil
import threading
import time
from datetime import timedelta
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Sequence

import numpy as np
import pyarrow as pa

from .embed import DIM
from .lazy_lancedb import load as load_lancedb
from .signatures.clauses import CLAUSE_WORDS, SENTENCE_END, SEPARATOR, clause_keys

LEVELS = ("L0", "L1", "L2", "R")
LESSON_LEVELS = ("L1", "L2")
# index listings leave out the IVF centroids (and LanceDB stops warning on every listing)
os.environ.setdefault("LANCE_INCLUDE_VECTOR_CENTROIDS", "false")

MEMORIES = pa.schema([
    ("sha", pa.string()), ("level", pa.string()), ("text", pa.string()),
    ("project", pa.string()), ("tool", pa.string()), ("source", pa.string()),
    ("created", pa.string()), ("superseded_by", pa.string()),
    ("parents", pa.list_(pa.string())), ("meta", pa.string()), ("findable", pa.string()),
])
# the words full-text search finds a memory by (its index's column): its text, and a
# lesson's evidence texts with it, one document (`vault.findable`)
FULLTEXT = "findable"
MEMORY_COLUMNS = [name for name in MEMORIES.names if name != FULLTEXT]
CARD_COLUMNS = ["sha", "level", "source", "tool", "project", "created"]  # a cited record
VECTORS = pa.schema([
    ("id", pa.string()), ("memory_sha", pa.string()), ("kind", pa.string()),
    ("level", pa.string()), ("project", pa.string()), ("model", pa.string()),
    ("live", pa.bool_()), ("vector", pa.list_(pa.float32(), DIM)),
])
SIGNATURES = pa.schema([
    ("id", pa.string()), ("sig_sha", pa.string()), ("memory_sha", pa.string()),
    ("level", pa.string()), ("tool", pa.string()), ("kind", pa.string()),
    ("family", pa.string()), ("message", pa.string()), ("project", pa.string()),
    ("at", pa.string()),
])
OCCURRENCES = pa.schema([
    ("sha", pa.string()), ("sig_sha", pa.string()), ("project", pa.string()),
    ("request_id", pa.string()), ("at", pa.string()),
])
PROJECTIONS = pa.schema([
    ("memory_sha", pa.string()), ("text", pa.string()), ("lines", pa.string()),
    ("dropped", pa.string()), ("model_id", pa.string()), ("prompt_sha", pa.string()),
    ("projection_sha", pa.string()),
])
SCALAR_INDEXES = {"memories": ("sha",), "vectors": ("memory_sha",),
                  "signatures": ("sig_sha", "memory_sha"), "occurrences": ("sig_sha",)}
SCALAR_MIN_ROWS = 10_000
ANN_MIN_VECTORS = 100_000  # below this, lookups search a resident copy exactly (resident.py)
ANN_PARTITION_ROWS = 4096
ANN_FOLD_ROWS = 4096     # new vectors LanceDB scans flat before `optimize` folds them in
ANN_MAX_SEGMENTS = 16    # folds (each a delta segment searched apart) before a retrain
INSERT_IF_ABSENT = {"signatures"}  # a reinforcement may link a signature twice
STAMP_SETTLE_S = 2.0   # a `_versions` folder changed this recently is checked out anyway
KEEP_VERSIONS_FOR = timedelta(minutes=10)  # readers in other processes may still use them
TABLES = {"memories": (MEMORIES, "sha"), "vectors": (VECTORS, "id"),
          "signatures": (SIGNATURES, "id"), "occurrences": (OCCURRENCES, "sha"),
          "projections": (PROJECTIONS, "memory_sha")}


@dataclass(frozen=True)
class MemoryRow:
    sha: str
    level: str
    text: str
    project: str
    tool: str
    source: str
    created: str
    superseded_by: str
    parents: tuple[str, ...]
    meta: dict

    @classmethod
    def from_arrow(cls, row: dict) -> "MemoryRow":
        return cls(row["sha"], row["level"], row["text"], row["project"], row["tool"],
                   row["source"], row["created"], row["superseded_by"],
                   tuple(row["parents"] or ()), json.loads(row["meta"] or "{}"))


@dataclass(frozen=True)
class VectorHit:
    memory_sha: str
    kind: str
    score: float


@dataclass(frozen=True)
class TextHit:
    memory_sha: str
    score: float


@dataclass(frozen=True)
class SignatureLink:
    sig_sha: str
    memory_sha: str
    tool: str
    project: str
    level: str
    message: str


def _links_by(rows: Iterable[dict], key, wanted=None) -> dict:
    """Signature rows as links grouped by `key(row)` (only `wanted` keys, if given),
    each group sorted by level then memory."""
    return _links_by_keys(rows, lambda r: (key(r),), wanted)


def _links_by_keys(rows: Iterable[dict], keys_of, wanted=None) -> dict:
    """As `_links_by`, a row under each of its keys `keys_of(row)`."""
    out: dict = {}
    for r in rows:
        for k in keys_of(r):
            if wanted is None or k in wanted:
                out.setdefault(k, []).append(SignatureLink(
                    r["sig_sha"], r["memory_sha"], r["tool"], r["project"], r["level"],
                    r["message"]))
    for links in out.values():
        links.sort(key=lambda s: (s.level, s.memory_sha))
    return out


def _plain_words(query: str) -> str:
    """A full-text query as plain words: LanceDB reads a query that opens with a double
    quote as a phrase query, which an index without positions refuses (a paste quoted
    whole lost tiers 2 and 3); the tokenizer drops quotes anyway, so other queries score
    the same."""
    return query.replace('"', " ")


def _quote(value: str) -> str:
    return "'" + value.replace("'", "''") + "'"


def _in(column: str, values: Iterable[str]) -> str:
    return f"{column} IN ({', '.join(_quote(v) for v in values)})"


def _ann_index(tbl):
    """The vector column's index entry, or None."""
    return next((i for i in tbl.list_indices()
                 if getattr(i, "columns", None) == ["vector"]), None)


def level_codes(levels: Iterable[str]) -> np.ndarray:
    """Rows' levels as int8 codes (the place in LEVELS, -1 for any other), for masks."""
    return np.asarray([LEVELS.index(v) if v in LEVELS else -1 for v in levels], np.int8)


def add_occurrences(times: dict[str, list[str]], rows: Iterable[dict],
                    pending: dict | None) -> None:
    """Add to `times` (sig_sha -> ats) the occurrence `rows` of its signatures and the
    `pending` ones (sha -> (sig_sha, at)) that `rows` do not hold: a record counts once,
    whether it was applied to the table yet or not."""
    held = set()
    for r in rows:
        times[r["sig_sha"]].append(r["at"])
        held.add(r["sha"])
    for sha, (sig_sha, at) in sorted((pending or {}).items()):
        if sig_sha in times and sha not in held:
            times[sig_sha].append(at)


def follow_supersession(memories, sha: str) -> str | None:
    """Follow supersession to the live memory (None if `sha` is unknown)."""
    seen = set()
    current = memories([sha]).get(sha)
    if current is None:
        return None
    while current.superseded_by and current.sha not in seen:
        seen.add(current.sha)
        nxt = memories([current.superseded_by]).get(current.superseded_by)
        if nxt is None:
            break
        current = nxt
    return current.sha


class Store:
    def __init__(self, path: Path):
        self.path = Path(path)
        self.db = load_lancedb().connect(str(self.path))
        self._tables: dict = {}
        self._fts_ready = False
        self._fts_lock = threading.Lock()
        self._has_memories = False   # rows are only added (a rebuild drops the table)
        self.generation: dict[str, int] = {}   # per table: moves after each change seen
        self._generation_lock = threading.Lock()
        self._stamps: dict[str, tuple[int, int]] = {}   # `_versions` folder, last checkout
        self.puts: dict[str, int] = {}   # writes per table since it was last compacted

    def _moved(self, names: Iterable[str] = tuple(TABLES)) -> None:
        """Rows of `names` may have changed (a write here, or others' commits checked
        out): readers that remembered such a table's version at an older generation
        must read it again (`resident.Resident._copy`). Called after the change, never
        before."""
        with self._generation_lock:
            for name in names:
                self.generation[name] = self.generation.get(name, 0) + 1

    def table(self, name: str):
        if name not in self._tables:
            self._tables[name] = self._open(name)
        return self._tables[name]

    def _open(self, name: str, attempts: int = 40):
        """Open a table, creating it if absent. Another process creating the same table
        leaves its folder without `_versions` for a moment; that is waited out."""
        schema, _ = TABLES[name]
        for attempt in range(attempts):
            try:
                try:
                    return self.db.open_table(name)
                except (FileNotFoundError, ValueError):
                    return self.db.create_table(name, schema=schema, exist_ok=True)
            except RuntimeError as exc:   # lance: "Not found: …/_versions" mid-creation
                if "Not found" not in str(exc) or attempt == attempts - 1:
                    raise
                time.sleep(0.05)

    def refresh(self) -> None:
        """See other processes' commits (another thread may be opening a table). A table
        that another process dropped and made anew (`mem rebuild`) is reopened at next use.
        A table whose `_versions` folder is as it was at its last checkout (`_stamp`) has
        no new commit and is left as it is: each lookup refreshes, and a checkout is a
        round trip through LanceDB's event loop (then its copies asked their versions)."""
        moved = []
        for name, tbl in list(self._tables.items()):
            stamp = self._stamp(name)
            if stamp is not None and stamp == self._stamps.get(name):
                continue
            moved.append(name)
            try:
                tbl.checkout_latest()
            except RuntimeError as exc:   # lance: "Not found: …/_versions"
                if "Not found" not in str(exc):
                    raise
                self._tables.pop(name, None)
                self._fts_ready = self._has_memories = False
                continue
            if stamp is not None:
                self._stamps[name] = stamp
        self._moved(moved)

    def _stamp(self, name: str) -> tuple[int, int] | None:
        """The table's `_versions` folder (inode, mtime): a commit adds a file to it, a
        rebuild makes it anew. None (check out) if it is missing or changed in the last
        STAMP_SETTLE_S, within which a file system's coarse clock may miss a commit."""
        try:
            st = os.stat(self.path / f"{name}.lance" / "_versions")
        except OSError:
            return None
        if time.time() - st.st_mtime < STAMP_SETTLE_S:
            return None
        return st.st_ino, st.st_mtime_ns

    def drop(self) -> None:
        self._tables.clear()
        self.db = None
        shutil.rmtree(self.path, ignore_errors=True)
        self.db = load_lancedb().connect(str(self.path))
        self._fts_ready = self._has_memories = False
        self._stamps.clear()
        self._moved()

    # -- writes (Vault only) -----------------------------------------------------------
    def put(self, name: str, rows: list[dict], upsert: bool = False) -> None:
        if not rows:
            return
        schema, key = TABLES[name]
        data = pa.Table.from_pylist(rows, schema=schema)
        tbl = self.table(name)
        if name in INSERT_IF_ABSENT and tbl.count_rows():   # the first link stands,
            tbl.merge_insert(key).when_not_matched_insert_all().execute(data)  # replays too
        elif upsert:
            (tbl.merge_insert(key).when_matched_update_all()
             .when_not_matched_insert_all().execute(data))
        else:
            tbl.add(data)
        self.puts[name] = self.puts.get(name, 0) + 1   # one more file until compacted
        if name == "memories":
            self._fts_ready = False
        self._moved([name])

    def update(self, name: str, where: str, values: dict) -> None:
        self.table(name).update(where=where, values=values)
        self._moved([name])

    def optimize(self, names: Sequence[str] = tuple(TABLES)) -> None:
        """Compact files, update indexes, drop versions older than KEEP_VERSIONS_FOR (of
        the tables `names`); then add the read path's indexes to tables that have grown
        past their size.
        Once the vectors have an ANN index, their table waits for ANN_FOLD_ROWS new
        rows: every fold appends a delta segment that each search visits (with 82 of
        them at 39k vectors, LanceDB's vector search took 70 ms, numpy's scan 8 ms)."""
        for name in names:
            tbl = self.table(name)
            ann = _ann_index(tbl) if name == "vectors" else None
            if ann is None or getattr(ann, "num_unindexed_rows", 0) >= ANN_FOLD_ROWS:
                tbl.optimize(cleanup_older_than=KEEP_VERSIONS_FOR)
                self.puts[name] = 0
        self.ensure_indexes()

    def ensure_indexes(self) -> None:
        """An ANN index on the vectors from ANN_MIN_VECTORS rows, where lookups stop
        holding them in memory (bench/ann.py: LanceDB's flat scan is 3x the index at 10k
        vectors, 10x at 30k, recall@30 0.99), retrained from all rows once more than
        ANN_MAX_SEGMENTS delta segments pile up; and BTREE indexes on the columns
        lookups and writes filter by, from SCALAR_MIN_ROWS rows. Indexes are exact
        except the ANN; `optimize` folds new rows into them."""
        for name, columns in SCALAR_INDEXES.items():
            tbl = self.table(name)
            if tbl.count_rows() < SCALAR_MIN_ROWS:
                continue
            indexed = {tuple(getattr(i, "columns", ())) for i in tbl.list_indices()}
            for column in columns:
                if (column,) not in indexed:
                    tbl.create_scalar_index(column, index_type="BTREE")
        tbl = self.table("vectors")
        rows = tbl.count_rows()
        ann = _ann_index(tbl)
        if rows >= ANN_MIN_VECTORS and (
                ann is None or getattr(ann, "num_segments", 1) > ANN_MAX_SEGMENTS):
            tbl.create_index(metric="cosine", vector_column_name="vector",
                             index_type="IVF_HNSW_SQ", replace=True,
                             num_partitions=max(1, rows // ANN_PARTITION_ROWS))

    # -- reads -------------------------------------------------------------------
    def memories(self, shas: Sequence[str]) -> dict[str, MemoryRow]:
        shas = list(dict.fromkeys(shas))
        if not shas:
            return {}
        rows = (self.table("memories").search().where(_in("sha", shas))
                .select(MEMORY_COLUMNS).limit(len(shas) + 1).to_list())
        return {r["sha"]: MemoryRow.from_arrow(r) for r in rows}

    def cards(self, shas: Sequence[str]) -> dict[str, dict]:
        """What a card says of each cited record (`CARD_COLUMNS`), by sha (one query)."""
        shas = list(dict.fromkeys(shas))
        if not shas:
            return {}
        return {r["sha"]: {c: r[c] for c in CARD_COLUMNS[1:]} for r in
                self.table("memories").search().where(_in("sha", shas))
                .select(CARD_COLUMNS).limit(len(shas) + 1).to_list()}

    def all_memories(self, levels: Sequence[str] | None = None) -> list[MemoryRow]:
        query = self.table("memories").search().select(MEMORY_COLUMNS)
        if levels:
            query = query.where(_in("level", levels))
        rows = query.limit(self.table("memories").count_rows() + 1).to_list()
        return [MemoryRow.from_arrow(r) for r in rows]

    def children_many(self, shas: Sequence[str]) -> dict[str, list[str]]:
        """The L1/L2 memories citing each of `shas` as a parent (one query)."""
        shas = list(dict.fromkeys(shas))
        if not shas:
            return {}
        wanted = set(shas)
        rows = (self.table("memories").search()
                .where(f"level != 'L0' AND array_has_any(parents, "
                       f"[{', '.join(_quote(s) for s in shas)}])")
                .select(["sha", "parents"]).limit(1_000_000).to_list())
        out: dict[str, list[str]] = {}
        for row in sorted(rows, key=lambda r: r["sha"]):
            for parent in row["parents"] or ():
                if parent in wanted:
                    out.setdefault(parent, []).append(row["sha"])
        return out

    def missing_columns(self) -> list[str]:
        """Columns of today's memories schema its stored table lacks (written by an
        older version; `Vault` adds them in place)."""
        held = set(self.table("memories").schema.names)
        return [name for name in MEMORIES.names if name not in held]

    def add_findable(self) -> None:
        """Give a memories table an older version wrote its `findable` column, each row's
        text for now, and full text over it instead of over `text` (the caller then
        writes the lessons' own)."""
        tbl = self.table("memories")
        tbl.add_columns({FULLTEXT: "text"})
        for index in tbl.list_indices():
            if getattr(index, "columns", None) == ["text"]:
                tbl.drop_index(index.name)
        self._fts_ready = False
        self._moved(["memories"])

    def count(self, name: str, where: str | None = None) -> int:
        return self.table(name).count_rows(where)

    def successor(self, sha: str) -> str | None:
        return follow_supersession(self.memories, sha)

    def search_vectors(self, vector: np.ndarray, kind: str | None = None, limit: int = 20,
                       levels: Sequence[str] | None = None,
                       include_superseded: bool = False) -> list[VectorHit]:
        tbl = self.table("vectors")
        if tbl.count_rows() == 0:
            return []
        clauses = []
        if kind:
            clauses.append(f"kind = {_quote(kind)}")
        if levels:
            clauses.append(_in("level", levels))
        if not include_superseded:
            clauses.append("live = true")
        query = tbl.search(np.asarray(vector, dtype=np.float32)).metric("cosine")
        if clauses:
            query = query.where(" AND ".join(clauses), prefilter=True)
        rows = query.limit(limit).select(["memory_sha", "kind", "_distance"]).to_list()
        return [VectorHit(r["memory_sha"], r["kind"], round(1.0 - float(r["_distance"]), 6))
                for r in rows]

    def search_fulltext(self, query: str, limit: int = 20,
                        levels: Sequence[str] | None = None,
                        include_superseded: bool = False) -> list[TextHit]:
        """BM25 over each memory's `findable` words (a lesson's with its evidence)."""
        tbl = self.table("memories")
        if not query.strip() or not self._memories_held(tbl):
            return []
        self._ensure_fts()
        clauses = []
        if levels:
            clauses.append(_in("level", levels))
        if not include_superseded:
            clauses.append("superseded_by = ''")
        search = tbl.search(_plain_words(query), query_type="fts", fts_columns=FULLTEXT)
        if clauses:
            search = search.where(" AND ".join(clauses), prefilter=True)
        rows = search.limit(limit).select(["sha", "_score"]).to_list()
        return [TextHit(r["sha"], round(float(r["_score"]), 6)) for r in rows]

    def _memories_held(self, tbl) -> bool:
        """The memories table has rows; counted until it has (a count is a round trip
        through LanceDB's event loop, and each lookup searches full text three times)."""
        if not self._has_memories:
            self._has_memories = tbl.count_rows() > 0
        return self._has_memories

    def _ensure_fts(self) -> None:
        """The full-text index exists (made once; legs search concurrently)."""
        if self._fts_ready:
            return
        from lancedb.index import FTS

        with self._fts_lock:
            tbl = self.table("memories")
            if not self._fts_ready and not any(getattr(i, "columns", None) == [FULLTEXT]
                                               for i in tbl.list_indices()):
                tbl.create_index(FULLTEXT, config=FTS(), replace=True)
            self._fts_ready = True

    def ensure_fulltext(self) -> None:
        """Create the FTS index if it is missing (`optimize` folds new rows into it)."""
        if self.table("memories").count_rows():
            self._ensure_fts()

    def reindex_fulltext(self) -> None:
        """Rebuild the FTS index so it covers every row (after bulk writes)."""
        if self.table("memories").count_rows():
            from lancedb.index import FTS

            self.table("memories").create_index(FULLTEXT, config=FTS(), replace=True)
            self._fts_ready = True

    def signature_links(self, sig_sha: str) -> list[SignatureLink]:
        return self.signature_links_many([sig_sha]).get(sig_sha, [])

    def signature_links_many(self, sig_shas: Sequence[str]) -> dict[str, list[SignatureLink]]:
        """Every link of each signature (one query), sorted by level then memory."""
        if not sig_shas:
            return {}
        rows = (self.table("signatures").search().where(_in("sig_sha", sorted(set(sig_shas))))
                .select(["sig_sha", "memory_sha", "tool", "project", "level", "message"])
                .limit(1_000_000).to_list())
        return _links_by(rows, lambda r: r["sig_sha"])

    def same_error_links(self, keys: Sequence[tuple[str, str]]) -> dict[tuple[str, str], list[SignatureLink]]:
        """Links whose (family, normalised message) is one of `keys`, whatever their
        frames: the same error raised from elsewhere (one query)."""
        wanted = set(keys)
        if not wanted:
            return {}
        rows = (self.table("signatures").search()
                .where(f"{_in('family', sorted({f for f, _ in wanted}))} AND "
                       f"{_in('message', sorted({m for _, m in wanted}))}")
                .select(["sig_sha", "memory_sha", "tool", "project", "level", "message",
                         "family"]).limit(1_000_000).to_list())
        return _links_by(rows, lambda r: (r["family"], r["message"]), wanted)

    def clause_links(self, keys: Sequence[str]) -> dict[str, list[SignatureLink]]:
        """Links whose message, its first sentence or one of its closing clauses
        (`clause_keys`) is one of `keys`: the same failure printed in other company (one
        query, a scan)."""
        wanted = set(keys)
        if not wanted:
            return {}
        long = [key for key in sorted(wanted) if len(key.split()) >= CLAUSE_WORDS]
        ends = [f"ends_with(message, {_quote(SEPARATOR + variant)})"
                for key in long for variant in sorted({key, key[:1].upper() + key[1:]})]
        starts = [f"starts_with(message, {_quote(key + SENTENCE_END)})" for key in long]
        rows = (self.table("signatures").search()
                .where(" OR ".join([_in("message", sorted(wanted))] + ends + starts))
                .select(["sig_sha", "memory_sha", "tool", "project", "level", "message"])
                .limit(1_000_000).to_list())
        return _links_by_keys(rows, lambda r: clause_keys(r["message"]), wanted)

    def signatures_of(self, memory_shas: Sequence[str]) -> list[dict]:
        if not memory_shas:
            return []
        return (self.table("signatures").search().where(_in("memory_sha", memory_shas))
                .limit(100_000).to_list())

    def seen(self, sig_sha: str) -> tuple[int, str | None]:
        """How often a signature was seen (evidence + occurrences) and when last."""
        return self.seen_many([sig_sha])[sig_sha]

    def seen_many(self, sig_shas: Sequence[str], without: str | None = None,
                  pending: dict | None = None) -> dict[str, tuple[int, str | None]]:
        """`seen` for each signature, in two queries; `without`: an evidence sha left
        out (a request's own, just recorded, is not an earlier sighting); `pending`:
        see `occurrence_times`."""
        times: dict[str, list[str]] = {sha: [] for sha in sig_shas}
        if not times:
            return {}
        where = _in("sig_sha", sorted(times))
        if without:
            where += f" AND memory_sha != {_quote(without)}"
        for r in (self.table("signatures").search().where(f"{where} AND level = 'L0'")
                  .select(["sig_sha", "at"]).limit(1_000_000).to_list()):
            times[r["sig_sha"]].append(r["at"])
        self.occurrence_times(times, pending)
        return {sha: (len(ts), max(ts)[:10] if ts else None) for sha, ts in times.items()}

    def occurrence_times(self, times: dict[str, list[str]], pending: dict | None) -> None:
        """Add each signature's occurrences to `times` (sig_sha -> ats): the table's,
        and those of `pending` (sha -> (sig_sha, at): logged, maybe not applied yet;
        taken before this reads the table) that the table does not hold yet."""
        add_occurrences(times, self.table("occurrences").search()
                        .where(_in("sig_sha", sorted(times)))
                        .select(["sha", "sig_sha", "at"]).limit(10_000_000).to_list(), pending)

    def vectors_of(self, memory_shas: Sequence[str], kind: str) -> dict[str, np.ndarray]:
        """Stored vectors of one kind for the given memories (one query)."""
        if not memory_shas:
            return {}
        rows = (self.table("vectors").search()
                .where(f"{_in('memory_sha', sorted(set(memory_shas)))} AND kind = {_quote(kind)}")
                .select(["memory_sha", "vector"]).limit(len(memory_shas) + 1).to_list())
        return {r["memory_sha"]: np.asarray(r["vector"], np.float32) for r in rows}

    def symptom_projection(self, sha: str) -> dict | None:
        rows = (self.table("projections").search().where(f"memory_sha = {_quote(sha)}")
                .limit(1).to_list())
        if not rows:
            return None
        row = rows[0]
        return {"memory_sha": row["memory_sha"], "text": row["text"],
                "lines": json.loads(row["lines"]), "dropped": json.loads(row["dropped"]),
                "model_id": row["model_id"], "prompt_sha": row["prompt_sha"],
                "projection_sha": row["projection_sha"]}

    def dump(self, name: str) -> list[dict]:
        """Every row of a table, sorted by key (for rebuild comparisons)."""
        _, key = TABLES[name]
        rows = self.table(name).to_arrow().to_pylist()
        return sorted(rows, key=lambda r: r[key])
