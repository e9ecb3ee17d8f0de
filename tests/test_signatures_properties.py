"""Property tests: normalisation is idempotent; what varies between runs (timestamps,
paths, line numbers, temp names) never moves a sig_sha; what identifies a failure
(error code, message) always does. Inputs are the development set's real pastes, varied."""

from __future__ import annotations

import json
import re
from datetime import datetime
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from poimen.signatures import extract
from poimen.signatures.normalise import normalise

CASES = [json.loads(line) for line in
         (Path(__file__).parent / "fixtures/signatures/cases.jsonl").read_text().splitlines()]
TEXTS = [c[k] for c in CASES for k in ("evidence", "recurrence")]
SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])

words = st.text(alphabet="abcdefghijklmnopqrstuvwxyz", min_size=3, max_size=12)
names = st.text(alphabet="abcdefghijklmnopqrstuvwxyz_", min_size=2, max_size=10)


def shas(text: str) -> list[str]:
    return [s.sig_sha for s in extract(text)]


@SETTINGS
@given(st.text(max_size=300))
def test_normalise_is_idempotent_on_any_text(text):
    once = normalise(text)
    assert normalise(once) == once


TOKENS = list("abc019:/.\\-_ @<>'\"()[]xX\tEf") + [
    "0x", "://", "node_modules/", "site-packages/", "/home/u/", "2024-01-01T10:00:00Z", "1.2.3",
    "127.0.0.1", ":8080", "line 3", "http", ".py", "C:\\", "deadbeef12", "tmp", "pid ", "12345",
    " Did you mean: 'x'?", "5s", "[12]", "goroutine 3", "10:00:00", "v1.2.3", "@1.2.3",
    "a1b2c3d4e5f6a7b8c9", "12 Jan 2020", "addr=0x1"]


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(TOKENS), max_size=25).map("".join))
def test_normalise_is_idempotent_on_token_soup(text):
    once = normalise(text)
    assert normalise(once) == once


@SETTINGS
@given(st.sampled_from(TEXTS))
def test_normalise_is_idempotent_on_real_lines(text):
    for line in text.splitlines():
        once = normalise(line)
        assert normalise(once) == once


@SETTINGS
@given(st.sampled_from(TEXTS), st.datetimes(datetime(2000, 1, 1), datetime(2099, 12, 31)),
       st.integers(0, 9_999_999))
def test_actions_timestamps_never_change_signatures(text, when, frac):
    stamp = when.strftime("%Y-%m-%dT%H:%M:%S") + f".{frac:07d}Z "
    stamped = "\n".join(stamp + line for line in text.splitlines())
    assert shas(stamped) == shas(text)


@SETTINGS
@given(st.sampled_from([t for t in TEXTS if re.search(r"/(?:home|Users)/\w+/", t)]), names, names)
def test_home_and_project_directories_never_change_signatures(text, user, project):
    moved = re.sub(r"/(home|Users)/[\w.-]+/(?:[\w.-]+/)?", rf"/\1/{user}/{project}/", text)
    assert shas(moved) == shas(text)


@SETTINGS
@given(st.sampled_from([t for t in TEXTS if re.search(r"\.\w+:\d+|line \d+", t)]),
       st.integers(1, 99_999))
def test_line_numbers_never_change_signatures(text, offset):
    shifted = re.sub(r"(\.(?:py|js|go|rs|java)):(\d+)",
                     lambda m: f"{m.group(1)}:{int(m.group(2)) + offset}", text)
    shifted = re.sub(r"line (\d+)", lambda m: f"line {int(m.group(1)) + offset}", shifted)
    assert shas(shifted) == shas(text)


ALL_TEXTS = TEXTS + [json.loads(line)["evidence"] for line in
                     (Path(__file__).parent / "fixtures/signatures/distractors.jsonl")
                     .read_text().splitlines()]


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(ALL_TEXTS), st.integers(0, 10_000), st.integers(1, 40), st.randoms(),
       st.sampled_from([None, "npm", "python", "no-such-tool"]), st.integers(0, 5))
