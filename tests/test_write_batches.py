"""Batched writes: many pieces of evidence or memories in one append give what one at a
time gives (same shas, rows, byte-identical projections and bit-equal vectors)."""

import json

from poimen.config import Settings
from poimen.engine import Engine, Evidence, Proposal
from poimen.store import FULLTEXT

import dev_rows

CASES = dev_rows.rows("cases")[:8]
TABLES = ("memories", "vectors", "signatures", "projections")


def _without_times(rows):
    return [{k: v for k, v in r.items() if k not in ("created", "at")} for r in rows]


def _one_at_a_time(engine):
    shas = [engine.ingest(c["evidence"], source="ci", tool=c.get("tool")).evidence_sha
            for c in CASES]
    return [engine.remember("L1", c["memory"], parents=[sha]) for c, sha in zip(CASES, shas)]


def _batched(engine):
    got = engine.ingest_many(Evidence(c["evidence"], "ci", c.get("tool")) for c in CASES)
    return engine.remember_many([Proposal("L1", c["memory"], [g.evidence_sha])
                                 for c, g in zip(CASES, got)])


def test_a_batch_writes_what_single_writes_write(tmp_path):
    single = Engine(tmp_path / "single", project="demo", settings=Settings())
    batched = Engine(tmp_path / "batched", project="demo", settings=Settings())
    one, many = _one_at_a_time(single), _batched(batched)
    assert [r.sha for r in one] == [r.sha for r in many]
    assert [json.dumps(r.projection) for r in one] == [json.dumps(r.projection) for r in many]
    assert any(r.projection["lines"] for r in many)
    for name in TABLES:
        assert _without_times(single.store.dump(name)) == _without_times(batched.store.dump(name))
    assert batched.vault.verify() == []


def test_repeats_in_an_ingest_batch_are_logged_once_and_not_new(tmp_path):
    engine = Engine(tmp_path / "v", project="demo", settings=Settings())
    texts = [CASES[0]["evidence"], CASES[1]["evidence"], CASES[0]["evidence"]]
    results = engine.ingest_many(Evidence(t, "ci") for t in texts)
    assert [r.new for r in results] == [True, True, False]
    assert results[0].evidence_sha == results[2].evidence_sha != results[1].evidence_sha
    logged = [e.sha for e in engine.vault.log.entries() if e.rec["type"] == "evidence"]
    assert sorted(logged) == sorted({r.evidence_sha for r in results})
    assert engine.store.count("memories") == 2
    again = engine.ingest_many([Evidence(texts[1], "ci")])
    assert again[0].evidence_sha == results[1].evidence_sha and not again[0].new


def test_housekeeping_keeps_the_fulltext_index_whole(tmp_path, monkeypatch):
    """Housekeeping folds new rows into the existing FTS index instead of rebuilding it."""
    from poimen import vault as vault_module

    monkeypatch.setattr(vault_module, "OPTIMIZE_EVERY", 4)
    engine = Engine(tmp_path / "v", project="demo", settings=Settings())
    _batched(engine)
    (index,) = [i for i in engine.store.table("memories").list_indices()
                if i.columns == [FULLTEXT]]
    added = engine.ingest_many(Evidence(f"error: record {n} past the housekeeping mark", "ci")
                               for n in range(4))
    stats = engine.store.table("memories").index_stats(index.name)
    assert stats.num_unindexed_rows == 0
    assert stats.num_indexed_rows == engine.store.count("memories") == 2 * len(CASES) + 4
    assert added[2].evidence_sha in {h.memory_sha for h in engine.store.search_fulltext(
        "record 2 past the housekeeping mark", limit=3)}
