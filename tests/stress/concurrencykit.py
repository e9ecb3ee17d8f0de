"""Several `mem import` writers on one vault at once, with a reader doing lookups, in
process and through a `mem serve` started on the same vault before the writers.

Each writer imports its own lessons plus the same shared ones (every writer proposes
them, so the vault must hold each exactly once). Afterwards: every writer exited 0
with no error on stderr, every acknowledged memory has a row, no lesson is stored
twice, the reader saw no error and no half-written memory, `mem verify` passes and
`mem rebuild --from-log` reproduces the tables. On a team vault (`s3://…`) give
`machines`: each writer, the server and the reader then run as a machine of their own
(own writer id and local state); the checks run on this process's machine after a sync.
"""
from __future__ import annotations

import json
import random
import socket
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

from stress.crashkit import mem, snapshot

READER = Path(__file__).with_name("reader.py")
SHARED = 10
_TOOLS = ("npm", "pip", "cargo", "pytest", "docker", "kubectl", "terraform", "gradle", "go",
          "webpack", "jest", "helm", "ansible", "maven", "yarn")
_ERRORS = ("ERESOLVE peer conflict", "ModuleNotFoundError", "a linker error",
           "an expired certificate", "OOMKilled", "a timeout waiting for a lock",
           "permission denied on a socket", "a failed schema migration", "port already in use",
           "a checksum mismatch", "a segfault in a native extension", "DNS resolution failure")
_FIXES = ("pinning the transitive dependency", "raising the memory limit",
          "mounting the CA bundle", "clearing the build cache", "rotating the credentials",
          "switching the base image", "adding a retry with backoff", "regenerating the lockfile",
          "setting the locale", "upgrading the toolchain")


def lessons(writer: int, count: int) -> list[dict]:
    rng = random.Random(writer)
    own = []
    for i in range(count - SHARED):
        text = (f"{rng.choice(_TOOLS)}: {rng.choice(_ERRORS)} in job {writer}-{i} "
                f"(build {rng.randrange(10**6)}) was fixed by {rng.choice(_FIXES)}; "
                f"{rng.choice(_FIXES)} did not help.")
        own.append({"id": f"w{writer}-{i}", "text": text})
    shared = [{"id": f"shared-{i}", "text": f"Shared lesson {i}: {_TOOLS[i]} fails with "
               f"{_ERRORS[i]} until {_FIXES[i % len(_FIXES)]}."} for i in range(SHARED)]
    items = own + shared
    rng.shuffle(items)
    return items


def serve(vault: Path | str, work: Path, env: dict | None = None
          ) -> tuple[subprocess.Popen, str]:
    """`mem serve` on a free loopback port, answering once it is up."""
    import httpx

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    proc = subprocess.Popen([str(Path(sys.executable).with_name("mem")), "--vault", str(vault),
                             "--project", "conc", "serve", "--port", str(port)],
                            stdout=subprocess.DEVNULL, stderr=open(work / "serve.log", "wb"),
                            env=env)
    url = f"http://127.0.0.1:{port}"
    for _ in range(1200):
        assert proc.poll() is None, (work / "serve.log").read_text()[-2000:]
        try:
            httpx.get(url + "/health", timeout=1)
            return proc, url
        except httpx.TransportError:
            time.sleep(0.1)
    raise AssertionError("mem serve did not start")


def run(vault: Path | str, work: Path, writers: int = 4, per_writer: int = 250,
        machines=None) -> dict:
    """`machines(name)`, when given, is the environment of the machine called `name`."""
    env = machines or (lambda name: None)
    work.mkdir(parents=True, exist_ok=True)
    assert mem("--vault", str(vault), "--project", "conc", "init")[0] == 0
    stop = work / "stop"
    server, url = serve(vault, work, env("server"))
    reader = subprocess.Popen([sys.executable, str(READER), str(vault), str(stop), url],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env("reader"))
    procs = []
    for w in range(writers):
        path = work / f"writer{w}.jsonl"
        path.write_text("".join(json.dumps(x) + "\n" for x in lessons(w, per_writer)))
        procs.append(subprocess.Popen(
            [str(Path(sys.executable).with_name("mem")), "--vault", str(vault), "--project", "conc",
             "--json", "import", str(path)], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            env=env(f"writer{w}")))
    started = time.monotonic()
    results = [p.communicate(timeout=3600) for p in procs]
    seconds = time.monotonic() - started
    stop.write_text("")
    read_out, read_err = reader.communicate(timeout=600)
    server.terminate()
    server.wait(timeout=60)
    for proc, (out, err) in zip(procs, results):
        text = err.decode(errors="replace")
        assert proc.returncode == 0, f"writer failed ({proc.returncode}): {text[-2000:]}"
        assert "Traceback" not in text and "error" not in text.lower(), text[-2000:]
    assert reader.returncode == 0, read_err.decode(errors="replace")[-2000:]
    report = json.loads(read_out)
    answers = [json.loads(out) for out, _ in results]
    return {"answers": answers, "reader": report, "seconds": round(seconds, 1)}


def check(vault: Path | str, answers: list[dict], per_writer: int) -> dict:
    if str(vault).startswith("s3://"):
        assert mem("--vault", vault, "sync")[0] == 0
    acked = Counter()
    for answer in answers:
        assert sum(answer["counts"].values()) == per_writer
        assert not answer["counts"].get("rejected"), answer["counts"]
        acked.update(m["sha"] for m in answer["memories"] if m["sha"])
    live = snapshot(vault)
    lessons_stored = [r for r in live["memories"] if r["level"] == "L1"]
    texts = Counter(r["text"] for r in lessons_stored)
    twice = [t for t, n in texts.items() if n > 1]
    assert not twice, f"lessons stored more than once: {twice[:3]}"
    rows = {r["sha"] for r in lessons_stored}
    assert set(acked) <= rows, f"acknowledged but missing: {sorted(set(acked) - rows)[:3]}"
    for i in range(SHARED):
        assert sum(t.startswith(f"Shared lesson {i}:") for t in texts) == 1
    text_vectors = Counter(v["memory_sha"] for v in live["vectors"] if v["kind"] == "text")
    assert all(text_vectors[sha] == 1 for sha in rows)
    code, out = mem("--vault", str(vault), "--json", "verify")
    assert code == 0, out
    assert mem("--vault", str(vault), "--json", "rebuild", "--from-log")[0] == 0
    assert snapshot(vault) == live, "rebuild differs from the tables the writers left"
    return {"acked": len(acked), "lessons": len(rows), "found": len(set(acked) & rows)}
