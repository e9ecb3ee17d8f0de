"""Crash trials: real `mem` writers killed with SIGKILL inside their writes, then checks.

A trial runs `mem ingest` (one acknowledgement line per file, printed after its append
returns), `mem import` (acknowledged when it prints its result) or `mem lsp` (each hover
answered as Tier 1 acknowledges the occurrence it recorded) through `faulty_mem.py`,
which kills the process inside its N-th log write (a torn record) or during its N-th
LanceDB write; a third kind of trial kills it from outside at a random moment. Afterwards the vault must open, `mem verify` must pass, every acknowledged
record must be in the log and the tables, `mem rebuild --from-log` must reproduce the
live tables exactly, and no planted secret may be anywhere in the vault. The vault may be
a folder or a team vault (`s3://…`, checked in this machine's local copy, and `mem verify`
also checks the object store holds everything this machine acknowledged).
"""
from __future__ import annotations

import contextlib
import io
import json
import os
import queue
import random
import re
import signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from poimen.commands.memory import IMPORT_BATCH
from poimen.deferred import APPLY_AFTER_S
from secrets_corpus import PLANTED
from stress.lspwire import Wire

FAULTY_MEM = Path(__file__).with_name("faulty_mem.py")
TABLES = ("memories", "vectors", "signatures", "occurrences", "projections")
_ACK = re.compile(r"^(?P<file>\S+): evidence (?P<sha>[0-9a-f]{64})", re.M)
_FAILURES = (
    "Traceback (most recent call last):\n  File \"/app/jobs/{name}.py\", line {n}, in run\n"
    "    client.connect()\nConnectionRefusedError: [Errno 111] Connection refused\n",
    "npm ERR! code ERESOLVE\nnpm ERR! ERESOLVE unable to resolve dependency tree\n"
    "npm ERR! While resolving: {name}@1.{n}.0\nnpm ERR! Found: react@18.2.0\n",
    "error[E0432]: unresolved import `crate::{name}`\n --> src/lib.rs:{n}:5\n"
    "error: could not compile `{name}` due to previous error\n",
    "FAILED tests/test_{name}.py::test_case_{n} - AssertionError: assert 3 == 4\n",
)


# Known failures the LSP trials forward as diagnostics (each has a lesson: Tier 1).
KNOWN = ("ModuleNotFoundError: No module named 'yaml'",
         "npm ERR! code ERESOLVE\nnpm ERR! ERESOLVE unable to resolve dependency tree",
         "error[E0432]: unresolved import `crate::config`",
         "FATAL: password authentication failed for user \"deploy\"")
PROJECT = "crash"


@dataclass
class Trial:
    number: int
    writer: str              # "ingest" | "import" | "lsp"
    fault: str               # "log:N" | "lance:N" | "timer:S"
    killed: bool
    acked: set[str] = field(default_factory=set)
    secrets: list[str] = field(default_factory=list)
    occurrences: set[str] = field(default_factory=set)   # acknowledged occurrence records


def mem(*args: str) -> tuple[int, str]:
    """Run the real CLI in this process; returns (exit code, stdout)."""
    from poimen.cli import main

    out = io.StringIO()
    code = 0
    with contextlib.redirect_stdout(out):
        try:
            main(list(args))
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    return code, out.getvalue()


def _evidence(rng: random.Random, tag: str) -> tuple[str, list[str]]:
    planted = rng.choice(PLANTED)
    name = f"svc{rng.randrange(10**6)}"
    failure = rng.choice(_FAILURES).format(name=name, n=rng.randrange(1, 900))
    text = f"$ make deploy  # run {tag}\n{planted.log}\n{failure}"
    return text, list(planted.secrets)


def _lesson(rng: random.Random, tag: str) -> str:
    words = ("retry", "pin", "cache", "timeout", "mirror", "lockfile", "proxy", "schema",
             "migration", "certificate", "socket", "permission", "encoding", "thread")
    picked = " and ".join(rng.sample(words, 3))
    return f"Run {tag}: the job failed until we fixed the {picked}; see ticket {rng.randrange(10**6)}."


def seed_known(vault: Path | str, work: Path) -> set[str]:
    """A lesson for each KNOWN failure (not killed); returns the acknowledged shas."""
    work.mkdir(parents=True, exist_ok=True)
    path = work / "known.jsonl"
    path.write_text("".join(json.dumps({"text": f"Known failure {i}: fixed by the runbook "
                                        f"step {i}.", "evidence": text}) + "\n"
                            for i, text in enumerate(KNOWN)))
    code, out = mem("--vault", str(vault), "--project", PROJECT, "--json", "import", str(path))
    assert code == 0, out
    return {m["sha"] for m in json.loads(out)["memories"]}


def _occurrence_sha(failure: str, uri: str, line: int) -> str:
    """The occurrence record `mem lsp` logs for `failure` hovered at uri:line."""
    from poimen.canonical import record_sha
    from poimen.engine import extract_signatures
    from poimen.lsp.session import request_id

    (sig,) = extract_signatures(failure)
    return record_sha({"type": "occurrence", "sig_sha": sig.sig_sha, "project": PROJECT,
                       "request_id": request_id(sig.sig_sha, uri, line)})


