"""Housekeeping: after many writes LanceDB versions and disk stay bounded (compaction and
version cleanup), and the full-text index always sees the newest rows.

The suite runs 1,000 writes; `make stress` runs 10,000 (tests/stress). Version cleanup
keeps versions younger than `store.KEEP_VERSIONS_FOR` (readers in other processes may
still use them); the test sets it to zero so the bound shows within one run.
"""
from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest

from poimen import store as store_module
from poimen.engine import Engine
from poimen.vault import OPTIMIZE_EVERY

WRITES = 1_000
EVIDENCE_EVERY = 10   # one in ten writes is evidence (a memory row); the rest occurrences


def _disk_bytes(root: Path) -> int:
    return sum(p.stat().st_size for p in root.rglob("*") if p.is_file())


def churn(vault: Path, writes: int) -> dict:
    """`writes` separate commits; checks the full-text index along the way."""
    engine = Engine(vault, project="house")
    first = engine.ingest("error: housekeeping seed failure\n").evidence_sha
    sig = engine.signatures("error: housekeeping seed failure\n")[0].sig_sha
    store = engine.vault.store
    unseen = []
    for i in range(writes):
        if i % EVIDENCE_EVERY == 0:
            word = f"marker{i:06d}q"
            sha = engine.ingest(f"error: step {i} failed with {word}\n").evidence_sha
            hits = {h.memory_sha for h in store.search_fulltext(word, limit=5)}
            if sha not in hits:
                unseen.append(word)
        else:
            engine.record_occurrence(sig, request_id=f"r{i}")
    versions = {name: len(store.table(name).list_versions()) for name in store_module.TABLES}
    return {"writes": writes, "versions": versions, "disk_bytes": _disk_bytes(vault / "lance"),
            "log_bytes": _disk_bytes(vault / "log"), "unseen": unseen,
            "rows": store.count("occurrences"), "first_found": bool(
                store.search_fulltext("housekeeping", limit=3))}


def check(figures: dict) -> None:
    assert figures["unseen"] == [], f"full-text search missed new rows: {figures['unseen'][:5]}"
    assert figures["first_found"]
    # between two housekeeping runs each table gains at most a few versions per write
    assert max(figures["versions"].values()) <= 4 * OPTIMIZE_EVERY, figures["versions"]
    # compacted tables: a bounded multiple of the log they are derived from, not of writes
    assert figures["disk_bytes"] <= 20 * figures["log_bytes"] + 8_000_000, figures


@pytest.fixture
def no_version_retention(monkeypatch):
    monkeypatch.setattr(store_module, "KEEP_VERSIONS_FOR", timedelta(0))


@pytest.mark.filterwarnings("ignore:optimize\\(cleanup_older_than=0\\)")
def test_versions_and_disk_stay_bounded_and_fulltext_sees_new_rows(tmp_path,
                                                                   no_version_retention):
    figures = churn(tmp_path / "vault", WRITES)
    print("housekeeping:", figures)
    check(figures)


def test_a_large_table_is_compacted_less_often(tmp_path, monkeypatch):
    """Each table waits OPTIMIZE_EVERY writes or 1/OPTIMIZE_SHARE of its rows, whichever
    is more: a big table is rewritten rarely, a small one as often as before."""
    from poimen import vault as vault_module

    monkeypatch.setattr(vault_module, "OPTIMIZE_EVERY", 5)
    monkeypatch.setattr(vault_module, "OPTIMIZE_SHARE", 2)
    engine = Engine(tmp_path / "vault", project="house")
    optimized = []
    store = engine.vault.store
    real = store.optimize
    monkeypatch.setattr(store, "optimize", lambda names: (optimized.append(set(names)),
                                                          real(names))[1])
    for i in range(60):
        engine.ingest(f"error: step {i} failed with marker{i:04d}q\n")
    memories = [n for n in optimized if "memories" in n]
    assert optimized and len(memories) < len(optimized) / 2, optimized
    every = engine.vault._optimize_every
    assert 5 < every["memories"] <= store.count("memories") // 2   # rows when last optimized
    assert every["occurrences"] == 5
    fresh = Engine(tmp_path / "vault", project="house")   # a new process knows the size too
    fresh.ingest("error: one more step failed with marker9999q\n")
    assert fresh.vault._optimize_every["memories"] == \
        max(5, fresh.vault.store.count("memories") // 2) > 5


def test_occurrences_stay_few_files_between_housekeeping_runs(tmp_path, monkeypatch):
    """Every lookup that sees a known failure writes an occurrence, and every lookup's seen
    counts read that table: it is compacted after COMPACT_AFTER_PUTS writes, not only at
    the (much later) general housekeeping, so a lookup opens few files."""
    from poimen import vault as vault_module

    monkeypatch.setattr(vault_module, "OPTIMIZE_EVERY", 100_000)
    engine = Engine(tmp_path / "vault", project="house")
    engine.ingest("error: housekeeping seed failure\n")
    sig = engine.signatures("error: housekeeping seed failure\n")[0].sig_sha
    bound = vault_module.COMPACT_AFTER_PUTS["occurrences"]
    for i in range(3 * bound):
        engine.record_occurrence(sig, request_id=f"r{i}")
    table = engine.vault.store.table("occurrences")
    assert table.count_rows() == 3 * bound
    assert table.stats()["fragment_stats"]["num_fragments"] <= bound
    assert engine.vault.store.seen(sig)[0] == 3 * bound + 1
