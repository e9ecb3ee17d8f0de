"""The derived-content filter: manifest, normalisation and the shingle index."""

from __future__ import annotations

import json
import multiprocessing
import textwrap
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from poimen.derived import (MANIFEST, REFERENCE_WINDOW, ArtifactIndex, ManifestError, normalise_for_shingles,
                            parse_thresholds, read_manifest, record_artifact, record_artifacts, shingles,
                            verify_evidence)

import dev_rows

CASE = dev_rows.row("js-react-duplicate-copy-via-npm-link")
REFERENCES = {r["id"]: r["reference"] for r in dev_rows.rows("reference")}
GUNICORN = REFERENCES["py-ref-gunicorn-worker-timeout-sync-workers"]
GO_MAPS = REFERENCES["native-ref-go-map-unsynchronized-writes-crash"]
ERROR_EXCERPT = "\n".join(CASE["evidence"].splitlines()[:6])

SKILL = f"""---
name: react-duplicate-copy-npm-link
description: What to do when a linked component library breaks hooks with a second React.
---

# Invalid hook call after npm link

## When this applies
The app renders a component from a library linked for local development and stops:

```text
{ERROR_EXCERPT}
```

## What is going on
The **component library** is symlinked into the app, and its folder has its own
*node_modules* with its own React, so the bundle holds two copies. Hooks register
with one copy and are called from the other. Published installs work fine.

## Steps
1. Make the library resolve the app's React: link the library's `react` folder to
   the copy in the app's `node_modules`.
2. Otherwise set `resolve.dedupe` (Vite) or a `resolve.alias` (webpack) for `react`
   and `react-dom`, pointing at the app's own copies.
3. Keep React a *peer* dependency of the library, never a direct one, and never
   link the runtime itself into the app.

- Re-run the app after the alias lands.
- Remove the alias once the library is installed from the registry again.
"""

NAME = "react-duplicate-copy-npm-link"


def _reformat(markdown: str) -> str:
    """The skill as it reappears in a chat: fences gone, bullets changed, lines re-wrapped."""
    lines = []
    for line in markdown.splitlines():
        if line.startswith("```"):
            continue
        line = line.lstrip("#").strip()
        if line[:2] in ("1.", "2.", "3."):
            line = "* " + line[2:].strip()
        elif line.startswith("- "):
            line = "  + " + line[2:]
        lines.append(line.replace("**", "__").replace("`", ""))
    prose = " ".join(lines)
    return "\n".join("    " + chunk for chunk in textwrap.wrap(prose, width=47))


def _transcript(*turns: str) -> str:
    return "\n\n".join(turns)


@pytest.fixture
def vault(tmp_path: Path) -> Path:
    return tmp_path


def test_verbatim_quote_is_excluded(vault):
    skill = record_artifact(vault, "skill", NAME, SKILL)
    record = _transcript("user: the linked library broke the app again, what now?",
                         f"assistant: loading skill {NAME}\n{SKILL}",
                         "assistant: following step 2, I'll add an alias.")
    match = ArtifactIndex.load(vault).check(record)
    assert match is not None
    assert (match.kind, match.name, match.artifact_sha) == ("skill", NAME, skill.sha256)
    assert match.overlap == 1.0 and match.threshold == 0.8
    assert match.shingles_matched == len(skill.shingles)


def test_reformatted_quote_is_excluded(vault):
    record_artifact(vault, "skill", NAME, SKILL)
    quoted = _reformat(SKILL)
    assert "```" not in quoted and "\n1." not in quoted and "\n- " not in quoted
    record = _transcript("user: the app dies as soon as I link the widget library",
                         "assistant: here is what the team's skill says:", quoted,
                         "user: ok, trying the alias now")
    match = ArtifactIndex.load(vault).check(record)
    assert match is not None and match.name == NAME
    assert match.overlap >= 0.95


def test_quote_inside_a_json_transcript_is_excluded(vault):
    record_artifact(vault, "skill", NAME, SKILL)
    lines = [json.dumps({"role": "user", "content": "the linked app broke"}),
             json.dumps({"role": "tool", "content": SKILL}),
             json.dumps({"role": "assistant", "content": "I will add a bundler alias."})]
    match = ArtifactIndex.load(vault).check("\n".join(lines))
    assert match is not None and match.overlap == 1.0


def test_mention_by_name_is_not_excluded(vault):
    record_artifact(vault, "skill", NAME, SKILL)
    record = (f"user: did the {NAME} skill help?\n"
              f"assistant: yes, I used {NAME} and the app renders again.")
    assert ArtifactIndex.load(vault).check(record) is None


