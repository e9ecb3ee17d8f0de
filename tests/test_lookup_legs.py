"""The lookup's legs and the answer path: how they are scheduled must not change a bit
of any answer. A small real vault (dev rows of tests/corpus, real LanceDB and ONNX
model) answers a few dev queries.
"""

from __future__ import annotations

import pytest

import dev_rows
from poimen.engine import Engine

CASES = dev_rows.rows("cases")[:4]


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


def test_a_retry_answers_the_same_body_and_a_new_request_counts_once_more(engine):
    ask = {"signature_source": CASES[1]["recurrence"], "request_id": "legs-retry"}
    first = engine.context(ask)
    assert first["tier"] == 1
    assert engine.context(ask) == first
    again = engine.context(dict(ask, request_id="legs-next"))
    counts = [[i["sha"], i["seen_count"]] for i in first["lessons"] if i["tier"] == 1]
    assert [[i["sha"], i["seen_count"] - 1] for i in again["lessons"]
            if i["tier"] == 1] == counts
