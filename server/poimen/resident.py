"""In-memory copies of what the read path looks up, for one table version.

A filtered LanceDB query costs ~5 ms of CPU even on a 2k-row table (planning and
hand-offs to its background loop, measured on the 1k bench vault), and a lookup made a
dozen of them. `Resident` answers memory rows (L1, L2, R only: evidence text stays on
disk), what a card says of cited evidence (`cards`), signature links and seen counts,
stored vectors and the vector search (exact cosine in float32 over a matrix; LanceDB's
own float32 rounding can differ in the sixth decimal), and the full-text search
(`poimen.fulltext`: LanceDB's BM25 over numpy postings) from copies of the `memories`,
`signatures`, `occurrences` and `vectors` tables (the gate's near-duplicate search uses
the vectors copy too). A copy follows its table's version: the memories and
signature-link copies read the rows of newer fragments (`_since`), the vectors copy its
new rows and live flags, the full-text copy is rebuilt from the new and grown rows
behind the store, the occurrences copy is reloaded; each is held only while the table
has at most `MAX_ROWS` rows (at the 10k bench vault: a 41 MB vector matrix, 8 MB of
signature links kept as Arrow columns (`KeyedRows`), ~10 MB of memory rows as Python
objects; loaded in ~0.4 s); past that, while another thread is loading a copy, and for
everything else, it is the store itself (with its ANN and BTREE indexes). It reads,
never writes.
"""

from __future__ import annotations

import atexit
import threading
from typing import Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from . import heap
from .embed import DIM
from .fulltext import FullText, Rows, Words
from .keyed import KeyedRows
from .signatures.clauses import clause_keys
from .store import (ANN_MIN_VECTORS, CARD_COLUMNS, FULLTEXT, LEVELS, MEMORY_COLUMNS,
                    SIGNATURES, MemoryRow, SignatureLink, Store, TextHit, VectorHit, _in,
                    _links_by, _links_by_keys, add_occurrences, follow_supersession,
                    level_codes)

MAX_ROWS = ANN_MIN_VECTORS   # rows held per table; past it the store's indexes answer
GROW_MAX_ROWS = 4096         # new vector rows read into a copy; more, and it is reloaded
BY_SIG, BY_MEMORY, BY_ERROR = ("sig_sha",), ("memory_sha",), ("family", "message")
BY_SHA = ("sha",)
BY_CLAUSE = "clause"


def of(store: Store) -> "Resident":
    """The store's resident copies (one per connection; a rebuild starts afresh)."""
    held = getattr(store, "_resident", None)
    if held is None or held.db is not store.db:
        held = store._resident = Resident(store)
    return held


def nearest(matrix: np.ndarray, norms: np.ndarray, rows: np.ndarray, query: np.ndarray,
            limit: int) -> tuple[np.ndarray, np.ndarray]:
    """The `limit` rows (of `rows`) with the least cosine distance to `query`, ties by
    row: (rows, distances). Dot products over the whole (contiguous) matrix, no copy."""
    dots = np.einsum("ij,j->i", matrix, query)   # one pass over memory, no BLAS threads
    distance = (np.float32(1.0) - dots[rows] / (norms[rows] * np.linalg.norm(query))
                ).astype(np.float32)
    keep = np.arange(len(rows))
    if len(rows) > limit:
        keep = np.flatnonzero(distance <= np.partition(distance, limit - 1)[limit - 1])
    order = keep[np.lexsort((rows[keep], distance[keep]))][:limit]
    return rows[order], distance[order]


def _sorted_matrix(vectors: pa.ChunkedArray, order: np.ndarray) -> np.ndarray:
    """The vectors as one float32 matrix in `order`, written chunk by chunk into place
    (whole-column copies and a reordering copy took ~110 MB beside a 41 MB matrix at
    the 10k bench vault's 28k vectors)."""
    matrix = np.empty((len(order), DIM), np.float32)
    place = np.empty(len(order), np.intp)
    place[order] = np.arange(len(order))
    start = 0
    for chunk in vectors.chunks:
        stop = start + len(chunk)
        matrix[place[start:stop]] = np.asarray(chunk.flatten(), np.float32).reshape(-1, DIM)
        start = stop
    return matrix


