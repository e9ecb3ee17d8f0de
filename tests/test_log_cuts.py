"""A cut, garbled or half-written log never bricks a vault (issue 19): after each damage,
`mem verify`, `mem context`, `mem rebuild --from-log` and `mem serve` work, only the
damaged record is lost, and its bytes are in log/torn/. Garbage in the middle of a
segment is reported with its offset and `mem verify --repair` salvages every good record."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from poimen.engine import Engine
from test_context_acceptance import Server

MEM = str(Path(sys.executable).with_name("mem"))
FAILURE = "npm ERR! code ERESOLVE\nnpm ERR! ERESOLVE unable to resolve dependency tree"
LESSON = "ERESOLVE with react 18: pin react-dom to 18.2 in package.json"


def mem(vault: Path, *args: str, stdin: str | None = None) -> subprocess.CompletedProcess:
    done = subprocess.run([MEM, "--vault", str(vault), "--project", "p", "--json", *args],
                          input=stdin, capture_output=True, text=True, timeout=600)
    assert "Traceback" not in done.stderr, done.stderr[-3000:]
    return done


@pytest.fixture(scope="module")
def template(tmp_path_factory) -> Path:
    """A vault whose last record is an occurrence written by a tier-1 lookup."""
    path = tmp_path_factory.mktemp("cuts") / "vault"
    engine = Engine(path, project="p")
    evidence = engine.ingest(FAILURE, source="terminal", tool="npm").evidence_sha
    engine.remember("L1", LESSON, parents=[evidence])
    assert engine.context({"signature_source": FAILURE, "tool": "npm"})["tier"] == 1
    last = engine.vault.log.entries()[-1]
    assert last.rec["type"] == "occurrence"
    return path


@pytest.fixture
def vault(template, tmp_path) -> Path:
    shutil.copytree(template, tmp_path / "vault")
    return tmp_path / "vault"


def _segment(vault: Path) -> Path:
    (segment,) = (vault / "log" / "segments").glob("*.jsonl")
    return segment


def _lines(vault: Path) -> list[bytes]:
    return _segment(vault).read_bytes().splitlines(keepends=True)


def _records(vault: Path) -> list[dict]:
    return [json.loads(line) for line in _lines(vault)]


def _served(vault: Path) -> None:
    server = Server(vault, log_dir=vault.parent)
    try:
        answer = server.ask(signature_source=FAILURE, tool="npm", scope="all-projects")
        assert answer["tier"] == 1 and LESSON in answer["lessons"][0]["text"]
    finally:
        server.stop()


def _works(vault: Path, lost: set[str], serve: bool = False) -> None:
    """Everything a user runs works, and only the records `lost` are gone."""
    if serve:   # first, so that the server is the one to find the damage
        _served(vault)
    done = mem(vault, "verify")
    assert done.returncode == 0, done.stdout + done.stderr
    shas = {r["sha"] for r in _records(vault)}
    assert not lost & shas
    answer = json.loads(mem(vault, "context", "--tool", "npm", "--signature-source", "-",
                            stdin=FAILURE).stdout)
    assert answer["tier"] == 1 and LESSON in answer["lessons"][0]["text"]
    rebuilt = mem(vault, "rebuild", "--from-log")
    assert rebuilt.returncode == 0, rebuilt.stderr
    assert mem(vault, "verify").returncode == 0


def _cut_last_record(vault: Path, keep: float) -> tuple[str, bytes]:
    lines = _lines(vault)
    last = lines[-1]
    cut = last[:int(len(last) * keep)]
    _segment(vault).write_bytes(b"".join(lines[:-1]) + cut)
    return json.loads(last)["sha"], cut


@pytest.mark.parametrize("keep", [0.1, 0.5, 0.97])
def test_a_cut_occurrence_under_an_intact_watermark_loses_only_itself(vault, keep):
    before = {r["sha"] for r in _records(vault)}
    sha, cut = _cut_last_record(vault, keep)
    _works(vault, {sha}, serve=keep == 0.5)
    assert before - {r["sha"] for r in _records(vault)} == {sha}
    assert cut in [p.read_bytes() for p in (vault / "log" / "torn").iterdir()]


def test_a_garbled_last_line_with_its_newline_goes_to_torn(vault):
    lines = _lines(vault)
    garbled = lines[-1][:20] + os.urandom(30).replace(b"\n", b".") + b"\n"
    _segment(vault).write_bytes(b"".join(lines[:-1]) + garbled)
    _works(vault, {json.loads(lines[-1])["sha"]})
    assert garbled in [p.read_bytes() for p in (vault / "log" / "torn").iterdir()]


def test_a_watermark_past_the_end_of_the_segment_is_a_torn_tail(vault):
    lines = _lines(vault)
    _segment(vault).write_bytes(b"".join(lines[:-1]))     # cut exactly at a line boundary
    _works(vault, {json.loads(lines[-1])["sha"]})


def test_lance_gone_is_rebuilt_not_an_empty_answer(vault):
    shutil.rmtree(vault / "lance")
    done = mem(vault, "context", "--tool", "npm", "--signature-source", "-", stdin=FAILURE)
    assert "rebuilding the projections" in done.stderr
    assert json.loads(done.stdout)["tier"] == 1


def test_garbage_in_the_middle_names_the_offset_and_repair_salvages_the_rest(vault):
    lines = _lines(vault)
    middle = len(lines) // 2
    junk = b"\x00garbage " + os.urandom(16).replace(b"\n", b" ") + b"\n"
    offset = sum(len(line) for line in lines[:middle])
    _segment(vault).write_bytes(b"".join(lines[:middle]) + junk + b"".join(lines[middle:]))
    _served(vault)    # the bad line is passed over, with a warning: serving goes on
    checked = mem(vault, "verify")
    assert checked.returncode == 1
    (problem,) = [p for p in json.loads(checked.stdout)["problems"] if "corrupt" in p]
    assert f"at byte {offset}" in problem and "mem verify --repair" in problem
    done = mem(vault, "rebuild", "--from-log")
    assert done.returncode == 2
    assert done.stderr.strip().splitlines()[-1].startswith("mem: error: log segment")
    assert f"at byte {offset}" in done.stderr and "mem verify --repair" in done.stderr
    repaired = mem(vault, "verify", "--repair")
    assert repaired.returncode == 0, repaired.stdout + repaired.stderr
    assert json.loads(repaired.stdout)["salvaged"][0]["offset"] == offset
    assert {json.loads(line)["sha"] for line in lines} <= {r["sha"] for r in _records(vault)}
    assert (vault / "log" / "torn" / f"{_segment(vault).stem}-{offset}.bin").read_bytes() == junk
    _works(vault, set())