def test_discussion_paragraph_is_not_excluded(vault):
    record_artifact(vault, "skill", NAME, SKILL)
    record = ("I read the Invalid hook call after npm link skill. It says the component "
              "library is symlinked into the app and its folder has its own React, and "
              "suggests a bundler alias instead of linking the runtime by hand. I think the "
              "alias is overkill here: the library already ships a build that lists React "
              "as a peer, so we just install it from the registry. Also the skill should "
              "mention pnpm, whose workspaces avoid the second copy differently.")
    index = ArtifactIndex.load(vault)
    assert index.check(record) is None
    assert len(set(shingles(record)) & set(index.artifacts[0].shingles)) > 0  # it does share phrases


def test_recurrence_of_the_error_a_skill_quotes_is_not_excluded(vault):
    record_artifact(vault, "skill", NAME, SKILL)
    index = ArtifactIndex.load(vault)
    assert index.check(CASE["evidence"]) is None
    assert index.check(CASE["recurrence"]) is None


def test_reference_chunk_is_excluded_with_the_reference_threshold(vault):
    chunk = GUNICORN
    record_artifact(vault, "reference", "gunicorn#timeout", chunk)
    words = chunk.split()
    partial = " ".join(words[: int(len(words) * 0.75)])  # three quarters of the chunk
    record = _transcript("user: gunicorn kills the worker on the export page",
                         "assistant: from the docs:\n> " + "\n> ".join(textwrap.wrap(partial, 60)),
                         "user: so I raise the timeout for that location. thanks")
    strict = ArtifactIndex.load(vault)
    lenient = ArtifactIndex.load(vault, thresholds={"reference": 0.6})
    assert strict.check(record) is None
    match = lenient.check(record)
    assert match is not None and match.kind == "reference" and match.threshold == 0.6
    assert 0.6 <= match.overlap < 0.8
    assert ArtifactIndex.load(vault, thresholds={"skill": 0.6}).check(record) is None


def test_long_reference_quoted_in_part_is_excluded_by_window(vault):
    sections = [f"## {ref_id}\n\n{text}" for ref_id, text in REFERENCES.items()]
    document = "# Troubleshooting notes\n\n" + "\n\n".join(sections)
    record_artifact(vault, "reference", "troubleshooting.md", document)
    go = GO_MAPS
    record = _transcript("user: my program dies with concurrent map writes",
                         "assistant: the reference says:\n" + textwrap.fill(go, 50),
                         "user: two handlers share the cache map, that's it")
    match = ArtifactIndex.load(vault).check(record)
    assert match is not None and match.measure == "window" and match.overlap >= 0.8
    one_sentence = go.split(";")[0]
    assert ArtifactIndex.load(vault).check(f"the spec says {one_sentence}, right?") is None


def test_any_105_shingle_quote_of_a_long_reference_is_caught(vault):
    lessons = [row["memory"] for row in dev_rows.rows("cases")[:27]]
    document = "\n\n".join(f"## Lesson {i}\n\n{text}" for i, text in enumerate(lessons))
    artifact = record_artifact(vault, "reference", "lessons.md", document)
    assert len(artifact.shingles) > 4 * REFERENCE_WINDOW
    words = normalise_for_shingles(document).split()
    index = ArtifactIndex.load(vault)
    for start in range(0, len(words) - 110, 13):
        caught = index.check("as the docs put it: " + " ".join(words[start:start + 109]))
        assert caught is not None and caught.measure == "window", start
        assert index.check("as the docs put it: " + " ".join(words[start:start + 60])) is None


def test_best_matching_artifact_wins(vault):
    record_artifact(vault, "skill", NAME, SKILL)
    other = GUNICORN
    record_artifact(vault, "reference", "gunicorn#timeout", other)
    index = ArtifactIndex.load(vault)
    assert index.check("see: " + other).name == "gunicorn#timeout"
    assert index.check(SKILL).name == NAME


def test_missing_and_empty_manifest_filter_nothing(vault):
    assert len(ArtifactIndex.load(vault)) == 0
    assert ArtifactIndex.load(vault / "no-such-vault").check(SKILL) is None
    (vault / MANIFEST).write_text("")
    index = ArtifactIndex.load(vault)
    assert len(index) == 0 and index.check(SKILL) is None


def test_corrupt_line_names_the_line(vault):
    record_artifact(vault, "skill", NAME, SKILL)
    record_artifact(vault, "reference", "gunicorn", GUNICORN)
    with (vault / MANIFEST).open("a") as manifest:
        manifest.write('{"kind": "skill", "name": "half a li\n')
    with pytest.raises(ManifestError) as err:
        ArtifactIndex.load(vault)
    assert err.value.line == 3 and ":3:" in str(err.value)
    before = (vault / MANIFEST).read_bytes()
    with pytest.raises(ManifestError):
        record_artifact(vault, "skill", "another", "some other skill text entirely here")
    assert (vault / MANIFEST).read_bytes() == before


