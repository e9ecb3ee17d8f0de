"""The read path's resident copies answer exactly what the store's queries answer."""

from __future__ import annotations

import numpy as np
import pytest

from poimen import resident
from poimen import store as store_module
from poimen.engine import Engine
from poimen.resident import nearest
from poimen.signatures.clauses import clause_keys

FAILURES = [
    "npm ERR! code ERESOLVE\nnpm ERR! ERESOLVE unable to resolve dependency tree",
    "error: linker `cc` not found\n  = note: No such file or directory (os error 2)",
    "psycopg2.OperationalError: connection to server at \"localhost\", port 5432 failed",
    "release-bot: ERROR deploy step failed: could not acquire the deployment lock held by "
    "another release. Retry once the other pipeline has finished",
]
LESSONS = [
    "npm 7 installs peer dependencies: pin react-dom to the react major, or "
    "--legacy-peer-deps",
    "Rust needs a C linker: apt-get install build-essential on slim images",
    "Postgres was not up yet in CI: wait for pg_isready before the migrations",
    "Two pipelines deployed at once: serialise the deploy jobs with a concurrency group",
]


def _vault(tmp_path) -> Engine:
    engine = Engine(tmp_path / "vault", project="p")
    for failure, lesson in zip(FAILURES, LESSONS):
        evidence = engine.ingest(failure).evidence_sha
        engine.remember("L1", lesson, parents=[evidence])
    old = engine.search(LESSONS[2], kind="text", limit=1)[0]["sha"]
    engine.remember("L1", LESSONS[2] + " (and set a healthcheck)", supersedes=old,
                    without_evidence=True)
    engine.record_occurrence(engine.signatures(FAILURES[0])[0].sig_sha)
    return engine


def _primed(tmp_path):
    """(engine, its store, the store's copies, every one loaded) on the test vault."""
    engine = _vault(tmp_path)
    copy = resident.of(engine.vault.store)
    copy.prime()
    return engine, engine.vault.store, copy


def _ties_by_sha(hits: list) -> list:
    """Full-text hits with equal scores in sha order (LanceDB orders ties as it meets them)."""
    return sorted(hits, key=lambda h: (-round(h.score, 4), h.memory_sha))


def _same(store, copy, prime: bool = True) -> None:
    if prime:
        copy.prime()   # the full-text copy is loaded only there (and waited for)
    shas = [row.sha for row in store.all_memories()] + ["0" * 64]
    sigs = sorted({row["sig_sha"] for row in store.signatures_of(shas)}) + ["1" * 64]
    assert copy.memories(shas) == store.memories(shas)
    cards = store.cards(shas)
    assert copy.cards(shas) == cards and {c["level"] for c in cards.values()} >= {"L0", "L1"}
    assert sorted(map(sorted, (r.items() for r in copy.signatures_of(shas)))) == \
        sorted(map(sorted, (r.items() for r in store.signatures_of(shas))))
    assert copy.signature_links_many(sigs) == store.signature_links_many(sigs)
    assert copy.seen_many(sigs) == store.seen_many(sigs)
    messages = {row["message"] for row in store.signatures_of(shas)}
    keys = sorted({k for m in messages for k in clause_keys(m)})
    keys += [k[:1].upper() + k[1:] for k in keys] + ["a clause nobody in this vault printed"]
    clauses = store.clause_links(keys)
    assert len(clauses) > len(messages) and copy.clause_links(keys) == clauses
    assert [copy.successor(s) for s in shas] == [store.successor(s) for s in shas]
    for kind in ("text", "symptom"):
        assert {k: v.tolist() for k, v in copy.vectors_of(shas, kind).items()} == \
            {k: v.tolist() for k, v in store.vectors_of(shas, kind).items()}
    for query in FAILURES + LESSONS:   # LanceDB's own BM25, from numpy (poimen.fulltext)
        for levels, superseded in ((("L1", "L2"), True), (("L0",), False), (None, False)):
            ours = _ties_by_sha(copy.search_fulltext(query, 10, levels, superseded))
            theirs = _ties_by_sha(store.search_fulltext(query, 10, levels, superseded))
            assert [h.memory_sha for h in ours] == [h.memory_sha for h in theirs]
            assert np.allclose([h.score for h in ours], [h.score for h in theirs], rtol=1e-5)
        assert copy.search_fulltext(query, 10)


