"""Feed one hostile input to `Engine.ingest` and signature extraction, in a fresh process.

    python hostile_run.py VAULT KIND SIZE      (KIND from INPUTS)

Prints one JSON line: the outcome (evidence sha, signature count, redactions, or the
error the caller would see), seconds taken and peak resident memory.
"""
from __future__ import annotations

import json
import random
import resource
import sys
import time
from pathlib import Path

PLANTED_TOKEN = "ghp_" + "Zq8rT2vW9xY4bN6mK3jL1pQ7sD5fG0hJaB12"


def _single_line(size: int) -> bytes:
    rng = random.Random(1)
    words = [b"error", b"at", b"Object.<anonymous>", b"(/app/index.js:1:2)", b"TypeError:",
             b"undefined", b"is", b"not", b"a", b"function", b"0x7f3a", b"=", b"{", b"}"]
    out = bytearray(b"TypeError: x is not a function ")
    out += PLANTED_TOKEN.encode() + b" "
    while len(out) < size:
        out += rng.choice(words) + b" "
    return bytes(out[:size])


def _binary(size: int) -> bytes:
    return random.Random(2).randbytes(size)


def _invalid_utf8(size: int) -> bytes:
    unit = b"ModuleNotFoundError: No module named '\xff\xfe\xc3(' \x80\xbf\xed\xa0\x80\n"
    return (unit * (size // len(unit) + 1))[:size]


def _nul(size: int) -> bytes:
    unit = b"panic: runtime error\x00\x00 index out of range [5] with length 3\x00\n"
    return (unit * (size // len(unit) + 1))[:size]


def _many_lines(count: int) -> bytes:
    return b"".join(b"line %d: warning: unused variable 'x%d'\n" % (i, i % 97)
                    for i in range(count)) + b"Error: build failed with 1 error\n"


def _ansi(size: int) -> bytes:
    unit = (b"\x1b[31m\x1b[1mERROR\x1b[0m \x1b[2K\x1b[1G\x1b[38;5;196mfailed\x1b[0m"
            b"\x1b]8;;http://x\x07link\x1b]8;;\x07\r")
    return (unit * (size // len(unit) + 1))[:size] + b"\nError: exit status 1\n"


INPUTS = {"single-line": _single_line, "binary": _binary, "invalid-utf8": _invalid_utf8,
          "nul": _nul, "lines": _many_lines, "ansi": _ansi}


def main() -> None:
    vault, kind, size = Path(sys.argv[1]), sys.argv[2], int(sys.argv[3])
    from poimen.engine import Engine, InputError

    data = INPUTS[kind](size)
    engine = Engine(vault, project="hostile")
    base_rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    started = time.monotonic()
    outcome: dict = {"kind": kind, "bytes": len(data)}
    try:
        result = engine.ingest(data, source="ci")
        outcome.update(evidence_sha=result.evidence_sha, signatures=len(result.signatures),
                       redactions=[list(r) for r in result.redactions])
        outcome["extracted"] = len(engine.signatures(data))
    except InputError as exc:
        outcome["error"] = str(exc)
    outcome["seconds"] = round(time.monotonic() - started, 2)
    outcome["peak_rss_mb"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)
    outcome["engine_rss_mb"] = round(base_rss / 1024)
    print(json.dumps(outcome))


if __name__ == "__main__":
    main()