def _vector_copy(held: dict | None, table: pa.Table | None) -> dict:
    """The vectors copy: one contiguous block per kind of `held`'s rows (with their
    current `live` flags) followed by `table`'s rows of that kind. `row` maps an id to
    (kind, place in its block): rows are only appended to a block, so it is extended
    in place and shared with `held` (whose readers check the place is in their block)."""
    parts = [] if held is None else [held]
    row = {} if held is None else held["row"]
    if table is not None and table.num_rows:
        kind = np.asarray(table["kind"].to_pylist(), dtype=object)
        order = np.argsort(kind, kind="stable")
        matrix = _sorted_matrix(table["vector"], order)
        level = np.asarray(table["level"].to_pylist(), dtype=object)[order]
        parts.append({
            "matrix": matrix, "norms": np.linalg.norm(matrix, axis=1), "kind": kind[order],
            "memory_sha": np.asarray(table["memory_sha"].to_pylist(), dtype=object)[order],
            "live": np.asarray(table["live"].to_pylist(), bool)[order],
            "level": level_codes(level),
            "ids": table["id"].combine_chunks().take(pa.array(order))})
    kinds = sorted({k for part in parts for k in part["kind"].tolist()})
    pieces = {name: [] for name in ("matrix", "norms", "kind", "memory_sha", "live",
                                    "level", "ids")}
    for k in kinds:
        placed = 0
        for part in parts:
            lo = int(np.searchsorted(part["kind"], k, "left"))
            hi = int(np.searchsorted(part["kind"], k, "right"))
            for name in pieces:
                pieces[name].append(part[name][lo:hi])
            if part is not held:
                row.update((key, (k, placed + i))
                           for i, key in enumerate(part["ids"][lo:hi].to_pylist()))
            placed += hi - lo
    if not kinds:
        return {"matrix": np.zeros((0, DIM), np.float32), "norms": np.zeros(0, np.float32),
                "kind": np.zeros(0, object), "memory_sha": np.zeros(0, object),
                "live": np.zeros(0, bool), "level": np.zeros(0, np.int8),
                "ids": pa.array([], pa.string()), "blocks": {}, "row": row}
    if len(parts) == 1:   # a fresh load: its one part is already in kind order
        copy = {name: parts[0][name] for name in pieces}
    else:
        copy = {name: np.concatenate(arrays) for name, arrays in pieces.items()
                if name != "ids"}
        copy["ids"] = pa.concat_arrays(pieces["ids"])
    kind = copy["kind"]
    copy["blocks"] = {k: (int(np.searchsorted(kind, k, "left")),
                          int(np.searchsorted(kind, k, "right"))) for k in kinds}
    copy["row"] = row
    return copy


_filling: set[threading.Thread] = set()   # copies brought up to date behind the store


@atexit.register
def _join_filling() -> None:
    """A process that leaves while a thread reads LanceDB can hang or crash in its
    finalisation: the reads end first."""
    for thread in list(_filling):
        thread.join()


def _since(tbl, fragment: int, where: str | None, columns: list[str]) -> tuple[pa.Table, int]:
    """The rows of `tbl` (those `where` selects) in fragments newer than `fragment`, and
    the newest fragment read (`fragment` -1: every row). Lance numbers a row
    `fragment << 32 | offset`, a new fragment above every earlier one, and writes an
    updated row anew in a new fragment: these are the rows added or rewritten since a
    copy read up to `fragment`, in table order."""
    where = " AND ".join(f"({w})" for w in (f"_rowid >= {(fragment + 1) << 32}", where) if w)
    rows = (tbl.search().where(where).with_row_id(True).select(columns)
            .limit(tbl.count_rows() + 1).to_arrow())
    ids = rows["_rowid"].to_numpy()
    newest = int(ids.max() >> np.uint64(32)) if len(ids) else -1
    return rows.drop_columns(["_rowid"]), max(fragment, newest)


