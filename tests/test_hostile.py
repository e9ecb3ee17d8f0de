"""Hostile input through `Engine.ingest` and signature extraction: a clear outcome, bounded memory.

Each input runs in a fresh process (tests/stress/hostile_run.py) so its peak memory can
be read; the timeout is a hang guard, not a speed claim (figures: docs/RELIABILITY.md).
"""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from poimen.log import Log
from stress.crashkit import mem
from stress.hostile_run import PLANTED_TOKEN

RUNNER = Path(__file__).parent / "stress" / "hostile_run.py"
MB = 1_000_000
INPUTS = [("single-line", 50 * MB), ("lines", 1_000_000), ("binary", 10 * MB),
          ("invalid-utf8", 10 * MB), ("nul", 10 * MB), ("ansi", 10 * MB)]
HANG_GUARD_S = 1800
# The engine keeps the input, its redacted copy and the log line in memory at once, and
# a 4-byte-per-character copy where the text is not Latin-1: well under 40 bytes a byte.
RSS_PER_INPUT_BYTE = 40


@pytest.mark.parametrize("kind,size", INPUTS, ids=[k for k, _ in INPUTS])
def test_hostile_input_is_recorded_with_bounded_memory(tmp_path, kind, size):
    vault = tmp_path / "vault"
    proc = subprocess.run([sys.executable, str(RUNNER), str(vault), kind, str(size)],
                          capture_output=True, timeout=HANG_GUARD_S)
    assert proc.returncode == 0, proc.stderr.decode(errors="replace")[-3000:]
    outcome = json.loads(proc.stdout.decode().strip().splitlines()[-1])
    print("hostile:", json.dumps(outcome))
    assert "error" not in outcome, outcome
    assert len(outcome["evidence_sha"]) == 64
    assert outcome["signatures"] <= 8 and outcome["extracted"] <= 8
    grown_mb = outcome["peak_rss_mb"] - outcome["engine_rss_mb"]
    assert grown_mb * MB <= RSS_PER_INPUT_BYTE * outcome["bytes"], outcome
    entries = Log(vault / "log").entries(verify=True)
    (evidence,) = [e for e in entries if e.sha == outcome["evidence_sha"]]
    assert "\x00" not in evidence.rec["text"]
    assert PLANTED_TOKEN not in evidence.rec["text"]
    if kind == "single-line":
        assert ["github-token", 1] in outcome["redactions"]
    assert mem("--vault", str(vault), "verify")[0] == 0
