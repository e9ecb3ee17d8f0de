"""The vault end to end through the engine: rebuild equality, supersession, the gate."""

from pathlib import Path

import numpy as np
import pytest

from poimen import references
from poimen.config import Settings
from poimen.engine import Engine, Proposal

from dev_rows import rows


@pytest.fixture(scope="module")
def crowded(tmp_path_factory):
    """A vault with every level, a supersession, a reinforcement and enough rows."""
    root = tmp_path_factory.mktemp("vault")
    engine = Engine(root / "v", project="demo", settings=Settings())
    cases = rows("cases")[:12] + rows("distractors")[:28]
    proposals = []
    for case in cases:
        evidence = engine.ingest(case["evidence"], source="ci", tool=case.get("tool"))
        proposals.append(Proposal("L1", case["memory"], [evidence.evidence_sha]))
    proposals += [Proposal("L1", d["memory"], without_evidence=True)
                  for d in rows("decisions")]
    results = engine.remember_many(proposals)
    assert all(r.verdict == "accepted" for r in results), [r.reason for r in results]
    l1 = [r.sha for r in results]
    general = engine.remember("L2", "Peer-dependency conflicts after a framework major "
                              "upgrade are fixed by upgrading the plugin, never by forcing.",
                              parents=l1[:2])
    assert general.verdict == "accepted"
    old = l1[3]
    newer = engine.remember("L1", cases[3]["memory"] + " Update: pin the toolchain in CI too.",
                            parents=engine.memory(old)["parents"], supersedes=old)
    assert newer.verdict == "accepted"
    doc = root / "ref.md"
    doc.write_text("# Git authentication\n\nGitHub no longer accepts account passwords "
                   "for Git over HTTPS; use a personal access token or SSH keys.\n\n"
                   "# Proxies\n\nSet HTTPS_PROXY for npm and pip behind a corporate proxy.\n")
    references.add(engine.vault, [doc], project="demo")
    again = engine.remember("L1", cases[0]["memory"], parents=engine.memory(l1[0])["parents"])
    return {"engine": engine, "l1": l1, "old": old, "new": newer.sha, "l2": general.sha,
            "reinforced": again, "cases": cases}


TABLES = ("memories", "vectors", "signatures", "occurrences", "projections")


def snapshot(engine):
    return {name: engine.store.dump(name) for name in TABLES}


def searches(engine, cases):
    return [[(h["sha"], h["score"], h["matched_kind"]) for h in
             engine.search(c["evidence"][:300], kind=kind, limit=5)]
            for c in cases[:6] for kind in ("text", "symptom", "both")]


def test_rebuild_reproduces_every_table_bit_for_bit(crowded):
    engine = crowded["engine"]
    before, found = snapshot(engine), searches(engine, crowded["cases"])
    levels = {r["level"] for r in before["memories"]}
    assert levels == {"L0", "L1", "L2", "R"}
    assert len(before["memories"]) > 80 and len(before["vectors"]) > 80
    result = engine.rebuild()
    assert result["projection_drift"] == []
    after = snapshot(engine)
    for name in TABLES:
        assert len(after[name]) == len(before[name]), name
        for a, b in zip(before[name], after[name]):
            if "vector" in a:
                assert np.array_equal(np.asarray(a.pop("vector"), np.float32),
                                      np.asarray(b.pop("vector"), np.float32))
            assert a == b, name
    assert searches(engine, crowded["cases"]) == found
    assert engine.vault.verify() == []


def test_superseded_memory_is_absent_and_its_successor_reachable(crowded):
    engine, old, new = crowded["engine"], crowded["old"], crowded["new"]
    assert engine.memory(old)["successor"] == new
    assert engine.store.successor(old) == new
    query = crowded["cases"][3]["memory"]
    shas = [h["sha"] for h in engine.search(query, kind="both", limit=20)]
    assert old not in shas and new in shas
    assert old not in {h.memory_sha for h in engine.store.search_fulltext(query, limit=50)}


def test_gate_reinforces_near_duplicates_and_rejects_with_reasons(crowded):
    engine = crowded["engine"]
    again = crowded["reinforced"]
    assert again.verdict == "reinforced" and again.sha == crowded["l1"][0]
    rejected = engine.remember("L1", "a lesson that cites nothing")
    assert rejected.verdict == "rejected" and "--without-evidence" in rejected.reason
    assert engine.remember("L1", "   ").verdict == "rejected"
    unknown = engine.remember("L1", "cites a ghost", parents=["0" * 64])
    assert unknown.verdict == "rejected" and "unknown parent" in unknown.reason
    logged = [e.rec for e in engine.vault.log.entries() if e.rec["type"] == "memory_rejected"]
    assert {r["reason"] for r in logged} >= {rejected.reason, unknown.reason}


