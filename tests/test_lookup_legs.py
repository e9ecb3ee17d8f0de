"""The lookup's legs and the answer path: how they are scheduled must not change a bit
of any answer. A small real vault (dev rows of tests/corpus, real LanceDB and ONNX
model) answers a few dev queries.
"""

from __future__ import annotations

import threading

import pytest

import dev_rows
from poimen import deferred
from poimen.engine import Engine
from poimen.lookup import candidates, parse_request, prepare, query
from poimen.lookup.tier1 import LESSON_LEVELS
from poimen.lookup.run import LEG_THREADS

# named, so that rows added to the corpus do not change what this test runs on
CASES = [dev_rows.row(i) for i in (
    "data-rails-concurrent-ruby-135-logger-require", "data-mysql8-caching-sha2-old-node-driver",
    "data-redis-bgsave-failing-blocks-writes", "data-postgres-image-major-bump-old-datadir")]


@pytest.fixture(scope="module")
def engine(tmp_path_factory):
    engine = Engine(tmp_path_factory.mktemp("legs") / "vault", project="p")
    for case in CASES:
        evidence = engine.ingest(case["evidence"], tool=case["tool"]).evidence_sha
        assert engine.remember("L1", case["memory"], parents=[evidence]).verdict == "accepted"
    return engine


def requests():
    for case in CASES:
        yield {"signature_source": case["recurrence"]}
        yield {"task": case["variant_query"]}


@pytest.mark.parametrize("levels", [LESSON_LEVELS, ("R",)])
def test_full_text_run_ahead_gives_the_same_candidates(engine, levels):
    for raw in requests():
        run, _ = prepare(engine, parse_request(raw, "p", 1200))
        run.vector = query.vector(run)
        inline = candidates.gather(run, levels)
        ahead = candidates.gather(run, levels, candidates.fulltext(run, levels))
        assert list(inline.scores.items()) == list(ahead.scores.items())
        assert inline.rows.keys() == ahead.rows.keys()
        assert inline.linked == ahead.linked


def _leg_threads() -> set[int]:
    return {t.ident for t in threading.enumerate() if t.name.startswith("poimen-leg")}


def test_lookups_reuse_the_leg_threads(engine):
    engine.context({"signature_source": CASES[0]["recurrence"]})
    first, seen = _leg_threads(), set()
    for raw in list(requests()) * 2:
        body = engine.context(raw)
        assert body["lessons"], raw
        seen |= _leg_threads()
    assert first and first <= _leg_threads(), "the first lookup's leg threads were ended"
    assert len(seen) <= LEG_THREADS


def test_a_retry_answers_the_same_body_and_a_new_request_counts_once_more(engine):
    ask = {"signature_source": CASES[1]["recurrence"], "request_id": "legs-retry"}
    first = engine.context(ask)
    assert first["tier"] == 1
    assert engine.context(ask) == first
    again = engine.context(dict(ask, request_id="legs-next"))
    counts = [[i["sha"], i["seen_count"]] for i in first["lessons"] if i["tier"] == 1]
    assert [[i["sha"], i["seen_count"] - 1] for i in again["lessons"]
            if i["tier"] == 1] == counts


def test_the_same_query_again_is_not_embedded_again(engine, monkeypatch):
    ask = {"signature_source": CASES[2]["recurrence"], "request_id": "legs-hover"}
    first = engine.context(ask)
    computed = []
    compute = engine.embedder._compute
    monkeypatch.setattr(engine.embedder, "_compute",
                        lambda texts: computed.extend(texts) or compute(texts))
    assert engine.context(ask) == first   # the hover after the diagnostic
    assert computed == []


def _drained(engine, limit_s: float = 30.0) -> None:
    assert engine.vault.deferred.wait(limit_s), "the background apply never ended"
    assert not engine.vault.deferred.pending(), "occurrences were never applied"


