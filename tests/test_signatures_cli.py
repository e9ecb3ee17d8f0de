"""`mem signature` end to end through the real `mem` entry point."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

FIXTURES = Path(__file__).parent / "fixtures" / "signatures"
MEM = Path(sys.executable).with_name("mem")


def case(case_id: str) -> dict:
    rows = (json.loads(line) for line in (FIXTURES / "cases.jsonl").read_text().splitlines())
    return next(r for r in rows if r["id"] == case_id)


def mem(*args: str, stdin: str = "") -> subprocess.CompletedProcess:
    return subprocess.run([str(MEM), *args], input=stdin, capture_output=True, text=True,
                          timeout=60)


def test_json_from_stdin_matches_between_evidence_and_recurrence(tmp_path):
    row = case("pip-pep668-externally-managed")
    first = json.loads(mem("signature", "--json", "-", stdin=row["evidence"]).stdout)
    log = tmp_path / "recurrence.log"
    log.write_text(row["recurrence"])
    second = json.loads(mem("--json", "signature", str(log)).stdout)  # global --json too
    assert first["signatures"][0]["sig_sha"] == second["signatures"][0]["sig_sha"]
    assert first["signatures"][0]["rule"] == "pip-rich-error"


def test_human_output_shows_the_normalised_text():
    out = mem("signature", "-", stdin=case("npm-eresolve-peer-react-major")["evidence"])
    assert out.returncode == 0
    assert "normalised: ERESOLVE: found react@18; peer react@<=17" in out.stdout
    assert "rule npm-eresolve" in out.stdout


def test_missing_file_is_a_clear_error_and_empty_input_says_so():
    missing = mem("signature", "/no/such/file.log")
    assert missing.returncode != 0 and "no such file" in missing.stderr
    empty = mem("signature", "-", stdin="all green\n")
    assert empty.returncode == 0 and "no failure signature found" in empty.stdout
