"""The lookup's lexical view: a lesson and its evidence as one BM25 document."""

from __future__ import annotations

import pytest

from poimen import resident
from poimen.engine import Engine
from poimen.lookup import lexical

FAILURE = ("error[E0463]: can't find crate for `core`\n"
           "  = note: the `thumbv7em-none-eabihf` target may not be installed")
LESSON = "Cross builds need the target's standard library: rustup target add it first"


def test_a_rare_query_word_outranks_common_ones():
    docs = {"a": "build failed: error while linking the target",
            "b": "build failed: error while linking, libssl missing from the image",
            "c": "the build step failed with an error"}
    ranked = dict(lexical.scores("error: build failed, libssl not found", docs))
    assert max(ranked, key=ranked.get) == "b"
    assert ranked["a"] > 0 and ranked["c"] > 0


def test_words_are_lowercased_runs_of_letters_and_digits():
    ranked = dict(lexical.scores("ERESOLVE", {"a": "npm ERR! code eresolve",
                                              "b": "npm ERR! code E404"}))
    assert list(ranked) == ["a"]
    assert lexical.scores("npm_config", {"a": "NPM CONFIG"}) == \
        lexical.scores("npm config", {"a": "NPM CONFIG"})


@pytest.mark.parametrize("query, docs", [("", {"a": "text"}), ("words", {}),
                                         ("?!", {"a": "text"}), ("absent", {"a": "text"})])
def test_nothing_to_score_gives_nothing(query, docs):
    assert lexical.scores(query, docs) == []


def test_a_shorter_document_with_the_same_match_scores_higher():
    ranked = dict(lexical.scores("hostfxr", {"short": "hostfxr missing",
                                             "long": "hostfxr missing " + "word " * 200}))
    assert ranked["short"] > ranked["long"]


def test_a_lesson_document_holds_its_evidence_and_an_l2_its_lessons_evidence(tmp_path):
    engine = Engine(tmp_path / "vault", project="p")
    evidence = engine.ingest(FAILURE).evidence_sha
    lesson = engine.remember("L1", LESSON, parents=[evidence]).sha
    general = engine.remember("L2", "Targets beyond the host's need their own toolchain "
                              "parts installed before a build", parents=[lesson]).sha
    store = resident.of(engine.store)
    docs = lexical.documents(store, store.memories([lesson, general]))
    assert docs[lesson].startswith(LESSON) and "thumbv7em" in docs[lesson]
    assert "thumbv7em" in docs[general] and docs[general].count("thumbv7em") == 1
    ranked = dict(lexical.scores("can't find crate for core thumbv7em", docs))
    assert set(ranked) == {lesson, general}


def test_a_lookup_scores_each_lesson_by_its_evidence_words(tmp_path):
    engine = Engine(tmp_path / "vault", project="p")
    evidence = engine.ingest(FAILURE).evidence_sha
    lesson = engine.remember("L1", LESSON, parents=[evidence]).sha
    other = engine.remember("L1", "Slim images lack a C linker: install build-essential "
                            "before cargo build", without_evidence=True).sha
    body = engine.context({"task": "cargo says it cannot find crate for core on "
                                   "thumbv7em-none-eabihf"})
    scores = {item["sha"]: item["scores"] for item in body["lessons"]}
    assert scores[lesson]["lexical"] > scores.get(other, {}).get("lexical", 0.0)