def _keyed(tbl, where: str | None, columns: list[str], held: KeyedRows | None,
           make) -> KeyedRows | None:
    """A `KeyedRows` copy of `tbl`'s rows (those `where` selects), None past MAX_ROWS:
    `held` with the rows of newer fragments after its own, or `make(rows, fragment)` of
    every row when nothing is held or the count disagrees (a rebuild, a compaction, a
    row rewritten by an update)."""
    count = tbl.count_rows(where)
    if count > MAX_ROWS:
        return None
    if held is not None:
        rows, fragment = _since(tbl, held.fragment, where, columns)
        if held.table.num_rows + rows.num_rows == count:
            return held.extend(rows, fragment)
    return make(*_since(tbl, -1, where, columns))


class MemoryRows(dict):
    """The memories copy: sha -> MemoryRow, and the newest fragment read (`_since`)."""

    fragment = -1

    @classmethod
    def read(cls, table: pa.Table, fragment: int, held: dict | None = None) -> "MemoryRows":
        rows = cls(held or {})
        rows.update((r["sha"], MemoryRow.from_arrow(r)) for r in table.to_pylist())
        rows.fragment = fragment
        return rows

    def merged(self, table: pa.Table, fragment: int) -> "MemoryRows":
        return MemoryRows.read(table, fragment, self)


def _give_back() -> None:
    """Return the heap freed after reading a table to the system: Arrow's pool, and the C
    allocator's, which LanceDB reads through (glibc kept ~50 MB of a 46 MB read of the
    10k bench vault's vectors until trimmed)."""
    pa.default_memory_pool().release_unused()
    heap.trim()


