"""Acceptance for the derived-content filter through the real `mem` CLI, in subprocesses.

A vault learns one real failure, emits a skill from its lesson and imports a reference
document; transcripts that quote them (verbatim, reformatted, as JSON) come back through
`mem ingest`. With the filter they are excluded and every exclusion is in the log with
what it matched; mentions and discussion stay evidence. `mem verify --derived-filter`
passes on that vault and fails on a copy whose transcripts went in with the filter off.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import dev_rows

MEM = Path(sys.executable).with_name("mem")
CASE = dev_rows.row("js-webpack5-no-node-core-polyfills")
REFERENCE = dev_rows.row("js-ref-npm-global-install-eacces")
SKILL = "webpack5-node-polyfills"


def mem(vault: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess:
    env = {**os.environ, "XDG_DATA_HOME": str(vault.parent / "xdg"), "POIMEN_WRITER": "test"}
    env.pop("POIMEN_VAULT", None)
    done = subprocess.run([str(MEM), "--vault", str(vault), "--json", *args], env=env,
                          capture_output=True, text=True, timeout=300)
    if check and done.returncode != 0:
        raise AssertionError(f"mem {' '.join(args)} exited {done.returncode}:\n{done.stderr}")
    return done


def log_records(vault: Path) -> list[dict]:
    return [json.loads(line)["rec"] for segment in sorted((vault / "log" / "segments").glob("*.jsonl"))
            for line in segment.read_text().splitlines() if line.strip()]


def reformat(markdown: str) -> str:
    """How a chat shows a skill: headings and fences gone, bullets changed, lines re-wrapped."""
    out = []
    for line in markdown.splitlines():
        if line.startswith("- "):
            out.append("  * " + line[2:])
        elif line.strip() and line.strip() != "---":
            out.append(textwrap.fill(line.lstrip("# "), 50))
    return "\n".join(out)


@pytest.fixture(scope="module")
def taught(tmp_path_factory) -> tuple[Path, str]:
    """A vault with one lesson, a skill drawn from it and a reference document."""
    vault = tmp_path_factory.mktemp("taught") / "vault"
    work = vault.parent
    mem(vault, "init")
    (work / "evidence.txt").write_text(CASE["evidence"])
    evidence = json.loads(mem(vault, "ingest", str(work / "evidence.txt")).stdout)
    evidence_sha = evidence["results"][0]["evidence_sha"]
    lesson = json.loads(mem(vault, "remember", "--level", "L1", "--text", CASE["memory"],
                            "--parent", evidence_sha).stdout)
    assert lesson["verdict"] == "accepted", lesson
    mem(vault, "skill", "draft", "--name", SKILL, "--from", lesson["sha"])
    (work / "npm-docs.md").write_text(f"# npm documentation\n\n## {REFERENCE['heading']}\n\n"
                                      + textwrap.fill(REFERENCE["reference"], 72) + "\n")
    mem(vault, "ref", "add", str(work / "npm-docs.md"))
    return vault, (vault / "skills" / f"{SKILL}.md").read_text()


def transcripts(folder: Path, skill: str) -> dict[str, Path]:
    """Records that quote an artifact (derived) and records that only talk about it."""
    texts = {
        "verbatim": f"user: the browser build broke again\nassistant: loading skill {SKILL}\n\n"
                    f"{skill}\nuser: the fallback for crypto fixed it",
        "reformatted": "\n".join(json.dumps(turn) for turn in [
            {"role": "user", "content": "the bundle fails after the webpack upgrade"},
            {"role": "tool", "content": f"Skill {SKILL}:\n" + reformat(skill)},
            {"role": "assistant", "content": "I will add the fallbacks to the config."}]),
        "reference": "user: npm install -g says permission denied\n"
                     "assistant: the docs say:\n> "
                     + "\n> ".join(textwrap.wrap(REFERENCE["reference"], 64))
                     + "\nuser: ok, I set a user prefix",
        "mention": f"user: is there a skill for this?\nassistant: yes, {SKILL}; it covers "
                   "missing Node built-ins after the webpack 5 upgrade.",
        "discussion": f"I read the {SKILL} skill. It says a server-side dependency imports "
                      "Node built-ins and the new bundler major stopped shimming them, so we "
                      "need explicit fallbacks. For this repo I disagree: the library ships a "
                      "browser build, so pointing the import at that build is the honest fix "
                      "and no polyfill is needed at all.",
        "recurrence": CASE["recurrence"],
    }
    paths = {}
    for name, text in texts.items():
        paths[name] = folder / f"{name}.txt"
        paths[name].write_text(text)
    return paths


DERIVED = {"verbatim": "skill", "reformatted": "skill", "reference": "reference"}


def ingest_all(vault: Path, paths: dict[str, Path], *flags: str) -> tuple[dict, str]:
    done = mem(vault, "ingest", "--source", "transcript", *flags, *map(str, paths.values()))
    results = {Path(r["file"]).stem: r for r in json.loads(done.stdout)["results"]}
    return results, done.stderr


def test_quotes_are_excluded_and_logged_talk_is_kept(taught, tmp_path):
    vault = tmp_path / "vault"
    shutil.copytree(taught[0], vault)
    paths = transcripts(tmp_path, taught[1])
    results, _ = ingest_all(vault, paths)
    manifest = {(a["kind"], a["name"]): a["sha256"] for a in
                map(json.loads, (vault / ".artifacts.jsonl").read_text().splitlines())}
    for name, kind in DERIVED.items():
        derived = results[name]["derived"]
        assert results[name]["evidence_sha"] is None, name
        assert derived["kind"] == kind and derived["threshold"] == 0.8, (name, derived)
        assert derived["overlap"] >= 0.8
        assert manifest[(kind, derived["name"])] == derived["artifact_sha"]
    assert results["verbatim"]["derived"]["name"] == SKILL
    for name in ("mention", "discussion", "recurrence"):
        assert results[name]["derived"] is None and results[name]["evidence_sha"], name
    assert results["recurrence"]["signatures"], "the recurrence is still recognised as a missing module"

    excluded = [r for r in log_records(vault) if r.get("type") == "derived_excluded"]
    assert sorted(r["meta"]["file"] for r in excluded) == sorted(str(paths[n]) for n in DERIVED)
    for event in excluded:
        name = Path(event["meta"]["file"]).stem
        assert event["source"] == "transcript"
        assert event["matched"] == results[name]["derived"]
    evidence_texts = [r["text"] for r in log_records(vault) if r.get("type") == "evidence"]
    assert not any("## Recognise it" in text for text in evidence_texts)

    verified = mem(vault, "verify", "--derived-filter")
    assert json.loads(verified.stdout) == {"ok": True, "problems": []}


def test_verify_fails_on_a_vault_built_without_the_filter(taught, tmp_path):
    vault = tmp_path / "vault"
    shutil.copytree(taught[0], vault)
    paths = transcripts(tmp_path, taught[1])
    results, stderr = ingest_all(vault, paths, "--no-derived-filter")
    assert "derived-content filter is OFF" in stderr
    assert all(r["derived"] is None and r["evidence_sha"] for r in results.values())
    marked = [r for r in log_records(vault) if r.get("type") == "evidence"
              and r.get("meta", {}).get("file") in {str(p) for p in paths.values()}]
    assert marked and all(r.get("derived_filter") == "disabled" for r in marked)
    assert mem(vault, "verify").returncode == 0  # the log itself is sound

    verified = mem(vault, "verify", "--derived-filter", check=False)
    assert verified.returncode == 1
    problems = json.loads(verified.stdout)["problems"]
    for name in DERIVED:
        sha = results[name]["evidence_sha"]
        assert any(sha in problem for problem in problems), (name, problems)
    assert not any(results[n]["evidence_sha"] in p for n in ("mention", "discussion", "recurrence")
                   for p in problems)
    assert any(f"skill {SKILL!r}" in problem for problem in problems)