def _lsp_trial(vault: Path | str, number: int, rng: random.Random, work: Path, fault: str,
               env: dict) -> tuple[bool, set[str]]:
    """Forward each KNOWN failure to `mem lsp` and hover it, seconds apart as a person
    hovers (the server applies the occurrences of lookups closer together in one write,
    and `lance:N` faults count writes); killed as `fault` says."""
    wire = Wire([sys.executable, str(FAULTY_MEM), "--vault", str(vault), "lsp"],
                work / f"t{number}-lsp.err", env=env)
    if fault.startswith("timer"):
        threading.Timer(float(fault.split(":")[1]), wire.proc.kill).start()
    acked: set[str] = set()
    unacked: list[str] = []
    try:
        wire.initialize({"vault": str(vault), "project": PROJECT, "scope": "all-projects",
                         "debounceMs": 0, "answersDir": str(work / "answers")}, work)
        for i, failure in enumerate(rng.sample(KNOWN, len(KNOWN))):
            uri, line = (work / f"t{number}-{i}.txt").as_uri(), rng.randrange(1, 50)
            wire.notify("poimen/diagnostics", {"uri": uri, "diagnostics": [{
                "range": {"start": {"line": line, "character": 0},
                          "end": {"line": line, "character": 30}},
                "message": failure, "severity": 1, "source": "ci"}]})
            card = wire.hover(uri, line, timeout=300)["result"]["contents"]["value"]
            if card.startswith("Tier 1") and "occurrence: not recorded" not in card:
                acked.add(_occurrence_sha(failure, uri, line))
            else:
                unacked.append(card)
            time.sleep(APPLY_AFTER_S + 0.5)
    except (OSError, ValueError, queue.Empty):   # the server died under us: the trial's point
        pass
    if wire.proc.poll() is None:
        wire.close()
    code = wire.proc.wait(timeout=120)
    if code not in (0, -signal.SIGKILL):
        raise AssertionError(f"trial {number}: mem lsp failed ({code}): "
                             f"{(work / f't{number}-lsp.err').read_text()[-2000:]}")
    assert not unacked, f"trial {number}: a known failure was not answered as recorded " \
        f"Tier 1: {unacked[0][:600]}"
    return code == -signal.SIGKILL, acked