class Resident:
    def __init__(self, store: Store):
        self.store, self.db = store, store.db
        self._copies: dict[str, tuple[int, object, int]] = {}   # version, copy, generation
        self._children_of: tuple[dict, dict] | None = None   # (memories copy, its index)
        self._loading = {name: threading.Lock() for name in (
            "memories", "evidence", "signatures", "vectors", "fulltext", "occurrences")}
        self.answered = threading.Event()   # a lookup other than the warm-up answered

    def __getattr__(self, name: str):
        return getattr(self.store, name)

    def prime(self, full_text: bool = True) -> None:
        """Load every copy now (servers do it beside their first answers; the full-text
        copy, whose load holds the interpreter longest, after the first, see `answered`)."""
        self._memories(wait=True)
        self._signatures(wait=True)
        self._vectors(wait=True)
        self._occurrences(wait=True)
        if full_text:
            self._evidence(load=True)
            self._fulltext(load=True)

    def _copy(self, name: str, load, grow=None, table: str | None = None,
              behind: bool = False, wait: bool = False):
        """The copy for the table's current version: `load(tbl)`, or `grow(tbl, held)`
        from the copy of an older version when given. None while another thread is
        loading it: the store answers meanwhile, so no lookup waits for a load (`wait`:
        this caller does). `behind`: a copy that is held but stale is brought up to date
        on a thread of its own, the store answering until it is. The version is asked of
        LanceDB only when the store's generation of the table moved since the copy was
        last found current (each ask is a round trip through LanceDB's event loop,
        queued behind a lookup's other queries). `table`: the table copied, when it is
        not `name`."""
        generation = self.store.generation.get(table or name, 0)   # before the version
        held = self._copies.get(name)
        if held is not None and held[2] == generation:
            return held[1]
        tbl = self.store.table(table or name)
        version = tbl.version
        if held is not None and held[0] == version:
            self._copies[name] = (version, held[1], generation)
            return held[1]
        if not self._loading[name].acquire(blocking=wait):
            return None
        if behind and held is not None and not wait:
            filling = threading.Thread(target=self._fill, name=f"poimen-{name}", daemon=True,
                                       args=(name, tbl, version, generation, load, grow))
            _filling.add(filling)
            filling.start()
            return None
        return self._fill(name, tbl, version, generation, load, grow)

    def _fill(self, name: str, tbl, version: int, generation: int, load, grow):
        """`_copy`'s load or grow, with its loading lock held (released here)."""
        try:
            held = self._copies.get(name)
            if held is None or held[0] != version:
                older = held[1] if held else None
                copy = grow(tbl, older) if grow and older is not None else load(tbl)
                held = self._copies[name] = (version, copy, generation)
                _give_back()
            return held[1]
        finally:
            self._loading[name].release()
            _filling.discard(threading.current_thread())

    def _memories(self, wait: bool = False) -> "MemoryRows | None":
        where = "level != 'L0'"

        def load(tbl):
            rows = tbl.count_rows(where)
            if rows > MAX_ROWS:
                return None
            return MemoryRows.read(*_since(tbl, -1, where, MEMORY_COLUMNS))

        def grow(tbl, held):
            """Rows are added, or rewritten by an update (a lesson superseded), never
            removed but by a rebuild: the rows of newer fragments replace or join the
            held ones; a count that disagrees (a rebuild, a compaction) loads anew."""
            rows = held.merged(*_since(tbl, held.fragment, where, MEMORY_COLUMNS))
            return rows if len(rows) == tbl.count_rows(where) <= MAX_ROWS else load(tbl)
        return self._copy("memories", load, grow, wait=wait)

    def _evidence(self, load: bool = False) -> KeyedRows | None:
        """Evidence rows without their text (`CARD_COLUMNS`): what a card says of the
        records its lessons cite, grown by newer fragments (`_keyed`); loaded first
        only by `prime` (with the full-text copy, after a server's first answer), never
        on a card's path."""
        if not load and "evidence" not in self._copies:
            return None

        def read(tbl, held=None):
            return _keyed(tbl, "level = 'L0'", CARD_COLUMNS, held, lambda rows, fragment:
                          KeyedRows(rows, BY_SHA, fragment=fragment))
        return self._copy("evidence", read, read, "memories", wait=load)

    def _signatures(self, wait: bool = False) -> KeyedRows | None:
        """Signature links; only added (the first link stands), so grown."""
        def read(tbl, held=None):
            return _keyed(tbl, None, list(SIGNATURES.names), held, lambda rows, fragment:
                          KeyedRows(rows, BY_SIG, BY_MEMORY, BY_ERROR, fragment=fragment,
                                    derived={BY_CLAUSE: ("message", clause_keys)}))
        return self._copy("signatures", read, read, wait=wait)

    def _vectors(self, wait: bool = False):
        def load(tbl):
            if tbl.count_rows() > MAX_ROWS:
                return None
            return _vector_copy(None, tbl.to_arrow())

        def grow(tbl, held):
            """Vector rows are only added, or flagged not live: read the new rows and
            every row's flag (not the whole matrix, which took ~1 s per write at 50k)."""
            rows = tbl.count_rows()
            if rows > MAX_ROWS:
                return None
            flags = tbl.search().select(["id", "live"]).limit(rows + 1).to_arrow()
            ids = flags["id"].combine_chunks()
            kept = pc.is_in(ids, value_set=held["ids"])
            new_ids = ids.filter(pc.invert(kept)).to_pylist()
            if pc.sum(kept).as_py() != len(held["ids"]) or len(new_ids) > GROW_MAX_ROWS:
                return load(tbl)   # rows went away (a rebuild), or too many to fetch
            live = flags["live"].combine_chunks().take(
                pc.index_in(held["ids"], value_set=ids))
            added = (tbl.search().where(_in("id", new_ids)).limit(len(new_ids) + 1)
                     .to_arrow() if new_ids else None)
            return _vector_copy(dict(held, live=live.to_numpy(zero_copy_only=False)), added)
        return self._copy("vectors", load, grow, wait=wait)

    def _occurrences(self, wait: bool = False) -> KeyedRows | None:
        """Occurrence records by signature. Reloaded whole when the table moves: a
        lookup's own records are applied in batches (`deferred`), and the table is small
        beside the others (1.2k rows at the 10k bench vault, read in ~3 ms)."""
        def load(tbl):
            rows = tbl.count_rows()
            if rows > MAX_ROWS:
                return None
            return KeyedRows(tbl.search().select(["sha", "sig_sha", "at"])
                             .limit(rows + 1).to_arrow(), BY_SIG)
        return self._copy("occurrences", load, wait=wait)

    def _fulltext(self, load: bool = False) -> FullText | None:
        """The memories' full-text index; a new table version re-reads the words of new
        rows and of rows whose text grew only. Loaded first only by `prime` (`load`),
        never on a lookup's path: it takes ~0.7 s of CPU at the 10k bench vault."""
        if not load and "fulltext" not in self._copies:
            return None

        def read(tbl, held=None):
            rows = tbl.count_rows()
            if rows > MAX_ROWS:
                return None
            table = tbl.search().select(["sha", "level", "superseded_by", FULLTEXT]) \
                .limit(rows + 1).to_arrow()
            words = held.words if held is not None else Words()
            return FullText(words, Rows.read(words, table, held and held.rows))
        return self._copy("fulltext", read, read, "memories", behind=True, wait=load)

    # -- the store's reads, from the copies --------------------------------------------
    def search_vectors(self, vector: np.ndarray, kind: str | None = None, limit: int = 20,
                       levels: Sequence[str] | None = None,
                       include_superseded: bool = False) -> list[VectorHit]:
        """Exact cosine top `limit`, as LanceDB's flat scan computes it (ties by row)."""
        held = self._vectors()
        if held is None:
            return self.store.search_vectors(vector, kind, limit, levels, include_superseded)
        start, stop = held["blocks"].get(kind, (0, 0)) if kind else (0, len(held["kind"]))
        mask = np.ones(stop - start, dtype=bool)
        if levels:
            mask &= np.isin(held["level"][start:stop], [LEVELS.index(v) for v in levels
                                                         if v in LEVELS])
        if not include_superseded:
            mask &= held["live"][start:stop]
        rows, distance = nearest(held["matrix"][start:stop], held["norms"][start:stop],
                                 np.flatnonzero(mask), np.asarray(vector, np.float32), limit)
        rows += start
        return [VectorHit(held["memory_sha"][row], held["kind"][row],
                          round(1.0 - float(d), 6)) for row, d in zip(rows, distance)]

    def search_fulltext(self, query: str, limit: int = 20,
                        levels: Sequence[str] | None = None,
                        include_superseded: bool = False) -> list[TextHit]:
        """LanceDB's BM25 ranking and scores (`poimen.fulltext`)."""
        held = self._fulltext()
        if held is None:
            return self.store.search_fulltext(query, limit, levels, include_superseded)
        return [TextHit(sha, round(score, 6)) for sha, score in
                held.search(query, limit, levels, include_superseded)]

    def memories(self, shas: Sequence[str]) -> dict[str, MemoryRow]:
        held = self._memories()
        if held is None:
            return self.store.memories(shas)
        found = {sha: held[sha] for sha in shas if sha in held}
        missing = [sha for sha in dict.fromkeys(shas) if sha not in held]
        return {**found, **self.store.memories(missing)} if missing else found

    def cards(self, shas: Sequence[str]) -> dict[str, dict]:
        """`Store.cards`, from the memories and evidence copies."""
        memories, evidence = self._memories(), self._evidence()
        shas = list(dict.fromkeys(shas))
        found = {} if evidence is None else {
            r["sha"]: {c: r[c] for c in CARD_COLUMNS[1:]}
            for r in evidence.rows(BY_SHA, ((sha,) for sha in shas))}
        for sha in shas if memories is not None else ():
            row = memories.get(sha)
            if row is not None:
                found[sha] = {c: getattr(row, c) for c in CARD_COLUMNS[1:]}
        missing = [sha for sha in shas if sha not in found]
        return {**found, **self.store.cards(missing)} if missing else found

    def successor(self, sha: str) -> str | None:
        return follow_supersession(self.memories, sha)

    def children_many(self, shas: Sequence[str]) -> dict[str, list[str]]:
        held = self._memories()
        if held is None:
            return self.store.children_many(shas)
        children = self._children(held)
        return {sha: children[sha] for sha in dict.fromkeys(shas) if sha in children}

    def _children(self, held: dict) -> dict[str, list[str]]:
        """parent sha -> the memories citing it, for the held memories copy."""
        made = self._children_of
        if made is None or made[0] is not held:
            index: dict[str, list[str]] = {}
            for sha in sorted(held):
                for parent in held[sha].parents:
                    index.setdefault(parent, []).append(sha)
            made = self._children_of = (held, index)
        return made[1]

    def vectors_of(self, memory_shas: Sequence[str], kind: str) -> dict[str, np.ndarray]:
        held = self._vectors()
        if held is None:
            return self.store.vectors_of(memory_shas, kind)
        lo, hi = held["blocks"].get(kind, (0, 0))
        places = {sha: held["row"].get(f"{sha}:{kind}", (kind, hi))[1] for sha in memory_shas}
        return {sha: held["matrix"][lo + i].copy() for sha, i in places.items() if i < hi - lo}

    def signature_links_many(self, sig_shas: Sequence[str]) -> dict[str, list[SignatureLink]]:
        held = self._signatures()
        if held is None:
            return self.store.signature_links_many(sig_shas)
        return _links_by(held.rows(BY_SIG, ((sha,) for sha in sig_shas)),
                         lambda r: r["sig_sha"])

    def same_error_links(self, keys: Sequence[tuple[str, str]]
                         ) -> dict[tuple[str, str], list[SignatureLink]]:
        held = self._signatures()
        if held is None:
            return self.store.same_error_links(keys)
        return _links_by(held.rows(BY_ERROR, (tuple(key) for key in keys)),
                         lambda r: (r["family"], r["message"]))

    def clause_links(self, keys: Sequence[str]) -> dict[str, list[SignatureLink]]:
        held = self._signatures()
        if held is None:
            return self.store.clause_links(keys)
        rows = {r["id"]: r for r in held.rows(BY_CLAUSE, ((key,) for key in keys))}
        return _links_by_keys(rows.values(), lambda r: clause_keys(r["message"]), set(keys))

    def signatures_of(self, memory_shas: Sequence[str]) -> list[dict]:
        held = self._signatures()
        if held is None:
            return self.store.signatures_of(memory_shas)
        return held.rows(BY_MEMORY, ((sha,) for sha in memory_shas))

    def seen_many(self, sig_shas: Sequence[str], without: str | None = None,
                  pending: dict | None = None) -> dict[str, tuple[int, str | None]]:
        """`Store.seen_many`, from the signatures and occurrences copies."""
        held = self._signatures()
        if held is None:
            return self.store.seen_many(sig_shas, without, pending)
        times: dict[str, list[str]] = {sha: [] for sha in sig_shas}
        for r in held.rows(BY_SIG, ((sha,) for sha in times)):
            if r["level"] == "L0" and r["memory_sha"] != without:
                times[r["sig_sha"]].append(r["at"])
        if times:
            self.occurrence_times(times, pending)
        return {sha: (len(ts), max(ts)[:10] if ts else None) for sha, ts in times.items()}

    def occurrence_times(self, times: dict[str, list[str]], pending: dict | None) -> None:
        held = self._occurrences()
        if held is None:
            return self.store.occurrence_times(times, pending)
        add_occurrences(times, held.rows(BY_SIG, ((sha,) for sha in times)), pending)
