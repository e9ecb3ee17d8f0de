"""Concurrent writers: 4 `mem import` processes on one vault, plus a reader doing lookups
in process and through a `mem serve` on the same vault.

100 memories per writer here, once on a folder vault and once on a team vault (`s3://`
on a moto server on loopback, every writer, the server and the reader a machine of its
own); `make stress` runs 4 × 250 (tests/stress).
"""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from poimen.engine import Engine
from s3kit import BUCKET, S3Server
from stress.concurrencykit import check, run

WRITERS, PER_WRITER = 4, 100


@pytest.fixture(params=["folder", "s3"])
def target(request, tmp_path, monkeypatch):
    """(vault, machines): a folder, or a team vault where each role is its own machine."""
    if request.param == "folder":
        yield tmp_path / "vault", None
        return
    server = S3Server(tmp_path / "moto").start()
    for key, value in server.machine(tmp_path / "checker", "checker").items():
        monkeypatch.setenv(key, value)

    def machines(name: str) -> dict:
        return server.machine(tmp_path / name, name, POIMEN_SYNC_INTERVAL_S="1")

    try:
        yield f"s3://{BUCKET}/conc", machines
    finally:
        server.stop()


def test_four_writers_and_a_reader_lose_nothing_and_duplicate_nothing(target, tmp_path):
    vault, machines = target
    outcome = run(vault, tmp_path / "work", WRITERS, PER_WRITER, machines)
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