def test_only_l1_and_l2_get_symptom_vectors(crowded):
    engine = crowded["engine"]
    vectors = engine.store.dump("vectors")
    symptom_levels = {v["level"] for v in vectors if v["kind"] == "symptom"}
    assert symptom_levels and symptom_levels <= {"L1", "L2"}
    assert not [v for v in vectors if v["level"] == "L0"]


def test_reopening_applies_what_the_log_holds_past_the_watermark(crowded, tmp_path):
    """A crash after the append but before the projection: the next open catches up."""
    engine = crowded["engine"]
    vault = engine.vault
    marker = vault._watermark()
    (sha, new), = vault.log.append_many([{"type": "evidence", "text": "fatal: late record",
                                          "source": "ci", "tool": "git", "project": "demo",
                                          "signatures": [], "meta": {}}])
    assert new and sha not in engine.store.memories([sha])
    assert vault._watermark() == marker
    reopened = Engine(vault.path, project="demo", settings=Settings())
    assert sha in reopened.store.memories([sha])
    assert reopened.vault.verify() == []


def test_a_replayed_signature_link_keeps_the_first_links_time(tmp_path):
    """Catch-up after a crash replays records with upsert; a signature link is never
    rewritten by it (rebuild keeps the first link, so the live table must too)."""
    from poimen.store import Store

    store = Store(tmp_path / "lance")
    link = {"id": "s:m", "sig_sha": "s", "memory_sha": "m", "level": "L1", "tool": "npm",
            "kind": "error", "family": "", "message": "m", "project": "p", "at": "first"}
    store.put("signatures", [link])
    store.put("signatures", [dict(link, at="replayed")], upsert=True)
    assert [r["at"] for r in store.dump("signatures")] == ["first"]


def test_a_table_mid_creation_by_another_process_is_waited_out(tmp_path, monkeypatch):
    """lance reports "Not found: …/_versions" while another process creates a table;
    opening waits that out, and any other error still surfaces."""
    from poimen.store import Store

    store = Store(tmp_path / "lance")
    store.table("signatures")            # exists now; the next Store opens it
    other = Store(tmp_path / "lance")
    real, calls = other.db.open_table, []

    def mid_creation(name, *args, **kwargs):
        calls.append(name)
        if len(calls) < 3:
            raise RuntimeError("lance error: Not found: signatures.lance/_versions")
        return real(name, *args, **kwargs)

    monkeypatch.setattr(other.db, "open_table", mid_creation)
    assert other.table("signatures").count_rows() == 0 and len(calls) == 3

    broken = Store(tmp_path / "lance")
    monkeypatch.setattr(broken.db, "open_table", lambda *a, **k: (_ for _ in ()).throw(
        RuntimeError("lance error: corrupt file")))
    with pytest.raises(RuntimeError, match="corrupt"):
        broken.table("signatures")


def test_tables_a_reader_made_before_any_write_are_not_rebuilt_under_it(tmp_path):
    """A reader that looks up in a new vault makes its (empty) tables; a writer opening
    the vault next has no reason to rebuild them (that would delete them under the
    reader), and the reader then sees what the writer recorded."""
    reader = Engine(tmp_path / "v", project="p", settings=Settings())
    assert reader.context({"task": "npm ERESOLVE unable to resolve dependency tree"}
                          )["lessons"] == []
    assert (tmp_path / "v" / "lance" / "memories.lance").is_dir()
    writer = Engine(tmp_path / "v", project="p", settings=Settings())
    assert writer.vault.rebuilt_because is None
    writer.remember("L1", "npm ERESOLVE with react 18: fixed by pinning react-dom to 18.2",
                    without_evidence=True)
    assert [h["level"] for h in reader.search("npm ERESOLVE react", limit=3)] == ["L1"]


def test_a_table_another_process_made_anew_is_reopened(tmp_path):
    """`mem rebuild` in another process drops and recreates the tables a long-lived
    server holds open; its next refresh reopens them instead of failing."""
    from poimen.store import Store

    server = Store(tmp_path / "lance")
    assert server.table("signatures").count_rows() == 0
    rebuilder = Store(tmp_path / "lance")
    rebuilder.drop()
    server.refresh()                     # between the drop and the first new table
    rebuilder.put("signatures", [{"id": "s:m", "sig_sha": "s", "memory_sha": "m",
                                  "level": "L1", "tool": "npm", "kind": "error", "family": "",
                                  "message": "m", "project": "p", "at": "t"}])
    server.refresh()
    assert server.table("signatures").count_rows() == 1


