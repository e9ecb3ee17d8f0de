"""Redaction on adversarial input: time at 0.5 MB and 4 MB per shape, one run.

Each shape repeats one rule's anchor (or a near miss) so that a rule that backtracks
or restarts at every anchor shows as a ratio well above 8 for 8x the input; linear
time shows as ratios near 8 or below. Usage: `.venv/bin/python bench/bench_redact.py
[--small N] [--big N]`; prints a table on stderr and the figures as JSON on stdout.
"""

from __future__ import annotations

import argparse
import json
import random
import string
import sys
import time

from poimen.redact import redact

_RANDOM = "".join(random.Random(3).choices(
    string.ascii_letters + string.digits + "+/=_-.:@ ", k=1_000_000))
UNITS = {
    "random": _RANDOM, "eyJ": "eyJ", "eyJ.": "eyJabcde.", "password=": "password=",
    "token: ": "token: ", "://a:": "://a:b", "curl -u": "curl -u a:b ", "mysql -p": "mysql -p",
    "BEGIN": "-----BEGIN RSA PRIVATE KEY-----",
    "BEGIN-END": "-----BEGIN PRIVATE KEY-----a-----END PRIVATE KEY-----", "spaces": " ",
    "authorization": "Authorization: ", "bearer": "bearer ", "cookie": "cookie: a=",
    "xox": "xoxb-", "sk-": "sk-", "ghp_": "ghp_", "AKIA": "AKIA", "-u": " -u",
    "heroku": "heroku_", "secretaccesskey": "secret_access_key=", "_auth": "_auth",
    "newlines": "password=x\n", "sig=": "?sig=", "quote": 'password="',
    "_key=hex": "a_key=0123456789abcdef", "key-": "key-", "vault login": "vault login ",
    "sshpass": "sshpass -x ", "auth=(": "auth=('a', '", '"value"': '"value": "',
    "AC": "AC0123456789abcdef", "-us": "0123456789abcdef-us", "pat": "pat",
}


PREFIX = {"-u": "curl "}   # one anchor, then a flood of its option


def shape(name: str, size: int) -> str:
    text = PREFIX.get(name, "") + UNITS[name] * (size // len(UNITS[name]) + 1)
    return text[:size]


def seconds(text: str) -> float:
    started = time.process_time()
    redact(text)
    return time.process_time() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--small", type=int, default=500_000)
    parser.add_argument("--big", type=int, default=4_000_000)
    args = parser.parse_args()
    rows = {}
    for name in UNITS:
        small, big = seconds(shape(name, args.small)), seconds(shape(name, args.big))
        rows[name] = {"small_s": round(small, 3), "big_s": round(big, 3),
                      "ratio": round(big / max(small, 1e-9), 1),
                      "us_per_char": round(big / args.big * 1e6, 3)}
        print(f"{name:16s} {small:6.3f}s {big:6.3f}s ratio {rows[name]['ratio']:5.1f} "
              f"(x{args.big // args.small} input)", file=sys.stderr, flush=True)
    print(json.dumps({"sizes": [args.small, args.big], "cpu_seconds": rows}))


if __name__ == "__main__":
    main()