def test_extract_never_raises_on_cut_or_shuffled_real_output(text, cut, span, rng, tool, limit):
    """Pastes arrive truncated and out of order: every piece still extracts cleanly."""
    lines = text.splitlines()
    start = cut % (len(lines) + 1)
    pieces = [text[cut % (len(text) + 1):], text[:cut % (len(text) + 1)],
              "\n".join(lines[start:start + span]), "\n".join(rng.sample(lines, len(lines)))]
    for piece in pieces:
        for sig in extract(piece, tool=tool, limit=limit):
            assert sig.kind and sig.message and len(sig.sig_sha) == 64


TRACEBACK = ('Traceback (most recent call last):\n'
             '  File "/tmp/{tmp}/job.py", line {line}, in <module>\n'
             '    load("/tmp/{tmp}/data.csv")\n'
             '  File "/home/ci/venv/lib/python3.12/site-packages/loader/io.py", line 88, in load\n'
             '    raise {kind}(f"cannot parse {{path}}")\n'
             '{kind}: cannot parse /tmp/{tmp}/data.csv: {word}\n')


@SETTINGS
@given(st.text(alphabet="abcdefghijklmnopqrstuvwxyz0123456789_", min_size=6, max_size=12),
       st.text(alphabet="abcdefghijklmnopqrstuvwxyz0123456789_", min_size=6, max_size=12),
       st.integers(1, 5000), words)
def test_temp_names_never_change_signatures(tmp_a, tmp_b, line, word):
    a = TRACEBACK.format(tmp="tmp" + tmp_a, line=line, kind="ValueError", word=word)
    b = TRACEBACK.format(tmp="tmp" + tmp_b, line=line + 1, kind="ValueError", word=word)
    assert shas(a) == shas(b) and len(shas(a)) == 1


@SETTINGS
@given(words, words)
def test_changing_the_message_changes_the_signature(word_a, word_b):
    a = TRACEBACK.format(tmp="tmpabcdef", line=3, kind="ValueError", word=word_a)
    b = TRACEBACK.format(tmp="tmpabcdef", line=3, kind="ValueError", word=word_b)
    assert (shas(a) == shas(b)) == (word_a == word_b)


@SETTINGS
@given(st.sampled_from(["ValueError", "KeyError", "TypeError", "OSError", "RuntimeError"]),
       st.sampled_from(["ValueError", "KeyError", "TypeError", "OSError", "RuntimeError"]))
def test_changing_the_exception_kind_changes_the_signature(kind_a, kind_b):
    a = TRACEBACK.format(tmp="tmpabcdef", line=3, kind=kind_a, word="x")
    b = TRACEBACK.format(tmp="tmpabcdef", line=3, kind=kind_b, word="x")
    assert (shas(a) == shas(b)) == (kind_a == kind_b)


@SETTINGS
@given(st.integers(1, 9999), st.integers(1, 9999), words)
def test_changing_the_error_code_changes_the_signature(code_a, code_b, word):
    def rustc(code: int) -> str:
        return f"error[E{code:04d}]: mismatched {word}\n --> src/main.rs:4:9\n  |\n"
    assert (shas(rustc(code_a)) == shas(rustc(code_b))) == (code_a == code_b)


@SETTINGS
@given(st.sampled_from(["ENOENT", "EACCES", "E404", "ETARGET", "EINTEGRITY", "ECONNRESET"]),
       st.sampled_from(["ENOENT", "EACCES", "E404", "ETARGET", "EINTEGRITY", "ECONNRESET"]))
def test_changing_the_npm_code_changes_the_signature(code_a, code_b):
    def npm(code: str) -> str:
        return f"npm ERR! code {code}\nnpm ERR! request to the registry failed\n"
    assert (shas(npm(code_a)) == shas(npm(code_b))) == (code_a == code_b)
