"""Every input path validated at its edge (issue 19): import lines, argv, streams as
input, HTTP strings with lone surrogates, junk lessons. Each bad input gets a one-line
`mem: error:` (or a 422), never a traceback, and nothing is written for it."""
from __future__ import annotations

import json
import os
import random
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from hypothesis import HealthCheck, given, settings, strategies as st

from poimen.edge import SURROGATE, parse_import
from poimen.engine import Engine
from poimen.http import create_app

MEM = str(Path(sys.executable).with_name("mem"))
FAILURE = "npm ERR! code ERESOLVE\nnpm ERR! ERESOLVE unable to resolve dependency tree"


def mem(vault: Path, *args, stdin: bytes | None = None, pass_fds=()) -> subprocess.CompletedProcess:
    done = subprocess.run([MEM, "--vault", str(vault), "--json", *args], input=stdin,
                          capture_output=True, timeout=600, pass_fds=pass_fds)
    assert b"Traceback" not in done.stderr, done.stderr[-3000:]
    return done


def _log_bytes(vault: Path) -> int:
    return sum(p.stat().st_size for p in (vault / "log" / "segments").glob("*.jsonl"))


def _lesson(i: int) -> str:
    return json.dumps({"text": f"lesson {i}: pin the {random.choice('abcdef')}-package to "
                               f"{random.randint(1, 99)}.{i}", "evidence": f"Error: E{i} failed"})


BAD_LINES = ['{"text": "parents as numbers", "parents": [1, 2]}',
             "[" * 5000 + "]" * 5000, '{"text": "lone \\ud800 surrogate"}', "{not json",
             '{"text": 7}', '{"text": "bad level", "level": "L9"}',
             '{"text": "bad evidence", "evidence": {"a": 1}}', '"just a string"',
             '{"text": "bad supersedes", "supersedes": "abc"}']


@pytest.mark.parametrize("bad", BAD_LINES, ids=range(len(BAD_LINES)))
def test_an_invalid_import_line_refuses_the_file_and_writes_nothing(tmp_path, bad):
    vault = tmp_path / "v"
    assert mem(vault, "init").returncode == 0
    before = _log_bytes(vault)
    lines = [_lesson(1), bad, _lesson(2)]
    done = mem(vault, "import", "-", stdin="\n".join(lines).encode())
    assert done.returncode == 2 and done.stderr.startswith(b"mem: error:")
    assert b"import line 2:" in done.stderr and len(done.stderr.splitlines()) == 1
    assert _log_bytes(vault) == before


def test_skip_invalid_imports_the_good_lines_and_reports_each_bad_one(tmp_path):
    vault = tmp_path / "v"
    lines = [_lesson(i) if i % 3 else BAD_LINES[i % len(BAD_LINES)] for i in range(1, 10)]
    done = mem(vault, "import", "--skip-invalid", "-", stdin="\n".join(lines).encode())
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    assert [e.split(":")[0] for e in out["skipped"]] == ["import line 3", "import line 6", "import line 9"]
    assert sum(out["counts"].values()) == 6


def test_argv_that_is_not_utf8_is_a_one_line_error(tmp_path):
    for args in (["remember", "--level", "L1", "--text", b"fix \xff\xfe it"],
                 ["--project", b"\xc3\x28", "init"], ["ingest", "--tool", b"np\x80m", "-"]):
        done = subprocess.run([MEM, "--vault", str(tmp_path / "v"), *args], input=b"x",
                              capture_output=True, timeout=120)
        assert done.returncode == 2 and done.stderr.startswith(b"mem: error: argument")
        assert len(done.stderr.splitlines()) == 1
    assert not (tmp_path / "v").exists()


