"""The retrieval benchmark's code path on a tiny subset of the repo's corpus (a `--data
DIR` in the shared format, dev rows only): real `mem import`, `mem ref add` and lookups;
the baselines answer the same queries; the report's shape and sane values. No timings."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[1] / "bench"
sys.path.insert(0, str(BENCH))

import corpus  # noqa: E402
import report  # noqa: E402
import retrieval  # noqa: E402

TAKE = 3


@pytest.fixture(scope="module")
def subset(tmp_path_factory) -> Path:
    data = tmp_path_factory.mktemp("data")
    for name, rows in corpus.load().items():
        dev = [r for r in rows if r["split"] == "dev"][:TAKE]
        (data / f"{name}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in dev))
    return data


@pytest.fixture(scope="module")
def result(subset, tmp_path_factory) -> dict:
    return retrieval.run(subset, ["dev"], work=tmp_path_factory.mktemp("work"))


def test_every_method_reports_top1_and_mrr_in_range(result):
    for query in ("recurrence", "variant"):
        for method in report.METHODS:
            stats = result["dev"][query][method]
            assert stats["n"] == TAKE
            assert 0.0 <= stats["top1"] <= stats["mrr"] <= 1.0
            assert stats["top1_count"] == round(stats["top1"] * TAKE)


def test_lookalikes_references_and_tier1_are_counted(result):
    dev = result["dev"]
    assert dev["lookalikes"]["n"] == TAKE
    assert 0 <= dev["lookalikes"]["tier1_other"] <= dev["lookalikes"]["returned_other"] <= TAKE
    assert dev["references"]["n"] == TAKE and 0 <= dev["references"]["first"] <= TAKE
    assert 0.0 <= dev["tier1_share"] <= 1.0
    assert not Path(result["data"]).is_absolute()   # results record paths relative to the repo


def test_the_report_puts_the_baselines_beside_poimen(result):
    text = report.retrieval_markdown(result)
    for method in report.METHODS:
        assert f"| recurrence | {method} |" in text


def test_bm25_baseline_ranks_the_document_with_the_rare_term_first():
    bm25 = retrieval.BM25({"a": "disk full on the build agent", "b": "the the the agent",
                           "c": "quota exceeded while pushing the image"})
    assert bm25.ranked("image push quota exceeded")[0] == "c"
    assert bm25.ranked("nothing matches zzz") == []


def test_a_wave_slice_is_the_held_out_rows_of_that_waves_parts():
    rows = [{"split": "heldout", "part": "py-w2"}, {"split": "heldout", "part": "py"},
            {"split": "dev", "part": "py-w2"}, {"split": "heldout", "part": "ops-w3"}]
    assert [retrieval.in_slice(r, "heldout-w2") for r in rows] == [True, False, False, False]
    assert [retrieval.in_slice(r, "heldout-w3") for r in rows] == [False, False, False, True]
    assert [retrieval.in_slice(r, "heldout") for r in rows] == [True, True, False, True]
    assert [retrieval.in_slice(r, "dev") for r in rows] == [False, False, True, False]


def test_a_rows_wave_is_its_parts_suffix_and_wave_one_has_none():
    parts = ["py", "web-w2", "fe-w11", "distractors-a", "net-w7"]
    assert [retrieval.wave_of({"part": p}) for p in parts] == [1, 2, 11, 1, 7]
