"""Concurrent writers: 4 `mem import` processes on one vault, plus a reader doing lookups
in process and through a `mem serve` on the same vault.

100 memories per writer here; `make stress` runs 4 × 250 (tests/stress).
"""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from poimen.engine import Engine
from stress.concurrencykit import check, run

WRITERS, PER_WRITER = 4, 100


def test_four_writers_and_a_reader_lose_nothing_and_duplicate_nothing(tmp_path):
    vault = tmp_path / "vault"
    outcome = run(vault, tmp_path / "work", WRITERS, PER_WRITER)
    figures = check(vault, outcome["answers"], PER_WRITER)
    assert figures["found"] == figures["acked"] >= WRITERS * (PER_WRITER - 10) * 0.9
    reader = outcome["reader"]
    assert reader["errors"] == []
    assert reader["torn"] == []
    assert reader["lookups"] > 0 and reader["fresh_reads"] > 0
    assert reader["memories_read"] > 0, "the reader never saw a memory the writers wrote"
    assert reader["served"] > 0 and reader["served_lessons"] > 0, \
        "mem serve never answered with a lesson the writers wrote"


def test_a_long_lived_reader_sees_memories_written_by_another_process(tmp_path):
    """The LSP server and `mem serve` keep one engine open for hours; a lesson recorded
    meanwhile with `mem remember` must show up in their lookups."""
    vault = tmp_path / "vault"
    reader = Engine(vault, project="p")
    query = "npm ERESOLVE unable to resolve dependency tree"
    assert reader.search(query, limit=3) == []
    subprocess.run([str(Path(sys.executable).with_name("mem")), "--vault", str(vault),
                    "--project", "p", "remember", "--level", "L1", "--without-evidence",
                    "--text", "npm ERESOLVE with react 18: fixed by pinning react-dom to 18.2"],
                   check=True, capture_output=True)
    assert [h["level"] for h in reader.search(query, limit=3)] == ["L1"]
    assert len(reader.context({"task": query})["lessons"]) == 1