def test_occurrences_are_logged_before_the_answer_and_applied_in_the_background(engine):
    ask = {"signature_source": CASES[3]["recurrence"], "request_id": "legs-later"}
    threads = []
    housekeeping = engine.vault._housekeeping

    def spy(applied):
        threads.append(threading.current_thread().name)
        return housekeeping(applied)

    engine.vault._housekeeping = spy
    try:
        before = engine.context(dict(ask, request_id="legs-later-0"))
        body = engine.context(ask)
        logged = [e.rec for e in engine.vault.log.entries()
                  if e.rec.get("request_id") == "legs-later"]
        assert logged and {r["type"] for r in logged} == {"occurrence"}
        seen = {i["sha"]: i["seen_count"] for i in body["lessons"] if i["tier"] == 1}
        assert seen and seen == {i["sha"]: i["seen_count"] + 1 for i in before["lessons"]
                                 if i["tier"] == 1}
        assert engine.context(ask) == body   # a retry, applied or not, counts once
        _drained(engine)
        assert engine.context(ask) == body
        rows = engine.store.count("occurrences", "request_id = 'legs-later'")
        assert rows == len(logged)
    finally:
        engine.vault._housekeeping = housekeeping
    assert threads and set(threads) == {"poimen-apply"}, threads


def test_a_lookup_leaves_its_own_pending_occurrences_to_the_background_apply(
        engine, monkeypatch):
    """A lookup's look at the log applies what others wrote, but not what this process
    acknowledged and its background apply has yet to do (that waited for the lock the
    apply holds, on the answer path); seen counts take those from the pending records."""
    _drained(engine)
    monkeypatch.setattr(engine.vault.deferred, "start", lambda: None)   # nothing applied
    vault = engine.vault
    ask = {"signature_source": CASES[0]["recurrence"], "request_id": "legs-own-0"}
    first = engine.context(ask)
    mark = vault._watermark()
    assert vault.log.sizes() != mark and vault.deferred.pending()
    again = engine.context(dict(ask, request_id="legs-own-1"))
    assert vault._watermark() == mark, "the lookup applied its own pending occurrences"
    cited = [p for item in first["lessons"] for p in item.get("parents") or []]
    assert cited and set(engine.provenance(cited)) == set(cited)   # the card's reads
    assert engine.memory(first["lessons"][0]["sha"]) is not None
    assert vault._watermark() == mark, "a card's reads applied the pending occurrences"
    assert [i["seen_count"] for i in again["lessons"] if i["tier"] == 1] == \
        [i["seen_count"] + 1 for i in first["lessons"] if i["tier"] == 1]
    other = Engine(vault.path, project="p")   # another process's record, not applied
    monkeypatch.setattr(other.vault.deferred, "start", lambda: None)
    other.context(dict(ask, request_id="legs-other"))
    written = vault.log.sizes()
    engine.context(dict(ask, request_id="legs-own-2"))
    applied = vault._watermark()
    assert all(applied.get(k, 0) >= size for k, size in written.items()), \
        "another's record was left unapplied"
    monkeypatch.undo()
    vault.deferred.start()
    _drained(engine)


def test_back_to_back_lookups_have_their_occurrences_applied_in_one_write(
        engine, monkeypatch):
    """The background apply gathers what arrives within APPLY_AFTER_S into one commit;
    `wait()` applies at once instead of waiting it out."""
    _drained(engine)
    monkeypatch.setattr(deferred, "APPLY_AFTER_S", 600.0)
    store, writes = engine.vault.store, []
    put = store.put
    monkeypatch.setattr(store, "put", lambda name, rows, upsert=False: (
        writes.append((name, len(rows))) if name == "occurrences" else None,
        put(name, rows, upsert))[1])
    bodies = [engine.context({"signature_source": case["recurrence"],
                              "request_id": f"legs-batch-{n}"}) for n, case in enumerate(CASES)]
    assert sum(any(i["tier"] == 1 for i in body["lessons"]) for body in bodies) >= 2
    pending = len(engine.vault.deferred.pending())
    assert pending >= 2 and writes == []   # gathered, nothing written yet
    assert engine.vault.deferred.wait(60.0), "wait() waited out APPLY_AFTER_S"
    assert writes == [("occurrences", pending)] and not engine.vault.deferred.pending()