def test_any_readable_stream_is_input_and_a_folder_is_a_one_line_error(tmp_path):
    vault = tmp_path / "v"
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    writer = threading.Thread(target=lambda: fifo.write_text(FAILURE))
    writer.start()
    done = mem(vault, "ingest", "--tool", "npm", str(fifo))
    writer.join()
    assert done.returncode == 0 and json.loads(done.stdout)["results"][0]["evidence_sha"]
    read, write = os.pipe()
    os.write(write, FAILURE.encode() + b"\nmore")
    os.close(write)
    done = mem(vault, "signature", f"/dev/fd/{read}", pass_fds=(read,))
    os.close(read)
    assert done.returncode == 0, done.stderr
    for path in (tmp_path, tmp_path / "missing.log"):
        done = mem(vault, "ingest", str(path))
        assert done.returncode == 2 and done.stderr.startswith(b"mem: error:")
        assert len(done.stderr.splitlines()) == 1


@pytest.fixture(scope="module")
def client(tmp_path_factory):
    engine = Engine(tmp_path_factory.mktemp("edge") / "vault", project="p")
    evidence = engine.ingest(FAILURE, tool="npm").evidence_sha
    engine.remember("L1", "ERESOLVE with react 18: pin react-dom to 18.2", parents=[evidence])
    return TestClient(create_app(engine), base_url="http://127.0.0.1")


@settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck))
@given(field=st.sampled_from(["tool", "task", "signature_source", "project", "request_id"]),
       text=st.text(max_size=20), lone=st.integers(0xD800, 0xDFFF))
def test_http_strings_with_a_lone_surrogate_are_422_naming_the_field(client, field, text, lone):
    value = text + chr(lone) + text
    body = json.dumps({"signature_source": FAILURE, field: value}).encode()   # \\udXXX escape
    answer = client.post("/memory/context", content=body,
                         headers={"content-type": "application/json"})
    assert answer.status_code == 422, answer.text
    assert field in answer.json()["reason"]


@pytest.mark.parametrize("junk", ["-", "\u200b", "\\n\\t\\n", " \t\n", "...", "a1 b2", "\u200b" * 9])
def test_the_gate_refuses_junk_lessons(tmp_path, junk):
    engine = Engine(tmp_path / "v", project="p")
    result = engine.remember("L1", junk, without_evidence=True)
    assert result.verdict == "rejected" and "words" in result.reason


def test_an_l1_cannot_supersede_evidence(tmp_path):
    engine = Engine(tmp_path / "v", project="p")
    evidence = engine.ingest(FAILURE, tool="npm").evidence_sha
    result = engine.remember("L1", "ERESOLVE: pin react-dom to 18.2", parents=[evidence],
                             supersedes=evidence)
    assert result.verdict == "rejected" and "L0" in result.reason


json_values = st.recursive(st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False)
                           | st.text(), lambda inner: st.lists(inner, max_size=4)
                           | st.dictionaries(st.text(max_size=8), inner, max_size=4), max_leaves=12)
import_keys = st.sampled_from(["text", "memory", "level", "evidence", "tool", "project",
                               "source", "parents", "supersedes", "id", "other"])


@settings(max_examples=500, deadline=None)
@given(st.lists(st.one_of(st.dictionaries(import_keys, json_values, max_size=6).map(json.dumps),
                          st.text(max_size=60), st.just("[" * 3000)), max_size=8))
def test_import_lines_fuzz_every_line_is_an_item_or_a_numbered_error(lines):
    """The CLI's import parser never raises; each non-blank line is kept with the shape
    the engine needs, or reported by number."""
    text = "\n".join(lines)
    parsed = parse_import(text)
    numbers = [item["line"] for item in parsed.items] + [
        int(e.split(":")[0].split()[-1]) for e in parsed.errors]
    assert sorted(numbers) == [i for i, line in enumerate(text.splitlines(), 1) if line.strip()]
    for item in parsed.items:
        assert isinstance(item["text"], str) and not SURROGATE.search(item["text"])
        assert all(isinstance(e, str) for e in item["evidence"])
        assert all(isinstance(p, str) and len(p) == 64 for p in item["parents"])
        assert item.get("level", "L1") in ("L1", "L2")