def test_resident_copies_answer_as_the_store_does(tmp_path):
    engine = _vault(tmp_path)
    store = engine.vault.store
    copy = resident.of(store)
    _same(store, copy)
    query = engine.embedder.embed_one(FAILURES[1])
    for kind, levels, superseded in (("text", ("L1", "L2"), True),
                                     ("symptom", ("L1",), False), (None, None, False)):
        ours = copy.search_vectors(query, kind, 10, levels, superseded)
        theirs = store.search_vectors(query, kind, 10, levels, superseded)
        assert [h.memory_sha for h in ours] == [h.memory_sha for h in theirs]
        assert np.allclose([h.score for h in ours], [h.score for h in theirs], atol=2e-6)


def test_resident_copies_follow_writes_from_another_engine(tmp_path):
    engine = _vault(tmp_path)
    copy = resident.of(engine.vault.store)
    copy.prime()
    held = copy._memories()   # what the copy holds, not what a fallback query finds
    other = Engine(tmp_path / "vault", project="p")
    new = other.remember("L1", "A new lesson about Docker layer caching on CI runners",
                         without_evidence=True).sha
    assert new not in copy._memories()   # this engine has not looked yet
    engine.vault.catch_up()
    assert set(copy._memories()) == set(held) | {new}
    queries = FAILURES + LESSONS + ["Docker layer caching on CI"]
    before = [copy.search_fulltext(q, 10) for q in queries]   # grown by the new row
    engine.vault.settle()   # LanceDB's index takes the new row in (it scored it apart)
    _same(engine.vault.store, copy)
    assert [copy.search_fulltext(q, 10) for q in queries] == before


def test_seen_counts_come_from_the_occurrences_copy_and_count_a_pending_record_once(
        tmp_path, monkeypatch):
    engine, store, copy = _primed(tmp_path)
    sig = engine.signatures(FAILURES[0])[0].sig_sha
    applied = [r for r in store.dump("occurrences") if r["sig_sha"] == sig]
    assert applied
    alone = store.seen_many([sig, "1" * 64])
    pending = {applied[0]["sha"]: (sig, applied[0]["at"]),          # applied already
               "f" * 64: (sig, "2999-01-01T00:00:00Z")}              # not yet
    with_pending = store.seen_many([sig], pending=pending)
    assert with_pending[sig] == (alone[sig][0] + 1, "2999-01-01")
    monkeypatch.setattr(store, "occurrence_times", lambda *a: pytest.fail("asked LanceDB"))
    assert copy.seen_many([sig, "1" * 64]) == alone
    assert copy.seen_many([sig], pending=pending) == with_pending


def test_a_cards_provenance_comes_from_the_copies(tmp_path, monkeypatch):
    """What a hover's card says of the records its lessons cite, without a query."""
    engine, store, copy = _primed(tmp_path)
    body = engine.context({"signature_source": FAILURES[1], "scope": "all-projects"})
    cited = [p for item in body["lessons"] for p in item.get("parents") or []]
    lessons = [item["sha"] for item in body["lessons"]]
    assert cited and lessons
    expected = store.cards(cited + lessons)
    monkeypatch.setattr(store, "cards", lambda shas: pytest.fail(f"asked LanceDB for {shas}"))
    assert engine.provenance(cited + lessons) == expected
    assert {c["level"] for c in expected.values()} == {"L0", "L1"}


def test_a_copy_asks_lancedb_its_version_only_after_rows_may_have_moved(tmp_path,
                                                                       monkeypatch):
    engine, store, copy = _primed(tmp_path)
    asked = []
    opened = store.table
    monkeypatch.setattr(store, "table", lambda name: asked.append(name) or opened(name))
    held = copy._memories()
    copy._signatures(), copy._vectors(), copy._memories()
    assert asked == []   # nothing moved since the copies were found current
    new = engine.remember("L1", "A write of this process: pin the base image digest so "
                          "CI and laptops build alike", without_evidence=True).sha
    assert new in copy._memories() and set(copy._memories()) == set(held) | {new}
    assert "memories" in asked
    asked.clear()
    engine.vault.catch_up()   # tables written in the last STAMP_SETTLE_S: checked out
    copy._memories(), copy._signatures(), copy._vectors()
    assert sorted(asked) == ["memories", "signatures", "vectors"]
    _same(store, copy)