@pytest.mark.parametrize("line, problem", [
    ('{"kind": "blog", "name": "x"}', "missing"),
    ("[1, 2]", "not a JSON object"),
    ("\xff\xfe", "not a JSON line"),
])
def test_malformed_entries_are_reported(vault, line, problem):
    record_artifact(vault, "skill", NAME, SKILL)
    with (vault / MANIFEST).open("ab") as manifest:
        manifest.write(line.encode("latin-1") + b"\n")
    with pytest.raises(ManifestError, match=problem) as err:
        read_manifest(vault)
    assert err.value.line == 2


def test_wrong_kind_and_foreign_scheme_are_reported(vault):
    entry = json.loads(record_artifact(vault, "skill", NAME, SKILL).to_json())
    for key, value, problem in [("kind", "blog", "kind must be"), ("scheme", "w3-md5", "scheme")]:
        (vault / MANIFEST).write_text(json.dumps({**entry, key: value}) + "\n")
        with pytest.raises(ManifestError, match=problem) as err:
            ArtifactIndex.load(vault)
        assert err.value.line == 1


def test_recording_is_idempotent_and_versions_are_kept(vault):
    first = record_artifact(vault, "skill", NAME, SKILL)
    again = record_artifact(vault, "skill", NAME, SKILL)
    assert again == first
    assert len((vault / MANIFEST).read_text().splitlines()) == 1
    revised = record_artifact(vault, "skill", NAME, SKILL + "\n- Tell the library's maintainers.\n")
    assert revised.sha256 != first.sha256
    assert [a.sha256 for a in read_manifest(vault)] == [first.sha256, revised.sha256]
    assert (vault / ".artifacts.lock").exists()


def test_recording_many_at_once_is_one_idempotent_append(vault):
    gunicorn, go = GUNICORN, GO_MAPS
    first = record_artifact(vault, "skill", NAME, SKILL)
    recorded = record_artifacts(vault, [("skill", NAME, SKILL), ("reference", "gunicorn", gunicorn),
                                        ("reference", "go", go), ("reference", "gunicorn", gunicorn)])
    assert recorded[0] == first and recorded[1] == recorded[3]
    assert [a.name for a in read_manifest(vault)] == [NAME, "gunicorn", "go"]
    before = (vault / MANIFEST).read_bytes()
    with pytest.raises(ValueError, match="kind"):
        record_artifacts(vault, [("reference", "new", "a new chunk of docs"), ("blog", "x", "y z")])
    assert (vault / MANIFEST).read_bytes() == before


def test_record_never_glues_onto_a_line_without_newline(vault):
    record_artifact(vault, "skill", NAME, SKILL)
    path = vault / MANIFEST
    path.write_bytes(path.read_bytes().rstrip(b"\n"))
    record_artifact(vault, "reference", "go-spec", GO_MAPS)
    assert [a.name for a in read_manifest(vault)] == [NAME, "go-spec"]


def _record_many(vault: str, worker: int) -> None:
    for i in range(15):
        record_artifact(Path(vault), "skill", f"skill-{worker}-{i}",
                        f"worker {worker} wrote skill number {i} about flaky builds")


def test_concurrent_writers_keep_every_line_whole(vault):
    context = multiprocessing.get_context("fork")
    workers = [context.Process(target=_record_many, args=(str(vault), w)) for w in range(4)]
    for process in workers:
        process.start()
    for process in workers:
        process.join()
    assert all(process.exitcode == 0 for process in workers)
    names = [a.name for a in read_manifest(vault)]
    assert sorted(names) == sorted(f"skill-{w}-{i}" for w in range(4) for i in range(15))


def test_bad_input_is_a_clear_error(vault):
    with pytest.raises(ValueError, match="kind"):
        record_artifact(vault, "blogpost", "x", "some text here")
    with pytest.raises(ValueError, match="name"):
        record_artifact(vault, "skill", " ", "some text here")
    with pytest.raises(ValueError, match="no words"):
        record_artifact(vault, "skill", "empty", "```\n---\n```")
    with pytest.raises(ValueError, match="does not exist"):
        record_artifact(vault / "missing", "skill", "x", "some text here")
    with pytest.raises(ValueError, match="unknown artifact kind"):
        ArtifactIndex.load(vault, thresholds={"blog": 0.5})
    with pytest.raises(ValueError, match=r"\(0, 1\]"):
        ArtifactIndex.load(vault, thresholds={"skill": 1.5})


def test_thresholds_parse_from_a_setting():
    assert parse_thresholds(" skill=0.9, reference=0.65 ") == {"skill": 0.9, "reference": 0.65}
    assert parse_thresholds("") == {}
    for bad, problem in [("skill", "kind=number"), ("skill=high", "kind=number"),
                         ("blog=0.5", "unknown artifact kind"), ("reference=0", r"\(0, 1\]")]:
        with pytest.raises(ValueError, match=problem):
            parse_thresholds(bad)


