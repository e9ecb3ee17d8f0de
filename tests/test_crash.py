"""Crash safety: writers killed with SIGKILL inside their writes lose nothing acknowledged.

The short run here (8 trials) is part of the suite, once on a folder vault and once on a
team vault (`s3://` on a moto server on loopback); `make stress` runs 60 (tests/stress).
"""
from __future__ import annotations

import os
import signal
import subprocess
import sys

import pytest

from poimen.engine import Engine
from poimen.log import Log
from s3kit import BUCKET, S3Server
from stress.crashkit import FAULTY_MEM, check_vault, mem, on_disk, run_trials


@pytest.fixture(params=["folder", "s3"])
def vault(request, tmp_path, monkeypatch):
    """A folder vault, or a team vault seen from one machine (this process's environment)."""
    if request.param == "folder":
        yield tmp_path / "vault"
        return
    server = S3Server(tmp_path / "moto").start()
    for key, value in server.machine(tmp_path / "machine", "crasher").items():
        monkeypatch.setenv(key, value)
    try:
        yield f"s3://{BUCKET}/crash"
    finally:
        server.stop()


def test_writers_killed_inside_writes_keep_every_acknowledged_record(vault, tmp_path,
                                                                     monkeypatch):
    totals = run_trials(vault, 8, seed=8, work=tmp_path / "work")
    assert totals["trials"] == 8
    assert set(totals["faults"]) == {"log", "lance", "timer"}
    assert set(totals["writers"]) == {"ingest", "import", "lsp"}
    assert totals["occurrences"] > 0              # hovers the LSP server answered and logged
    assert totals["killed"] >= 4                  # most trials die mid-write
    assert totals["acked"] > 0 and totals["found"] == totals["acked"]
    assert totals["repairs"] >= 1                 # at least one torn tail was cut and noted
    assert totals["leaked"] == 0 and totals["secrets"] > 0
    if str(vault).startswith("s3://"):   # another machine finds every acknowledged record
        writer = Log(on_disk(vault) / "log").entries()
        monkeypatch.setenv("POIMEN_STATE_DIR", str(tmp_path / "other-machine"))
        monkeypatch.setenv("POIMEN_WRITER", "other")
        assert mem("--vault", vault, "sync")[0] == 0
        found = {e.sha for e in Log(on_disk(vault) / "log").entries(verify=True)}
        assert {e.sha for e in writer} <= found


def test_torn_record_is_cut_and_kept_for_inspection(tmp_path):
    vault = tmp_path / "vault"
    (tmp_path / "a.log").write_text("ModuleNotFoundError: No module named 'yaml'\n")
    (tmp_path / "b.log").write_text("ModuleNotFoundError: No module named 'toml'\n")
    assert mem("--vault", str(vault), "ingest", str(tmp_path / "a.log"))[0] == 0
    env = dict(os.environ, POIMEN_CRASH="log:1:7")
    proc = subprocess.run([sys.executable, str(FAULTY_MEM), "--vault", str(vault), "ingest",
                           str(tmp_path / "b.log")], env=env, capture_output=True)
    assert proc.returncode == -signal.SIGKILL
    check_vault(vault, set(), [])
    repairs = [e.rec for e in Log(vault / "log").entries() if e.rec["type"] == "log_repair"]
    assert len(repairs) == 1 and repairs[0]["action"] == "cut torn tail"
    torn = list((vault / "log" / "torn").iterdir())
    assert len(torn) == 1 and torn[0].stat().st_size == repairs[0]["torn_bytes"] > 0


def test_torn_tail_left_by_a_killed_cli_does_not_swallow_a_live_writers_record(tmp_path):
    """A long-lived writer (the LSP server, `mem serve`) has the vault open while a CLI
    writer on the same host dies mid-append. The live writer's next append must not be
    glued onto the torn bytes: that makes an unreadable line in the middle of the
    segment, which loses the acknowledged record and stops the vault from opening."""
    vault = tmp_path / "vault"
    server = Engine(vault, project="crash")
    server.ingest("error: first failure\n", source="terminal")
    (tmp_path / "b.log").write_text("ModuleNotFoundError: No module named 'toml'\n")
    env = dict(os.environ, POIMEN_CRASH="log:1:7")
    proc = subprocess.run([sys.executable, str(FAULTY_MEM), "--vault", str(vault), "ingest",
                           str(tmp_path / "b.log")], env=env, capture_output=True)
    assert proc.returncode == -signal.SIGKILL
    acked = server.ingest("error: second failure, after the crash\n").evidence_sha
    check_vault(vault, {acked}, [])
