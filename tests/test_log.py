"""The append-only log: durability, idempotence, torn tails, corruption, merging."""

import json
import os
import stat

import pytest

from poimen.canonical import record_sha
from poimen.log import Log, LogCorrupt


def rec(i, **extra):
    return {"type": "evidence", "text": f"error number {i}", **extra}


def test_append_is_content_addressed_and_idempotent(tmp_path):
    log = Log(tmp_path / "log", writer="w1")
    log.open()
    sha, new = log.append(rec(1))
    assert new and sha == record_sha(rec(1))
    assert log.append(rec(1)) == (sha, False)
    assert [e.sha for e in log.entries(verify=True)] == [sha]
    # a fresh process (new Log object) knows the sha from the file
    other = Log(tmp_path / "log", writer="w1")
    other.open()
    assert other.append(rec(1)) == (sha, False)
    assert len(other.entries()) == 1


def test_order_and_times_are_monotonic(tmp_path):
    log = Log(tmp_path / "log", writer="w1")
    log.open()
    shas = [sha for sha, _ in log.append_many(rec(i) for i in range(50))]
    entries = log.entries(verify=True)
    assert [e.sha for e in entries] == shas
    assert all(a.at < b.at for a, b in zip(entries, entries[1:]))


def test_torn_tail_is_cut_kept_and_logged(tmp_path):
    log = Log(tmp_path / "log", writer="w1")
    log.open()
    kept = [sha for sha, _ in log.append_many(rec(i) for i in range(3))]
    segment = tmp_path / "log" / "segments" / "w1.jsonl"
    with open(segment, "ab") as fh:
        fh.write(b'{"at":"2026-01-01T00:00:00.000000Z","rec":{"type":"evid')
    reopened = Log(tmp_path / "log", writer="w1")
    repairs = reopened.open()
    assert len(repairs) == 1 and repairs[0]["action"] == "cut torn tail"
    entries = reopened.entries(verify=True)
    assert [e.sha for e in entries[:3]] == kept
    assert entries[3].rec["type"] == "log_repair"
    torn = list((tmp_path / "log" / "torn").iterdir())
    assert len(torn) == 1 and torn[0].read_bytes().startswith(b'{"at"')


def test_complete_record_missing_only_its_newline_is_kept(tmp_path):
    log = Log(tmp_path / "log", writer="w1")
    log.open()
    log.append(rec(1))
    segment = tmp_path / "log" / "segments" / "w1.jsonl"
    sha = record_sha(rec(2))
    line = json.dumps({"at": "2099-01-01T00:00:00.000000Z", "rec": rec(2), "sha": sha})
    with open(segment, "ab") as fh:
        fh.write(line.encode())
    reopened = Log(tmp_path / "log", writer="w1")
    assert reopened.open()[0]["action"] == "completed newline"
    assert sha in [e.sha for e in reopened.entries(verify=True)]


def test_corruption_in_the_middle_names_the_offset(tmp_path):
    log = Log(tmp_path / "log", writer="w1")
    log.open()
    log.append_many(rec(i) for i in range(3))
    segment = tmp_path / "log" / "segments" / "w1.jsonl"
    lines = segment.read_bytes().split(b"\n")
    offset = len(lines[0]) + 1
    lines[1] = lines[1].replace(b"error number 1", b"error number X")
    segment.write_bytes(b"\n".join(lines))
    with pytest.raises(LogCorrupt) as err:
        Log(tmp_path / "log", writer="w1").entries(verify=True)
    assert err.value.offset == offset and f"byte {offset}" in str(err.value)
    lines[1] = b"not json at all"
    segment.write_bytes(b"\n".join(lines))
    with pytest.raises(LogCorrupt, match=f"byte {offset}"):
        Log(tmp_path / "log", writer="w1").entries()


def test_segments_of_several_writers_merge_by_set_union(tmp_path):
    a = Log(tmp_path / "a", writer="alice")
    b = Log(tmp_path / "b", writer="bob")
    a.open(), b.open()
    a.append_many([rec(1), rec(2)])
    b.append_many([rec(2), rec(3)])
    merged = Log(tmp_path / "m", writer="carol")
    merged.open()
    for src in (a, b):
        for path in src.segment_paths():
            (tmp_path / "m" / "segments" / path.name).write_bytes(path.read_bytes())
    union = {e.sha for e in merged.entries(verify=True)}
    assert union == {record_sha(rec(i)) for i in (1, 2, 3)}
    assert merged.append(rec(3))[1] is False  # known through bob's segment


def test_files_are_private(tmp_path):
    log = Log(tmp_path / "log", writer="w1")
    log.open()
    log.append(rec(1))
    segment = tmp_path / "log" / "segments" / "w1.jsonl"
    assert stat.S_IMODE(os.stat(segment).st_mode) == 0o600
    assert stat.S_IMODE(os.stat(tmp_path / "log").st_mode) == 0o700


def test_text_with_newlines_and_json_cannot_forge_records(tmp_path):
    log = Log(tmp_path / "log", writer="w1")
    log.open()
    forged = '"}\n{"at":"x","rec":{"type":"memory","level":"L1"},"sha":"0"}\n'
    log.append(rec(1, note=forged))
    entries = log.entries(verify=True)
    assert len(entries) == 1 and entries[0].rec["note"] == forged
