"""The quality benchmark's code path on a tiny subset of the shared data (a `--data DIR`
of the same format): real `mem import`, `mem ref add` and lookups; the report's shape
and sane values. No timings are asserted."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[1] / "bench"
sys.path.insert(0, str(BENCH))

import corpus  # noqa: E402
import quality  # noqa: E402
import report  # noqa: E402


@pytest.fixture(scope="module")
def subset(tmp_path_factory) -> Path:
    data = tmp_path_factory.mktemp("data")
    for name, rows in corpus.load(corpus.DEFAULT_DATA).items():
        (data / f"{name}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows[:3]))
    return data


@pytest.fixture(scope="module")
def result(subset, tmp_path_factory) -> dict:
    return quality.run(subset, work=tmp_path_factory.mktemp("work"))


def test_every_path_reports_top1_and_mrr_in_range(result):
    for query in ("recurrence", "variant_query"):
        for path in report.PATHS:
            stats = result["paths"][query][path]
            assert stats["n"] == 3
            assert 0.0 <= stats["top1"] <= stats["mrr"] <= 1.0
            assert stats["top1_count"] == round(stats["top1"] * 3)


def test_negatives_never_hit_tier_one_and_references_are_scored(result):
    assert result["negatives"] == 3
    assert result["false_tier1_hits"] == 0
    assert 0.0 <= result["tier3_accuracy"] <= 1.0
    assert {t["id"] for t in result["tier3"]} == {r["id"] for r in
                                                  corpus.load(corpus.DEFAULT_DATA)["reference"][:3]}
    assert 0.0 <= result["tier1_hit_rate_recurrence"] <= 1.0


def test_vault_was_built_from_the_subset(result):
    # 3 cases + 3 distractors + 3 decisions + 3 negative lessons
    assert sum(result["vault"]["counts"].values()) == 12
    assert result["vault"]["references"] == 3
    assert result["rows"]["cases"] == 3


def test_report_renders_tables_and_targets(result):
    run = {"date": "d", "command": "c", "profile": "quick", "data": "x", "elapsed_s": 1,
           "machine": {"commit": "c", "cpu": "cpu", "cores": 2, "memory_gb": 1, "python": "3",
                       "loadavg_start": [0], "loadavg_end": [0]}, "quality": result}
    run["targets"] = report.targets(run)
    names = {t["target"]: t for t in run["targets"]}
    assert names["false tier-1 hits on negatives"]["status"] == "met"
    assert names["context p50 at 10k (ms)"]["status"] == "not measured"
    text = report.markdown(run, [])
    assert "| recurrence | symptom |" in text and "## Targets" in text


def test_results_record_paths_relative_to_the_repo(result, subset):
    assert not result["data"].startswith("/")
    assert (corpus.REPO / result["data"]).resolve() == subset.resolve()
