"""`mem` round trips through a real subprocess: JSON shapes, errors, exit codes."""

import json
import os
import subprocess
import sys

import lancedb
import pytest

from poimen.store import FULLTEXT

MEM = [sys.executable, "-m", "poimen.cli"]
FAILURE = """Traceback (most recent call last):
  File "/home/ci/app/main.py", line 3, in <module>
    import yaml
ModuleNotFoundError: No module named 'yaml'
"""
RECURRENCE = FAILURE.replace("/home/ci/app", "/Users/ana/src/svc").replace("line 3", "line 14")
LESSON = ("The container image lacked PyYAML because it was only in the dev requirements; "
          "we moved it to the runtime requirements file.")


def mem(vault, *args, stdin=None, check=True):
    proc = subprocess.run([*MEM, "--vault", str(vault), *args], input=stdin,
                          capture_output=True, text=True,
                          env={**os.environ, "POIMEN_WRITER": "test"})
    if check and proc.returncode != 0:
        raise AssertionError(f"mem {args} failed ({proc.returncode}): {proc.stderr}")
    return proc


def as_json(proc):
    return json.loads(proc.stdout)


@pytest.fixture(scope="module")
def vault(tmp_path_factory):
    root = tmp_path_factory.mktemp("cli")
    (root / "first.log").write_text(FAILURE)
    return root / "vault", root


def test_round_trip_through_the_cli(vault):
    path, root = vault
    assert as_json(mem(path, "init", "--json"))["vault"] == str(path)
    ingested = as_json(mem(path, "ingest", "--json", "--source", "ci", str(root / "first.log")))
    result = ingested["results"][0]
    assert result["evidence_sha"] and result["signatures"][0]["tool"] == "python"
    lesson = as_json(mem(path, "remember", "--json", "--level", "L1", "--text", LESSON,
                         "--parent", result["evidence_sha"]))
    assert lesson["verdict"] == "accepted" and len(lesson["sha"]) == 64
    assert lesson["projection"]["model_id"]
    hits = as_json(mem(path, "search", "--json", "--kind", "text", "PyYAML runtime requirements"))
    assert hits["hits"][0]["sha"] == lesson["sha"]
    answer = as_json(mem(path, "context", "--json", "--signature-source", "-", stdin=RECURRENCE))
    assert answer["tier"] == 1 and answer["lessons"][0]["sha"] == lesson["sha"]
    stats = as_json(mem(path, "stats", "--json"))
    assert stats["memories"]["L0"] == 1 and stats["memories"]["L1"] == 1
    assert as_json(mem(path, "verify", "--json")) == {"ok": True, "problems": []}
    rebuilt = as_json(mem(path, "rebuild", "--from-log", "--json"))
    assert rebuilt["records"] >= 3 and rebuilt["projection_drift"] == []
    assert as_json(mem(path, "verify", "--json"))["ok"] is True


def test_global_options_may_come_before_the_command(vault):
    path, _ = vault
    proc = subprocess.run([*MEM, "--json", "--vault", str(path), "stats"], capture_output=True,
                          text=True, check=True)
    assert "memories" in json.loads(proc.stdout)


def test_import_reads_jsonl_with_evidence(vault, tmp_path):
    path, _ = vault
    lines = [{"id": "a", "text": "Go modules failed offline because GOFLAGS=-mod=mod "
                                 "forced network resolution; vendoring fixed it.",
              "evidence": "go: github.com/pkg/errors@v0.9.1: Get \"https://proxy.golang.org/"
                          "github.com/pkg/errors/@v/v0.9.1.mod\": dial tcp: lookup "
                          "proxy.golang.org: no such host", "tool": "go"},
             {"id": "b", "text": "We pick boring technology for the build system.",
              "level": "L1"}]
    file = tmp_path / "import.jsonl"
    file.write_text("\n".join(json.dumps(line) for line in lines) + "\n")
    out = as_json(mem(path, "import", "--json", str(file)))
    assert out["counts"] == {"accepted": 2}
    assert [m["id"] for m in out["memories"]] == ["a", "b"]
    # the full-text index (made by the lookup above) covers the imported rows at once:
    # rows it lacked would be scored apart until housekeeping, and answers would change
    memories = lancedb.connect(str(path / "lance")).open_table("memories")
    stats = memories.index_stats(f"{FULLTEXT}_idx")
    assert stats.num_indexed_rows == memories.count_rows() and stats.num_unindexed_rows == 0
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"text": "fine"}\nnot json\n')
    proc = mem(path, "import", str(bad), check=False)
    assert proc.returncode == 2 and "import line 2" in proc.stderr


