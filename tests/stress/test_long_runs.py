"""`make stress`: the long crash and concurrency runs (collected only with POIMEN_STRESS=1)."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from stress.concurrencykit import check, lessons, run
from stress.crashkit import FAULTY_MEM, check_vault, run_trials
from test_housekeeping import churn, check as check_housekeeping
from test_log_cuts import template  # noqa: F401 - the fixture

# Sizes (defaults fit `make stress` in ~15 min on 2 cores); override for longer runs.
TRIALS = int(os.environ.get("POIMEN_STRESS_TRIALS", "60"))
WRITERS = int(os.environ.get("POIMEN_STRESS_WRITERS", "4"))
PER_WRITER = int(os.environ.get("POIMEN_STRESS_PER_WRITER", "250"))
WRITES = int(os.environ.get("POIMEN_STRESS_WRITES", "10000"))


def test_sixty_writers_killed_inside_writes_keep_every_acknowledged_record(tmp_path):
    totals = run_trials(tmp_path / "vault", TRIALS, seed=60, work=tmp_path / "work")
    print("crash trials:", json.dumps(totals))
    assert totals["trials"] == TRIALS
    assert totals["killed"] >= TRIALS // 2
    assert totals["found"] == totals["acked"] > 0
    assert totals["leaked"] == 0


def test_four_writers_by_250_and_a_reader(tmp_path):
    vault = tmp_path / "vault"
    outcome = run(vault, tmp_path / "work", WRITERS, PER_WRITER)
    figures = check(vault, outcome["answers"], PER_WRITER)
    print("concurrency:", json.dumps({**figures, "writers": WRITERS, "per_writer": PER_WRITER,
                                      "reader": {k: v for k, v in
                                      outcome["reader"].items() if k != "errors"},
                                      "errors": len(outcome["reader"]["errors"]),
                                      "seconds": outcome["seconds"]}))
    assert figures["found"] == figures["acked"]
    assert outcome["reader"]["errors"] == [] and outcome["reader"]["torn"] == []
    assert outcome["reader"]["memories_read"] > 0 and outcome["reader"]["served_lessons"] > 0


def test_a_writer_killed_mid_append_while_three_others_write(tmp_path):
    """One of four concurrent writers dies inside a log write; the other three finish and
    all they acknowledged is there."""
    vault = tmp_path / "vault"
    work = tmp_path / "work"
    work.mkdir()
    procs = []
    for w in range(4):
        path = work / f"w{w}.jsonl"
        path.write_text("".join(json.dumps(x) + "\n" for x in lessons(100 + w, 60)))
        env = dict(os.environ)
        if w == 0:
            env["POIMEN_CRASH"] = "log:1:1"   # its first append (an import may be one batch)
        procs.append(subprocess.Popen([sys.executable, str(FAULTY_MEM), "--vault", str(vault),
                                       "--project", "conc", "--json", "import", str(path)],
                                      stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env))
    results = [p.communicate(timeout=3600) for p in procs]
    assert procs[0].returncode == -signal.SIGKILL
    acked = set()
    for proc, (out, err) in zip(procs[1:], results[1:]):
        assert proc.returncode == 0, err.decode(errors="replace")[-2000:]
        acked |= {m["sha"] for m in json.loads(out)["memories"] if m["sha"]}
    check_vault(vault, acked, [])


@pytest.mark.filterwarnings("ignore:optimize\\(cleanup_older_than=0\\)")
def test_ten_thousand_writes_keep_versions_and_disk_bounded(tmp_path, monkeypatch):
    from datetime import timedelta

    from poimen import store

    monkeypatch.setattr(store, "KEEP_VERSIONS_FOR", timedelta(0))
    figures = churn(tmp_path / "vault", WRITES)
    print("housekeeping:", json.dumps(figures))
    check_housekeeping(figures)


CUT_TRIALS = int(os.environ.get("POIMEN_STRESS_CUT_TRIALS", "20"))


def test_cut_occurrences_at_random_points_never_brick_the_vault(template, tmp_path):
    """Issue 19's cut-occurrence case, many times: the last record (an occurrence written
    by a tier-1 lookup) cut at a random byte under an intact projection.json."""
    import random
    import shutil

    from test_log_cuts import _cut_last_record, _records, _works

    rng = random.Random(19)
    for trial in range(CUT_TRIALS):
        vault = tmp_path / f"cut-{trial}"
        shutil.copytree(template, vault)
        before = {r["sha"] for r in _records(vault)}
        sha, cut = _cut_last_record(vault, rng.random())
        lost = set() if _whole(cut) else {sha}   # only its newline cut: the log completes it
        _works(vault, lost, serve=trial % 5 == 0)
        assert before - {r["sha"] for r in _records(vault)} == lost, trial


def _whole(cut: bytes) -> bool:
    """Whether a cut record is still a whole JSON line short of its newline."""
    try:
        json.loads(cut.splitlines()[-1] if cut.strip() else b"")
    except ValueError:
        return False
    return True
