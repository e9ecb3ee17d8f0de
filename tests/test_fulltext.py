"""The resident full-text index scores as LanceDB's FTS index does, word rule by word rule."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest

from poimen.fulltext import FullText, Rows, Words

TEXTS = [
    "npm ERR! code ERESOLVE: unable to resolve dependency tree for react-dom",
    "Error: Cannot find module 'webpack-cli/bin/config-yargs' being required by webpack",
    "does it work because the modules were installed? They weren't, so it doesn't",
    "a" * 39 + " " + "b" * 40 + " " + "é" * 19 + " " + "è" * 20 + " tokens",
    "Le café est fermé: straße naïve Æon ﬁle_name snake_case_word",
    "",
    "the and of it is",   # stop words only: a row LanceDB does not count
    "error error error error in the build of the module",
    "linker `cc` not found: install build-essential (gcc) on the slim image",
    "ModuleNotFoundError: No module named 'torch' in python 3.12 venv",
]
QUERIES = [
    "error", "module", "modules installed", "webpack webpack", "does because", "being",
    "café", "cafe", "strasse", "straße", "naive", "aeon", "file", "snake", "case",
    "a" * 39, "b" * 40, "é" * 19, "è" * 20, "ERESOLVE react", "gcc linker build",
    "torch 3.12 python", "the", "Error: Cannot find module 'torch'",
]


@pytest.fixture(scope="module")
def tables(tmp_path_factory):
    import lancedb
    from lancedb.index import FTS

    shas = [f"{i:064x}" for i in range(len(TEXTS))]
    data = pa.table({"sha": shas, "level": ["L1"] * 5 + ["L0"] * (len(TEXTS) - 5),
                     "superseded_by": [""] * len(TEXTS), "findable": TEXTS})
    db = lancedb.connect(tmp_path_factory.mktemp("fts") / "db")
    tbl = db.create_table("t", data)
    tbl.create_index("findable", config=FTS(), replace=True)
    words = Words()
    return tbl, FullText(words, Rows.read(words, data))


@pytest.mark.parametrize("query", QUERIES)
def test_scores_are_lancedbs(tables, query):
    tbl, index = tables
    theirs = tbl.search(query, query_type="fts", fts_columns="findable") \
        .limit(20).select(["sha", "_score"]).to_list()
    ours = index.search(query, 20)
    assert [sha for sha, _ in ours] == [r["sha"] for r in theirs]
    assert np.allclose([s for _, s in ours], [r["_score"] for r in theirs], rtol=1e-5)


def test_a_level_filter_leaves_the_statistics_alone(tables):
    tbl, index = tables
    theirs = tbl.search("error module", query_type="fts", fts_columns="findable") \
        .where("level IN ('L1')", prefilter=True).limit(20).select(["sha", "_score"]).to_list()
    ours = index.search("error module", 20, levels=("L1",))
    assert theirs and [sha for sha, _ in ours] == [r["sha"] for r in theirs]
    assert np.allclose([s for _, s in ours], [r["_score"] for r in theirs], rtol=1e-5)


def test_a_word_said_twice_counts_twice(tables):
    _, index = tables
    once, twice = dict(index.search("webpack", 5)), dict(index.search("webpack webpack", 5))
    assert once and all(twice[sha] == pytest.approx(2 * score) for sha, score in once.items())


def test_the_word_rules():
    words = Words()
    assert words.word("being") is None            # stems to a stop word ("be")
    assert words.word("does") == "doe"            # its stem is no stop word
    assert words.word("Modules") == "modul"
    assert words.word("x" * 39) and words.word("x" * 40) is None
    assert words.word("é" * 19) and words.word("é" * 20) is None   # bytes, not characters
    assert words.word("straße") == "strasse"      # folded after stemming
    assert Words().terms("snake_case it's", add=True) == [0, 1]   # _ and ' split; s, it dropped


def test_a_grown_copy_equals_a_fresh_one():
    words = Words()
    shas = [f"{i:064x}" for i in range(len(TEXTS))]
    data = pa.table({"sha": shas, "level": ["L1"] * len(TEXTS),
                     "superseded_by": [""] * len(TEXTS), "findable": TEXTS})
    first = Rows.read(words, data.slice(0, 6))
    grown_texts = TEXTS[:2] + [TEXTS[2] + " and then a reinforcement's evidence"] + TEXTS[3:]
    grown = data.set_column(3, "findable", pa.array(grown_texts))
    again, fresh = Words(), None
    fresh = FullText(again, Rows.read(again, grown))
    grown_index = FullText(words, Rows.read(words, grown, first))
    for query in QUERIES + ["reinforcement evidence"]:
        assert grown_index.search(query, 20) == fresh.search(query, 20)