@pytest.mark.parametrize("args, message", [
    (["remember", "--level", "L3", "--text", "x"], "level must be L1 or L2"),
    (["ingest", "/no/such/file.log"], "no such file"),
    (["ingest", "--source", "email", "-"], "--source must be one of"),
    (["rebuild"], "--from-log"),
])
def test_user_mistakes_get_one_clear_line_and_no_traceback(vault, args, message):
    path, _ = vault
    proc = mem(path, *args, check=False, stdin="")
    assert proc.returncode != 0
    assert message in proc.stdout + proc.stderr
    assert "Traceback" not in proc.stderr


@pytest.mark.parametrize("name, value, message", [
    ("POIMEN_LEG_TIMEOUT_S", "soon", "POIMEN_LEG_TIMEOUT_S must be a number of seconds"),
    ("POIMEN_LEG_TIMEOUT_S", "0", "between 0 and 600 seconds"),
    ("POIMEN_DERIVED_THRESHOLDS", "skill", "POIMEN_DERIVED_THRESHOLDS: threshold 'skill'"),
])
def test_an_unusable_environment_setting_is_named_without_a_traceback(vault, name, value,
                                                                      message):
    path, _ = vault
    proc = subprocess.run([*MEM, "--vault", str(path), "stats"], capture_output=True,
                          text=True, env={**os.environ, name: value})
    assert proc.returncode == 2
    assert proc.stderr.startswith("mem: error: ") and message in proc.stderr
    assert "Traceback" not in proc.stderr


def test_a_missing_vault_is_named(tmp_path):
    proc = mem(tmp_path / "nowhere", "stats", check=False)
    assert proc.returncode == 2 and "no vault at" in proc.stderr and "mem init" in proc.stderr


def test_help_lists_every_command():
    out = subprocess.run([*MEM, "--help"], capture_output=True, text=True, check=True).stdout
    for command in ("init", "ingest", "remember", "import", "context", "search", "signature",
                    "symptoms", "ref", "skill", "rebuild", "verify", "stats", "run", "serve",
                    "lsp", "demo"):
        assert command in out, command


def test_run_tees_output_and_answers_on_failure(vault, tmp_path):
    path, _ = vault
    script = tmp_path / "fails.py"
    script.write_text("import sys\nsys.stderr.write(" + repr(RECURRENCE) + ")\nsys.exit(3)\n")
    proc = mem(path, "run", "--", sys.executable, str(script), check=False)
    assert proc.returncode == 3
    assert "ModuleNotFoundError" in proc.stdout
    assert "Tier 1" in proc.stderr and "PyYAML" in proc.stderr
    ok = mem(path, "run", "--", sys.executable, "-c", "print('fine')", check=False)
    assert ok.returncode == 0 and ok.stdout.strip() == "fine"



def test_a_first_failure_is_new_and_only_an_earlier_run_makes_it_seen(tmp_path):
    """`mem run` on a fresh vault: the run's own evidence is this occurrence, not an
    earlier one; the second run is "seen 1×" (the first run), never counted twice."""
    path = tmp_path / "fresh"
    mem(path, "init")
    command = ("run", "--", sys.executable, "-c", "import some_missing_module_xyz")
    first = mem(path, *command, check=False)
    assert first.returncode == 1
    assert "new here" in first.stderr and "Tier 1" not in first.stderr
    assert "mem remember --level L1 --parent" in first.stderr   # how to record the fix
    second = mem(path, *command, check=False)
    assert "Tier 1 · seen 1×" in second.stderr, second.stderr
    third = as_json(mem(path, "--json", *command, check=False))
    known = [s for s in third["context"]["signatures"] if s["known"]]
    assert known and known[0]["seen_count"] == 2