def test_add_updates_the_index_in_process(vault):
    index = ArtifactIndex.load(vault)
    assert index.check(SKILL) is None
    index.add(record_artifact(vault, "skill", NAME, SKILL))
    index.add(read_manifest(vault)[0])  # the same artifact again is ignored
    assert len(index) == 1 and index.check(SKILL).name == NAME


def test_refresh_picks_up_what_others_appended(vault):
    index = ArtifactIndex.load(vault)
    assert index.refresh() == 0
    record_artifact(vault, "skill", NAME, SKILL)  # as another process would
    assert index.check(SKILL) is None
    assert index.refresh() == 1 and index.check(SKILL).name == NAME
    assert index.refresh() == 0
    record_artifact(vault, "reference", "gunicorn", GUNICORN)
    with (vault / MANIFEST).open("a") as manifest:
        manifest.write("not json\n")
    with pytest.raises(ManifestError) as err:
        index.refresh()
    assert err.value.line == 3
    (vault / MANIFEST).unlink()
    record_artifact(vault, "reference", "gunicorn", GUNICORN)  # a new file: read from its start
    assert index.refresh() == 1
    assert len(index) == 1 and index.check(SKILL) is None and index.check(GUNICORN).name == "gunicorn"


def test_verify_evidence_lists_only_derived_records(vault):
    index = ArtifactIndex.load(vault)
    index.add(record_artifact(vault, "skill", NAME, SKILL))
    evidence = [("a" * 64, CASE["evidence"]), ("b" * 64, "log:\n" + _reformat(SKILL)),
                ("c" * 64, f"we should update {NAME}")]
    violations = verify_evidence(index, evidence)
    assert [v.evidence_sha for v in violations] == ["b" * 64]
    assert violations[0].to_dict()["name"] == NAME
    assert f"{'b' * 64} quotes skill {NAME!r}" in str(violations[0])
    assert verify_evidence(index, evidence[:1] + evidence[2:]) == []


def test_normalisation_strips_markdown_and_case():
    text = ("## Steps\n\n1. Run `npm ci`\n   - see [the docs](https://docs.npmjs.com/cli)\n"
            "> **Note:** _really_\n```bash\nnpm ci --Force\n```\n- [x] done\n")
    assert normalise_for_shingles(text) == (
        "steps run npm ci see the docs note really npm ci force done")


# -- properties ------------------------------------------------------------------------

WORD = st.text(st.characters(categories=("Ll", "Lu", "Nd")), min_size=1, max_size=8)


@st.composite
def reformatted(draw):
    """(plain words, the same words laid out with arbitrary whitespace and markdown)."""
    words = draw(st.lists(WORD, min_size=1, max_size=40))
    lines, i = [], 0
    while i < len(words):
        take = draw(st.integers(1, 6))
        chunk = list(words[i:i + take])
        i += take
        if draw(st.booleans()):
            k = draw(st.integers(0, len(chunk) - 1))
            mark = draw(st.sampled_from(["*", "**", "_", "__", "`", "~~"]))
            chunk[k] = f"{mark}{chunk[k]}{mark}"
        if len(chunk) > 1 and draw(st.booleans()):
            chunk = [f"[{chunk[0]}", f"{chunk[1]}](https://example.org/page_{i}.html)", *chunk[2:]]
        gap = draw(st.sampled_from([" ", "  ", "\t", " \t "]))
        prefix = draw(st.sampled_from(["", "  ", "\t", "- ", "* ", "+ ", "12. ", "3) ", "# ",
                                       "### ", "> ", "> > ", "    - [ ] ", "1. [x] "]))
        before = draw(st.sampled_from(["", "\n", "```python\n", "~~~\n", "---\n", "| "]))
        after = draw(st.sampled_from(["", " ", "  |", "\n```", "\n"]))
        lines.append(f"{before}{prefix}{gap.join(chunk)}{after}")
    layout = draw(st.sampled_from(["\n", "\r\n", "\n\n"])).join(lines)
    if draw(st.booleans()):
        layout = json.dumps(layout, ensure_ascii=draw(st.booleans()))
    return " ".join(words), layout


@given(st.text())
@settings(max_examples=300)
def test_normalisation_is_idempotent(text):
    once = normalise_for_shingles(text)
    assert normalise_for_shingles(once) == once
    assert shingles(once) == shingles(text)


@given(reformatted(), st.integers(1, 7))
@settings(max_examples=300)
def test_reformatting_never_changes_shingles(pair, n):
    plain, layout = pair
    assert normalise_for_shingles(layout) == normalise_for_shingles(plain)
    assert shingles(layout, n=n) == shingles(plain, n=n)
