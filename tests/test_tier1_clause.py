"""Tier 1 on a clause match (`match: "same message"`): a bare paste of a failure that a
logger printed with its own context finds the lesson on the logged evidence, at tier 1
when the fused order agrees; a clause match alone never makes the answer tier 1. A real
vault (LanceDB, the ONNX model)."""

from __future__ import annotations

import pytest

from poimen.engine import Engine
from poimen.lsp.cards import headline

LOGGED = ("release-bot: ERROR deploy step failed: could not acquire the deployment lock "
          "held by another release")
BARE = "Error: could not acquire the deployment lock held by another release"
LESSON = ("Two pipelines deployed at once and the second waited on the first's lock: "
          "serialise the deploy jobs with a concurrency group.")
UNRECORDED = ("queue-runner: ERROR batch failed: refusing to start the nightly export "
              "while the previous export is still running")


@pytest.fixture(scope="module")
def engine(tmp_path_factory):
    engine = Engine(tmp_path_factory.mktemp("clause") / "vault", project="p")
    evidence = engine.ingest(LOGGED).evidence_sha
    assert engine.remember("L1", LESSON, parents=[evidence]).verdict == "accepted"
    engine.ingest(UNRECORDED)
    return engine


def test_a_bare_paste_finds_the_lesson_on_the_logged_evidence_at_tier_1(engine):
    body = engine.context({"signature_source": BARE})
    assert body["tier"] == 1
    lead = body["lessons"][0]
    assert lead["tier"] == 1 and lead["match"] == "same message" and lead["seen_count"] >= 1
    sig = body["signatures"][0]
    assert sig["known"] and sig["match"] == "same message" and not sig["loose"]
    assert headline(body).startswith("Tier 1 · seen") and "same message" in headline(body)


def test_a_clause_match_without_a_lesson_is_not_tier_1(engine):
    body = engine.context({"signature_source": "Error: refusing to start the nightly export "
                                               "while the previous export is still running"})
    sig = body["signatures"][0]
    assert sig["known"] and sig["match"] == "same message"
    assert body["tier"] != 1 and not any(i["tier"] == 1 for i in body["lessons"])
