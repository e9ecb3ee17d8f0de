"""The lookup's pure parts: request validation, budget order, fusion, chunking, trigrams."""

from __future__ import annotations

import pytest

from poimen import budget as budgeting
from poimen.lookup import BadContextRequest, encode_body, parse_request
from poimen.lookup.fusion import FEATURES, Model, models
from poimen.lookup.similarity import trigram_similarity, trigrams
from poimen.references import MAX_CHUNK_CHARS, chunk_text


def words(text: str) -> int:
    return len(text.split())


def item(tier: int, sha: str, n: int) -> dict:
    return {"tier": tier, "sha": sha, "text": " ".join(["w"] * n)}


def sections() -> budgeting.Sections:
    return budgeting.Sections(
        tier1=[item(1, "t1", 10)], tier2=[item(2, "a", 10), item(2, "b", 10),
                                          item(2, "c", 10)],
        skills=[item(2, "s", 10)], references=[item(3, "r1", 10), item(3, "r2", 10)])


@pytest.mark.parametrize("limit, kept", [
    (80, ("t1", "a", "b", "c", "s", "r1", "r2")),
    (65, ("t1", "a", "b", "c", "s", "r1")),
    (50, ("t1", "a", "b", "c", "s")),
    (40, ("t1", "a", "b", "s")),
    (30, ("t1", "a", "s")),
    (25, ("t1", "a")),
    (15, ("t1",)),
    (3, ("t1",)),
])
def test_truncation_order_is_r_then_tier2_to_floor_then_skills(limit, kept):
    s = sections()
    result = budgeting.apply(s, limit, words)
    left = tuple(i["sha"] for i in s.tier1 + s.tier2 + s.skills + s.references)
    assert sorted(left) == sorted(kept)
    assert result["used"] == sum(words(i["text"]) for i in s.tier1 + s.tier2 + s.skills
                                 + s.references)
    assert result["over"] == (result["used"] > limit)
    assert all(d["section"] != "tier1" for d in result["dropped"])


def test_dropped_lists_what_went_in_order():
    s = sections()
    result = budgeting.apply(s, 15, words)
    assert [d["sha"] for d in result["dropped"]] == ["r2", "r1", "c", "b", "s", "a"]
    assert [d["section"] for d in result["dropped"]] == [
        "references", "references", "tier2", "tier2", "skills", "tier2"]


def test_request_defaults_and_scope():
    req = parse_request({"signature_source": "boom"}, "alpha", 1200)
    assert (req.scope, req.project, req.budget) == ("all-projects", "alpha", 1200)
    assert parse_request({"task": "deploy"}, "alpha", 1200).scope == "project"
    assert parse_request({"task": "deploy", "scope": "all-projects"}, "a", 9).scope == \
        "all-projects"


@pytest.mark.parametrize("raw", [{}, {"tool": ""}, {"budget": 5}, {"task": "x", "budget": True},
                                 {"task": "x", "budget": -1}, {"task": "x", "extra": 1},
                                 {"task": "x", "scope": "everything"}, "task"])
def test_bad_requests_raise_with_a_reason(raw):
    with pytest.raises(BadContextRequest) as err:
        parse_request(raw, "alpha", 1200)
    assert str(err.value)


def test_body_encoding_is_canonical():
    assert encode_body({"b": 1, "a": [0.5, "é"]}) == '{"a":[0.5,"é"],"b":1}'.encode()


def test_shipped_models_use_known_features_and_a_threshold_in_range():
    from poimen.lookup.fusion import ANSWER_FEATURES

    shipped = models()
    assert set(shipped) == {"paste", "prose", "reference"}
    for rank, answer in shipped.values():
        assert set(rank.features) <= set(FEATURES)
        assert set(answer.features) <= set(ANSWER_FEATURES)   # absolute features only
        for model in (rank, answer):
            assert len(model.weights) == len(model.features)
            assert 0.0 < model.threshold < 1.0


def test_fusion_keeps_the_score_gap_that_ranks_discard():
    """A 0.63 cosine outscores a 0.52 one by the weight times the gap, and a view that
    found nothing useful (zero) does not lift a candidate."""
    model = Model(("cos_text", "bm25"), (4.0, 1.0), -2.0, 0.5)
    strong, weak = model.score({"cos_text": 0.63}), model.score({"cos_text": 0.52})
    assert strong > weak
    assert model.score({"cos_text": 0.52, "bm25": 0.0}) == weak
    assert 0.0 < model.score({"cos_text": -50.0}) < model.score({}) < 1.0


def test_trigram_similarity_bounds():
    a = trigrams("connection refused on port 5432")
    assert trigram_similarity(a, a) == 1.0
    assert trigram_similarity(a, trigrams("zzzz qqqq")) == 0.0
    assert 0 < trigram_similarity(a, trigrams("connection reset on port 80")) < 1


def test_markdown_chunks_follow_headings_and_skip_fenced_hashes():
    doc = "# Guide\n\nintro\n\n## Install\n\nrun it\n\n```\n# comment\n```\n\n### Linux\n\napt\n"
    chunks = chunk_text(doc, "guide.md", "markdown")
    assert [c.heading for c in chunks] == ["guide.md › Guide", "guide.md › Guide › Install",
                                           "guide.md › Guide › Install › Linux"]
    assert "# comment" in chunks[1].body
    assert chunks[2].text.startswith("guide.md › Guide › Install › Linux\n\n")


def test_rst_levels_come_from_adornment_order():
    doc = ("=====\nTitle\n=====\n\nintro\n\nPart\n----\n\nbody\n\nDetail\n~~~~~~\n\nmore\n\n"
           "Other\n-----\n\nrest\n")
    headings = [c.heading for c in chunk_text(doc, "x.rst", "rst")]
    assert headings == ["x.rst › Title", "x.rst › Title › Part",
                        "x.rst › Title › Part › Detail", "x.rst › Title › Other"]


def test_long_sections_split_at_paragraphs():
    paragraph = "word " * 100
    chunks = chunk_text("\n\n".join([paragraph] * 10), "notes.txt", "text")
    assert len(chunks) > 1
    assert all(len(c.body) <= MAX_CHUNK_CHARS for c in chunks)
    assert sum(c.body.count("word") for c in chunks) == 1000
