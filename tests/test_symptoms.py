"""Symptom projection generators: catalogue, embedded matcher, filter, factory, prompt."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from poimen.embed import Embedder
from poimen.symptoms import Projection, SymptomGenerationError, SymptomLine, make_generator
from poimen.symptoms.catalogue import CatalogueError, load_catalogue
from poimen.symptoms.embedded import CatalogueGenerator
from poimen.symptoms.filter import RESTATES, UNRELATED, filter_lines
from poimen.symptoms.prompt import load_template, template_sha

import dev_rows

FAILURE = ("Uploads over a few megabytes broke because the ingress in front of the API "
           "buffers bodies with its default one-megabyte cap; raising the body limit on "
           "the proxy fixed it.")
DECISIONS = [row["memory"] for row in dev_rows.rows("decisions")]


@pytest.fixture(scope="module")
def embedder():
    return Embedder()


@pytest.fixture(scope="module")
def generator(embedder):
    return make_generator(None, embedder)


def test_catalogue_covers_the_ecosystems_and_is_versioned():
    catalogue = load_catalogue()
    ecosystems = {e.ecosystem for e in catalogue.entries}
    for needed in ("npm", "yarn", "pnpm", "pip", "poetry", "python", "pytest", "node", "webpack",
                   "vite", "typescript", "rust", "go", "java", "docker", "kubernetes", "helm",
                   "terraform", "http", "database", "git", "tls", "native", "ci"):
        assert needed in ecosystems
    assert len(catalogue.entries) >= 200
    assert catalogue.failure and catalogue.nonfailure
    assert load_catalogue().sha == catalogue.sha and len(catalogue.sha) == 64


def test_malformed_catalogue_is_a_clear_error(tmp_path):
    (tmp_path / "x.jsonl").write_text('{"id": "a", "explains": ["cause"]}\n')
    with pytest.raises(CatalogueError, match="x.jsonl:1.*needs explains and errors or behaviour"):
        load_catalogue(tmp_path)
    (tmp_path / "x.jsonl").write_text("not json\n")
    with pytest.raises(CatalogueError, match="x.jsonl:1: not JSON"):
        load_catalogue(tmp_path)


def test_catalogue_sha_changes_with_its_data(tmp_path):
    row = {"id": "a", "explains": ["cause"], "errors": ["E1 failed"]}
    (tmp_path / "t.jsonl").write_text(json.dumps(row) + "\n")
    first = load_catalogue(tmp_path).sha
    row["errors"] = ["E2 failed"]
    (tmp_path / "t.jsonl").write_text(json.dumps(row) + "\n")
    assert load_catalogue(tmp_path).sha != first


def test_model_id_names_catalogue_and_embedder(generator, embedder):
    assert load_catalogue().sha[:16] in generator.model_id
    assert embedder.model_id in generator.model_id
    assert len(generator.prompt_sha) == 64


def test_failure_memory_projects_symptoms_not_itself(generator):
    projection = generator.project(FAILURE, [])
    assert projection.lines, "a failure memory should explain some symptoms"
    assert all(line.origin == "generated" for line in projection.lines)
    assert any("413" in line.text for line in projection.lines)
    assert FAILURE not in projection.text


@pytest.mark.parametrize("memory", DECISIONS)
def test_decisions_get_an_empty_projection(generator, memory):
    projection = generator.project(memory, [])
    assert projection.lines == () and projection.text == ""
    assert projection.model_id == generator.model_id


def test_evidence_lines_lead_and_keep_their_origin(generator):
    evidence = ["npm ERR! code ERESOLVE unable to resolve dependency tree",
                "npm ERR! code ERESOLVE unable to resolve dependency tree"]
    projection = generator.project(
        "A component library only declared support for the previous major of our UI "
        "framework, so installs were blocked after the upgrade; bumping it fixed it.", evidence)
    assert projection.lines[0] == SymptomLine(evidence[0], "evidence")
    assert [l.origin for l in projection.lines].count("evidence") == 1
    assert any(l.origin == "generated" for l in projection.lines)


def test_projection_is_byte_identical_across_generators(embedder):
    memory, evidence = FAILURE, ["client intended to send too large body"]
    first = CatalogueGenerator(embedder).project(memory, evidence)
    second = CatalogueGenerator(Embedder()).project(memory, evidence)
    assert json.dumps(first.to_dict()) == json.dumps(second.to_dict())
    assert first.sha == second.sha
    assert Projection.from_dict(first.to_dict()) == first


def test_filter_drops_restatements_and_unrelated_lines(embedder):
    memory = "The nightly export crashed because the disk filled with old log archives."
    lines = ["The nightly export crashed because the disk filled with old log archives!",
             "Bananas are a good source of potassium for breakfast.",
             "write /var/backups/export.tar: no space left on device"]
    kept, dropped = filter_lines(lines, memory, [], embedder)
    assert kept == [lines[2]]
    assert dropped == [(lines[0], RESTATES), (lines[1], UNRELATED)]


def test_projection_text_joins_lines():
    p = Projection((SymptomLine("a", "evidence"), SymptomLine("b", "generated")), (), "m", "p")
    assert p.text == "a\nb"
    assert Projection((), (), "m", "p").text == ""
    with pytest.raises(ValueError):
        SymptomLine("x", "invented")


def test_make_generator_rejects_bad_settings(embedder):
    with pytest.raises(SymptomGenerationError, match="unknown symptom backend"):
        make_generator({"backend": "llama"}, embedder)
    with pytest.raises(SymptomGenerationError, match="takes no settings"):
        make_generator({"backend": "embedded", "url": "x"}, embedder)
    with pytest.raises(SymptomGenerationError, match="unknown openai settings"):
        make_generator({"backend": "openai", "url": "http://x", "model": "m", "temp": 1}, embedder)
    with pytest.raises(SymptomGenerationError, match="needs 'url' and 'model'"):
        make_generator({"backend": "openai"}, embedder)


def test_prompt_template_is_pinned_and_says_return_nothing():
    template = load_template()
    repo = Path(__file__).resolve().parents[1] / "prompts" / "symptom.tmpl"
    assert template == repo.read_text(encoding="utf-8")
    assert "{{memory}}" in template and "{{evidence}}" in template
    assert "return nothing" in template
    assert len(template_sha(template)) == 64