def test_a_refresh_moves_only_the_tables_another_process_wrote(tmp_path, monkeypatch):
    """Each lookup refreshes; a table whose `_versions` folder is unchanged is not checked
    out, and the copies of other tables do not ask LanceDB their versions again."""
    engine = _vault(tmp_path)
    store = engine.vault.store
    copy = resident.of(store)
    monkeypatch.setattr(store_module, "STAMP_SETTLE_S", 0.0)
    engine.vault.catch_up()
    copy.prime()
    asked = []
    opened = store.table
    monkeypatch.setattr(store, "table", lambda name: asked.append(name) or opened(name))
    engine.vault.catch_up()   # nobody wrote
    copy.prime()
    assert asked == []
    other = Engine(tmp_path / "vault", project="p")
    sig = other.signatures(FAILURES[1])[0].sig_sha
    seen = copy.seen_many([sig])[sig][0]
    other.record_occurrence(sig)
    engine.vault.catch_up()
    copy.prime()
    assert asked == ["occurrences"]   # an occurrence only: the other copies stay
    assert copy.seen_many([sig])[sig][0] == seen + 1
    new = other.remember("L1", "Mount the docker socket read-only in CI", without_evidence=True)
    engine.vault.catch_up()
    copy.prime()
    assert "memories" in asked and new.sha in copy._memories()
    _same(store, copy)


def _by_id(held: dict) -> dict:
    """A vectors copy as {id: its fields}, with each row's kind block checked (the row
    order within a block is the order rows arrived in, which a fresh load may not keep)."""
    out = {}
    for kind, (lo, hi) in held["blocks"].items():
        for row in range(lo, hi):
            key = held["ids"][row].as_py()
            assert held["kind"][row] == kind and held["row"][key] == (kind, row - lo)
            out[key] = (held["matrix"][row].tobytes(), float(held["norms"][row]),
                        held["memory_sha"][row], bool(held["live"][row]),
                        int(held["level"][row]))
    assert len(out) == len(held["ids"])
    return out


def _write_more(engine) -> str:
    """A supersession (the old lesson's row is rewritten), new evidence and a lesson on
    it; the superseded lesson's sha."""
    old = engine.search(LESSONS[0], kind="text", limit=1)[0]["sha"]
    engine.remember("L1", LESSONS[0] + " (peer ranges widened in 18.3)", supersedes=old,
                    without_evidence=True)
    evidence = engine.ingest("fatal: unable to access 'https://git.example/x.git/': "
                             "SSL certificate problem: self signed certificate").evidence_sha
    engine.remember("L1", "The proxy re-signs TLS: point git at the corporate CA bundle",
                    parents=[evidence])
    return old


def _links_alike(grown, fresh, store) -> None:
    rows = store.dump("signatures")
    assert grown.table.num_rows == fresh.table.num_rows == len(rows)
    for key in (resident.BY_SIG, resident.BY_MEMORY, resident.BY_ERROR):
        values = sorted({tuple(r[c] for c in key) for r in rows}) + [("0" * 64,) * len(key)]
        assert grown.rows(key, values) == fresh.rows(key, values)
    clauses = sorted({(k,) for r in rows for k in clause_keys(r["message"])})
    assert clauses and grown.rows(resident.BY_CLAUSE, clauses) == \
        fresh.rows(resident.BY_CLAUSE, clauses)


def test_memory_and_link_copies_grow_by_the_rows_written_as_a_fresh_load_would(
        tmp_path, monkeypatch):
    """After writes (evidence, lessons, a supersession, which rewrites the old row) the
    memories and signature-link copies read only the rows of newer fragments
    (`resident._since`) and hold what copies loaded afresh hold; after a compaction too."""
    engine, store, copy = _primed(tmp_path)
    reads = []
    since = resident._since
    monkeypatch.setattr(resident, "_since", lambda tbl, fragment, *rest: (
        reads.append((tbl.name, fragment)), since(tbl, fragment, *rest))[1])
    old = _write_more(engine)
    memories, links = copy._memories(), copy._signatures()
    assert {name for name, _ in reads} == {"memories", "signatures"}
    assert all(fragment >= 0 for _, fragment in reads), "a copy was loaded anew, not grown"
    fresh = resident.Resident(store)
    assert memories == fresh._memories() and memories[old].superseded_by
    _links_alike(links, fresh._signatures(), store)
    engine.vault.settle()   # compacts: every row lands in a new fragment
    fresh = resident.Resident(store)
    assert copy._memories() == fresh._memories()
    _links_alike(copy._signatures(), fresh._signatures(), store)
    _same(store, copy)