def test_an_optimize_another_process_preempted_is_retried_then_put_off(tmp_path, monkeypatch,
                                                                        caplog):
    engine = Engine(tmp_path / "vault", project="p")
    engine.remember("L1", "Pin the toolchain in CI so every runner builds alike",
                    without_evidence=True)
    store, calls = engine.vault.store, []
    optimize = store.optimize

    def preempted(names, fail=1):
        calls.append(list(names))
        if len(calls) <= fail:
            raise RuntimeError("lance error: Retryable commit conflict for version 13")
        optimize(names)
    monkeypatch.setattr(store, "optimize", preempted)
    engine.settle()
    assert len(calls) == 2   # preempted once, then done
    calls.clear()
    monkeypatch.setattr(store, "optimize", lambda names: preempted(names, fail=99))
    with caplog.at_level("WARNING", logger="poimen.vault"):
        engine.settle()      # never goes through: put off with a warning, nothing raised
    assert len(calls) == 3 and "housekeeping of memories put off" in caplog.text
    monkeypatch.setattr(store, "optimize", lambda names: (_ for _ in ()).throw(
        RuntimeError("lance error: disk full")))
    with pytest.raises(RuntimeError, match="disk full"):
        engine.settle()      # anything but a conflict is not swallowed


def test_a_paste_quoted_whole_is_searched_as_words(crowded):
    """LanceDB reads a query opening with a double quote as a phrase query, which the
    index (no positions) refuses: such a paste lost tiers 2 and 3."""
    engine, case = crowded["engine"], crowded["cases"][1]
    words = case["evidence"].replace('"', " ")[:300]
    plain = [(h.memory_sha, h.score) for h in engine.store.search_fulltext(words, limit=5)]
    quoted = [(h.memory_sha, h.score) for h in engine.store.search_fulltext(
        f'"{words}"', limit=5)]
    assert plain and quoted == plain
    body = engine.context({"signature_source": f'"{words}"', "scope": "all-projects"})
    assert body["degraded"] == [] and body["lessons"], body["degraded"]


def test_a_lesson_is_found_by_the_words_of_its_evidence_and_of_evidence_added_later(tmp_path):
    """Full text searches a lesson's text and its evidence as one document (`findable`),
    and a reinforcement's new evidence joins it."""
    engine = Engine(tmp_path / "v", project="demo")
    first = engine.ingest("error: the zembla stage failed: quuxplode 7 not found\n")
    lesson = engine.remember("L1", "A plugin pinned too low broke the build; raising the pin "
                             "fixed it.", parents=[first.evidence_sha])
    store = engine.vault.store

    def found(words):
        return lesson.sha in {h.memory_sha for h in store.search_fulltext(
            words, levels=("L1", "L2"))}

    assert found("zembla quuxplode") and found("plugin pin")
    assert not found("frobnitz")
    later = engine.ingest("error: the frobnitz step failed: quuxplode 7 not found\n")
    again = engine.remember("L1", "A plugin pinned too low broke the build; raising the pin "
                            "fixed it.", parents=[later.evidence_sha])
    assert again.verdict == "reinforced" and again.sha == lesson.sha
    assert found("frobnitz") and found("zembla")


def test_a_vault_written_before_the_findable_column_gets_it_in_place(tmp_path):
    """An older version's memories table (no `findable`, full text over `text`) gains the
    column on open without a rebuild, and holds what a rebuild from the log would."""
    from lancedb.index import FTS

    engine = Engine(tmp_path / "v", project="demo")
    first = engine.ingest("error: the zembla stage failed\n").evidence_sha
    lesson = engine.remember("L1", "Raise the plugin pin.", parents=[first]).sha
    later = engine.ingest("error: the frobnitz step failed\n").evidence_sha
    assert engine.remember("L1", "Raise the plugin pin.", parents=[later]).sha == lesson
    general = engine.remember("L2", "Pins that lag the toolchain break builds.",
                              parents=[lesson]).sha
    table = engine.vault.store.table("memories")
    table.drop_columns(["findable"])
    table.create_index("text", config=FTS(), replace=True)
    reopened = Engine(tmp_path / "v", project="demo")
    store = reopened.vault.store
    assert reopened.vault.rebuilt_because is None and not store.missing_columns()
    assert [i.columns for i in store.table("memories").list_indices()
            if i.index_type == "FTS"] == [["findable"]]
    for words in ("zembla", "frobnitz"):
        assert {lesson, general} <= {h.memory_sha for h in store.search_fulltext(
            words, levels=("L1", "L2"))}
    migrated = store.dump("memories")
    reopened.rebuild()
    assert store.dump("memories") == migrated