def run_trial(vault: Path | str, number: int, rng: random.Random, work: Path) -> Trial:
    """One writer, killed (or not, if it finishes first) as the trial's fault says."""
    work.mkdir(parents=True, exist_ok=True)
    writer = ("ingest", "import", "lsp")[number // 3 % 3]
    secrets: list[str] = []
    tag = f"{number}.{rng.randrange(10**9)}"
    if writer == "lsp":
        args, writes = [], len(KNOWN)
    elif writer == "ingest":
        files = []
        for i in range(rng.randint(3, 6)):
            text, planted = _evidence(rng, f"{tag}.{i}")
            secrets += planted
            path = work / f"t{number}-{i}.log"
            path.write_text(text)
            files.append(str(path))
        # one log append per IMPORT_BATCH files; N past the last lets some trials finish
        args, writes = ["ingest", "--source", "ci", *files], -(-len(files) // IMPORT_BATCH) + 1
    else:
        lines = []
        for i in range(rng.randint(4, 12)):
            text, planted = _evidence(rng, f"{tag}.{i}")
            secrets += planted
            lines.append(json.dumps({"text": _lesson(rng, f"{tag}.{i}"), "evidence": text}))
        path = work / f"t{number}.jsonl"
        path.write_text("\n".join(lines) + "\n")
        # per batch of lines: one append of evidence, one of memories with projections
        args, writes = ["--json", "import", str(path)], 2 * -(-len(lines) // IMPORT_BATCH) + 1
    kind = ("log", "lance", "timer")[number % 3]
    env = dict(os.environ, PYTHONUNBUFFERED="1")
    if kind == "log":
        fault = f"log:{rng.randint(1, writes)}"
    elif kind == "lance":
        fault = f"lance:{rng.randint(1, 2 * writes)}"
    else:
        fault = f"timer:{rng.uniform(0.5, 9.0):.2f}"
    if kind != "timer":
        env["POIMEN_CRASH"] = f"{fault}:{rng.randrange(10**6)}"
    if writer == "lsp":
        killed, occurrences = _lsp_trial(vault, number, rng, work, fault, env)
        return Trial(number, writer, fault, killed, occurrences=occurrences)
    proc = subprocess.Popen([sys.executable, str(FAULTY_MEM), "--vault", str(vault), *args],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    if kind == "timer":
        try:
            proc.wait(timeout=float(fault.split(":")[1]))
        except subprocess.TimeoutExpired:
            proc.send_signal(signal.SIGKILL)
    out, err = proc.communicate(timeout=600)
    killed = proc.returncode == -signal.SIGKILL
    if not killed and proc.returncode != 0:
        raise AssertionError(f"trial {number}: writer failed ({proc.returncode}): "
                             f"{err.decode(errors='replace')[-2000:]}")
    text = out.decode(errors="replace")
    acked = {m["sha"] for m in _ACK.finditer(text)}
    if writer == "import" and not killed:
        acked |= {m["sha"] for m in json.loads(text)["memories"] if m["sha"]}
    return Trial(number, writer, fault, killed, acked, secrets)


def on_disk(vault: Path | str) -> Path:
    """The folder holding the log and the tables: the vault, or a team vault's local copy."""
    if str(vault).startswith("s3://"):
        from poimen.team.objects import ObjectStore
        from poimen.team.vault import local_copy

        return local_copy(ObjectStore(str(vault)))
    return Path(vault)


def snapshot(vault: Path | str) -> dict[str, list[dict]]:
    from poimen.store import Store

    store = Store(on_disk(vault) / "lance")
    return {name: store.dump(name) for name in TABLES}


def _first_difference(live: dict, rebuilt: dict) -> str:
    for name in TABLES:
        if live[name] != rebuilt[name]:
            a, b = live[name], rebuilt[name]
            for x, y in zip(a, b):
                if x != y:
                    keys = [k for k in x if x.get(k) != y.get(k)]
                    return f"{name}: {len(a)} live rows vs {len(b)} rebuilt; first differs in {keys}"
            return f"{name}: {len(a)} live rows vs {len(b)} rebuilt"
    return ""


def check_vault(vault: Path | str, acked: set[str], secrets: list[str],
                occurrences: set[str] = frozenset()) -> dict:
    """Every promise a crash must keep; returns figures for the report."""
    from poimen.log import Log

    code, out = mem("--vault", str(vault), "--json", "verify")
    assert code == 0, f"mem verify failed after a crash: {out}"
    entries = Log(on_disk(vault) / "log").entries(verify=True)
    logged = {e.sha for e in entries}
    missing = sorted((acked | occurrences) - logged)
    assert not missing, f"{len(missing)} acknowledged records are not in the log: {missing[:3]}"
    live = snapshot(vault)
    rows = {r["sha"] for r in live["memories"]}
    assert not acked - rows, f"acknowledged records without a memory row: {sorted(acked - rows)[:3]}"
    counted = {r["sha"] for r in live["occurrences"]}
    assert not occurrences - counted, \
        f"acknowledged occurrences without a row: {sorted(occurrences - counted)[:3]}"
    code, out = mem("--vault", str(vault), "--json", "rebuild", "--from-log")
    assert code == 0, f"mem rebuild --from-log failed: {out}"
    assert json.loads(out)["projection_drift"] == []
    rebuilt = snapshot(vault)
    assert live == rebuilt, "rebuild differs from the live tables: " + \
        _first_difference(live, rebuilt)
    leaked = _leaked(vault, secrets)
    assert not leaked, f"planted secrets found in the vault: {leaked[:3]}"
    return {"records": len(entries), "acked": len(acked) + len(occurrences),
            "found": len(acked & logged & rows) + len(occurrences & logged & counted),
            "occurrences": len(occurrences),
            "repairs": sum(1 for e in entries if e.rec.get("type") == "log_repair"),
            "secrets": len(set(secrets)), "leaked": len(leaked)}


def _leaked(vault: Path | str, secrets: list[str]) -> list[str]:
    vault = on_disk(vault)
    needles = {s: s.encode() for s in set(secrets)}
    found = []
    for path in vault.rglob("*"):
        if path.is_file():
            data = path.read_bytes()
            found += [f"{s} in {path.relative_to(vault)}" for s, b in needles.items() if b in data]
    return found


def run_trials(vault: Path | str, count: int, seed: int, work: Path) -> dict:
    """`count` trials on one vault, checking it after each; returns the totals."""
    rng = random.Random(seed)
    totals = {"trials": 0, "killed": 0, "acked": 0, "found": 0, "secrets": 0, "leaked": 0,
              "faults": {}, "writers": {}, "records": 0, "repairs": 0, "occurrences": 0,
              "seconds": 0.0}
    acked: set[str] = seed_known(vault, work)
    occurrences: set[str] = set()
    secrets: list[str] = []
    started = time.monotonic()
    for number in range(count):
        trial = run_trial(vault, number, rng, work)
        acked |= trial.acked
        occurrences |= trial.occurrences
        secrets += trial.secrets
        figures = check_vault(vault, acked, secrets, occurrences)
        totals["trials"] += 1
        totals["killed"] += trial.killed
        for name, value in (("faults", trial.fault.split(":")[0]), ("writers", trial.writer)):
            totals[name][value] = totals[name].get(value, 0) + 1
        totals.update({k: figures[k] for k in ("acked", "found", "records", "repairs",
                                               "secrets", "leaked", "occurrences")})
    totals["seconds"] = round(time.monotonic() - started, 1)
    return totals