def test_vector_copy_grows_with_writes_as_a_fresh_load_would(tmp_path, monkeypatch):
    """After writes the copy reads only the new rows and every row's live flag; what it
    then holds equals a copy loaded from scratch (appends and a supersession)."""
    engine = _vault(tmp_path)
    copy = resident.of(engine.vault.store)
    first = copy._vectors()
    grown_from = []
    build = resident._vector_copy
    monkeypatch.setattr(resident, "_vector_copy", lambda held, table: (
        grown_from.append(held is not None), build(held, table))[1])
    old = _write_more(engine)
    grown = copy._vectors()
    assert grown_from and all(grown_from), "the copy was reloaded, not grown"
    assert len(grown["ids"]) > len(first["ids"])
    kind, place = grown["row"][f"{old}:text"]
    assert not grown["live"][grown["blocks"][kind][0] + place]   # the flag followed the write
    tbl = engine.vault.store.table("vectors")
    assert _by_id(grown) == _by_id(build(None, tbl.to_arrow()))
    _same(engine.vault.store, copy)


def test_nearest_is_an_exact_sort_with_ties_by_row():
    rng = np.random.default_rng(7)
    matrix = rng.normal(size=(200, 8)).astype(np.float32)
    matrix[50:90] = matrix[3]   # ties
    norms = np.linalg.norm(matrix, axis=1)
    rows = np.flatnonzero(rng.random(200) < 0.7)
    query = matrix[3] + np.float32(0.01)
    got, distance = nearest(matrix, norms, rows, query, 25)
    dots = np.einsum("ij,j->i", matrix, query)
    full = (np.float32(1.0) - dots[rows] / (norms[rows] * np.linalg.norm(query))
            ).astype(np.float32)
    order = np.lexsort((rows, full))[:25]
    assert got.tolist() == rows[order].tolist()
    assert distance.tolist() == full[order].tolist()


def test_past_the_bound_the_store_answers_and_the_lookup_is_unchanged(tmp_path, monkeypatch):
    """Past `MAX_ROWS` the copies step aside; the lookup's body stays the same."""
    engine = _vault(tmp_path)
    request = {"signature_source": FAILURES[0], "scope": "all-projects"}
    held = engine.context(dict(request))
    assert resident.of(engine.vault.store)._vectors() is not None
    monkeypatch.setattr(resident, "MAX_ROWS", 2)
    fallback = Engine(tmp_path / "vault", project="p")
    assert resident.of(fallback.vault.store)._vectors() is None
    answered = fallback.context(dict(request))
    assert [(i["sha"], i["tier"]) for i in answered["lessons"]] == \
        [(i["sha"], i["tier"]) for i in held["lessons"]]
    assert answered["lessons"] and answered["lessons"][0]["tier"] == 1


def test_while_a_copy_loads_the_store_answers(tmp_path):
    """A lookup never waits for another thread's load: the store answers meanwhile."""
    engine = _vault(tmp_path)
    store = engine.vault.store
    copy = resident.of(store)
    request = {"signature_source": FAILURES[0], "scope": "all-projects"}
    with_copies = engine.context(dict(request))
    other = Engine(tmp_path / "vault", project="p")
    other.remember("L1", "Pin the runner image: the new one dropped python3-venv",
                   without_evidence=True)
    engine.vault.catch_up()                          # the memories copy is now stale
    held = [copy._loading[name] for name in ("memories", "signatures", "vectors",
                                              "fulltext")]
    for lock in held:
        lock.acquire()                               # as if a loader were at work
    try:
        assert copy._memories() is None and copy._vectors() is None
        assert copy._fulltext() is None
        _same(store, copy, prime=False)   # prime would wait for the loaders
        during = engine.context(dict(request))
    finally:
        for lock in held:
            lock.release()
    assert [(i["sha"], i["tier"]) for i in during["lessons"]] == \
        [(i["sha"], i["tier"]) for i in with_copies["lessons"]]
    copy.prime()
    assert copy._memories() is not None and copy._vectors() is not None
    assert copy._fulltext() is not None


def test_keyed_rows_find_each_value_once_in_the_order_asked_rows_in_table_order(monkeypatch):
    import pyarrow as pa

    from poimen import keyed

    table = pa.table({"a": ["x", "y", "x", "z", "x"], "b": ["1", "1", "2", "1", "1"],
                      "n": [0, 1, 2, 3, 4]})
    rows = keyed.KeyedRows(table, ("a",), ("a", "b"))
    assert [r["n"] for r in rows.rows(("a",), [("z",), ("x",), ("z",), ("w",)])] == [3, 0, 2, 4]
    assert [r["n"] for r in rows.rows(("a", "b"), [("x", "1"), ("y", "2")])] == [0, 4]
    assert rows.rows(("a",), []) == []
    # every value hashing alike: rows are still told apart by their values
    monkeypatch.setattr(keyed, "hash", lambda value: 7, raising=False)
    colliding = keyed.KeyedRows(table, ("a",))
    assert [r["n"] for r in colliding.rows(("a",), [("y",), ("x",)])] == [1, 0, 2, 4]
