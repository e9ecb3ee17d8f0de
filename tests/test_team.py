"""A team vault on S3-compatible storage: a real `moto` server on loopback, real `mem`
processes, each machine with its own writer id and its own local state (docs/TEAM.md).
"""
from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from s3kit import ACCESS_KEY, BUCKET, SECRET_KEY, S3Server

MEM = str(Path(sys.executable).with_name("mem"))
FAULTY_MEM = Path(__file__).parent / "stress" / "faulty_mem.py"
WRITERS = ("alice", "bob", "carol")


@pytest.fixture(scope="module")
def s3(tmp_path_factory):
    server = S3Server(tmp_path_factory.mktemp("moto")).start()
    yield server
    server.stop()


def uri(prefix: str) -> str:
    return f"s3://{BUCKET}/{prefix}"


def mem(env: dict, *args: str, check: bool = True) -> subprocess.CompletedProcess:
    proc = subprocess.run([MEM, *args], env=env, capture_output=True, text=True, timeout=600)
    if check:
        assert proc.returncode == 0, f"mem {' '.join(args)}: {proc.stderr[-2000:]}"
    return proc


def failure(writer: str, i: int) -> str:
    return (f"Traceback (most recent call last):\n  File \"/srv/{writer}/job{i}.py\", line 4, "
            f"in <module>\n    import {writer}_plugin_{i}\nModuleNotFoundError: No module "
            f"named '{writer}_plugin_{i}'\n")


def lessons(writer: str, count: int) -> list[dict]:
    own = [{"id": f"{writer}-{i}", "evidence": failure(writer, i),
            "text": f"{writer}_plugin_{i} is vendored: install it with pip install -e "
                    f"vendor/{writer}_plugin_{i} before running job {i}."} for i in range(count)]
    shared = [{"id": f"shared-{i}", "evidence": failure("shared", i),
               "text": f"The shared plugin {i} ships in the base image; rebuild the image."}
              for i in range(2)]
    return own + shared


def engine_for(env: dict, monkeypatch, vault: str):
    """An engine in this process, seeing the world as the machine `env` describes."""
    from poimen.engine import Engine

    for key in ("AWS_ENDPOINT_URL", "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_REGION",
                "AWS_CONFIG_FILE", "AWS_SHARED_CREDENTIALS_FILE", "POIMEN_S3_TIMEOUT_S",
                "POIMEN_WRITER", "POIMEN_STATE_DIR", "POIMEN_SYNC_INTERVAL_S"):
        monkeypatch.setenv(key, env[key])
    return Engine(vault, project="team")


def local_copy(env: dict) -> Path:
    (copy,) = (Path(env["POIMEN_STATE_DIR"]) / "team").iterdir()
    return copy


def chunk_records(s3: S3Server, prefix: str) -> dict[str, list[str]]:
    """writer -> the shas in its chunks (every version of every chunk)."""
    out: dict[str, list[str]] = {}
    for key, bodies in s3.objects(f"{prefix}/log/").items():
        writer = key.split("/")[-2]
        for body in bodies:
            out.setdefault(writer, []).extend(json.loads(line)["sha"]
                                              for line in body.splitlines())
    return out


def test_three_writers_at_once_and_a_fresh_machine_answers_each_after_one_sync(
        s3, tmp_path, monkeypatch):
    vault = uri("three")
    envs = {w: s3.machine(tmp_path / w, w) for w in WRITERS}
    mem(envs["alice"], "--vault", vault, "--project", "team", "init")
    procs = {}
    for writer, env in envs.items():
        path = tmp_path / f"{writer}.jsonl"
        path.write_text("".join(json.dumps(x) + "\n" for x in lessons(writer, 6)))
        procs[writer] = subprocess.Popen(
            [MEM, "--vault", vault, "--project", "team", "--json", "import", str(path)],
            env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    acked = {}
    for writer, proc in procs.items():
        out, err = proc.communicate(timeout=600)
        assert proc.returncode == 0, err[-2000:]
        acked[writer] = {m["id"]: m["sha"] for m in json.loads(out)["memories"]}
        assert all(acked[writer].values()), acked[writer]

    # each writer kept its own state: its own segment, nobody else's
    for writer, env in envs.items():
        segments = {p.name for p in (local_copy(env) / "log" / "segments").iterdir()}
        assert f"{writer}.jsonl" in segments
        assert not {f"{w}.jsonl" for w in WRITERS if w != writer} & segments

    # no object was ever written twice; each writer's chunks are under its own name
    objects = s3.objects(f"three/log/")
    assert objects and all(len(bodies) == 1 for bodies in objects.values())
    assert {key.split("/")[-2] for key in objects} == set(WRITERS)

    dave = s3.machine(tmp_path / "dave", "dave")
    assert "pulled" in mem(dave, "--vault", vault, "sync").stdout
    assert mem(dave, "--vault", vault, "verify").returncode == 0
    s3.relay.stop()                       # from here on dave answers from its own copy
    try:
        engine = engine_for(dave, monkeypatch, vault)
        for writer in WRITERS:
            for i in range(6):
                body = engine.context({"signature_source": failure(writer, i),
                                       "request_id": f"dave-{writer}-{i}"})
                assert body["tier"] == 1, (writer, i, body["degraded"])
                assert body["lessons"][0]["sha"] == acked[writer][f"{writer}-{i}"]
        shared = [r for r in engine.store.dump("memories") if r["text"].startswith("The shared")]
        assert len(shared) == 2
        assert engine.vault.sync_note() is not None   # the sync at open could not reach it
    finally:
        s3.relay.start()


def test_a_writer_killed_mid_write_loses_nothing_it_acknowledged(s3, tmp_path):
    vault = uri("killed")
    erin = s3.machine(tmp_path / "erin", "erin")
    mem(erin, "--vault", vault, "init")
    rng = random.Random(16)
    acked: set[str] = set()
    faults = ["log:1", "push:1", "push:1", None, "timer", "timer", "lance:2", "push:1"]
    killed = 0
    for number, fault in enumerate(faults):
        files = []
        for i in range(rng.randint(2, 5)):
            path = tmp_path / f"t{number}-{i}.log"
            path.write_text(failure(f"erin{number}", i))
            files.append(str(path))
        env = dict(erin)
        if fault and fault != "timer":
            env["POIMEN_CRASH"] = f"{fault}:{rng.randrange(10**6)}"
        proc = subprocess.Popen([sys.executable, str(FAULTY_MEM), "--vault", vault, "ingest",
                                 *files], env=env, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True)
        if fault == "timer":
            try:
                proc.wait(timeout=rng.uniform(0.5, 3.0))
            except subprocess.TimeoutExpired:
                proc.send_signal(signal.SIGKILL)
        out, err = proc.communicate(timeout=600)
        assert proc.returncode in (0, -signal.SIGKILL), err[-2000:]
        killed += proc.returncode == -signal.SIGKILL
        acked |= {line.split(": evidence ")[1][:64] for line in out.splitlines()
                  if ": evidence " in line}
    assert killed >= 4 and acked

    # erin's machine comes back: the next open pushes what it acknowledged
    mem(erin, "--vault", vault, "sync")
    assert mem(erin, "--vault", vault, "verify").returncode == 0
    pushed = chunk_records(s3, "killed")["erin"]
    assert len(pushed) == len(set(pushed)), "a record went up twice"
    fred = s3.machine(tmp_path / "fred", "fred")
    mem(fred, "--vault", vault, "sync")
    found = json.loads(mem(fred, "--vault", vault, "--json", "stats").stdout)
    assert found["memories"]["L0"] >= len(acked)
    from poimen.log import Log

    logged = {e.sha for e in Log(local_copy(fred) / "log").entries(verify=True)}
    assert not acked - logged, f"acknowledged but not found: {sorted(acked - logged)[:3]}"


def test_the_store_stopped_mid_run_writes_are_kept_and_pushed_when_it_returns(
        s3, tmp_path, monkeypatch):
    vault = uri("stopped")
    gina = s3.machine(tmp_path / "gina", "gina")
    mem(gina, "--vault", vault, "--project", "team", "init")
    frank_env = s3.machine(tmp_path / "frank", "frank")
    frank = engine_for(frank_env, monkeypatch, vault)   # a long-lived engine, like `mem lsp`
    first = frank.ingest(failure("frank", 1), source="ci")
    frank.remember("L1", "frank_plugin_1 comes from the internal index; add --extra-index-url.",
                   parents=[first.evidence_sha])
    s3.relay.stop()
    try:
        second = frank.ingest(failure("frank", 2), source="ci")        # acknowledged locally
        lesson = frank.remember("L1", "frank_plugin_2 was renamed; import frank_plugin_two.",
                                parents=[second.evidence_sha])
        assert lesson.verdict == "accepted"
        frank.vault.sync()
        body = frank.context({"signature_source": failure("frank", 2)})
        assert body["tier"] == 1 and body["lessons"][0]["sha"] == lesson.sha
        assert any(note.startswith("team:") for note in body["degraded"])
        (tmp_path / "g.log").write_text(failure("gina", 1))
        out = mem(gina, "--vault", vault, "--json", "ingest", str(tmp_path / "g.log")).stdout
        gina_sha = json.loads(out)["results"][0]["evidence_sha"]
        answer = json.loads(mem(gina, "--vault", vault, "context", "--signature-source",
                                str(tmp_path / "g.log")).stdout)
        assert any(note.startswith("team:") for note in answer["degraded"])
        stats = json.loads(mem(gina, "--vault", vault, "--json", "stats").stdout)["team"]
        assert stats["unpushed_bytes"] > 0 and not stats["reachable"]
        assert mem(gina, "--vault", vault, "sync", check=False).returncode == 1
    finally:
        s3.relay.start()
    assert frank.vault.sync()["ok"]
    mem(gina, "--vault", vault, "sync")
    assert "team:" not in " ".join(frank.context({"task": "frank_plugin_2"})["degraded"])
    hank = s3.machine(tmp_path / "hank", "hank")
    mem(hank, "--vault", vault, "sync")
    from poimen.log import Log

    logged = {e.sha for e in Log(local_copy(hank) / "log").entries(verify=True)}
    assert {second.evidence_sha, lesson.sha, gina_sha} <= logged


def test_occurrences_add_up_across_machines_and_a_retried_request_counts_once(
        s3, tmp_path, monkeypatch):
    vault = uri("seen")
    ivy = engine_for(s3.machine(tmp_path / "ivy", "ivy"), monkeypatch, vault)
    evidence = ivy.ingest(failure("seen", 1), source="ci")
    ivy.remember("L1", "seen_plugin_1 needs the private index.", parents=[evidence.evidence_sha])
    sig = evidence.signatures[0].sig_sha
    ivy.record_occurrence(sig, request_id="ivy-1")
    ivy.record_occurrence(sig, request_id="retried")
    ivy.vault.sync()
    jack = engine_for(s3.machine(tmp_path / "jack", "jack"), monkeypatch, vault)
    jack.record_occurrence(sig, request_id="jack-1")
    jack.record_occurrence(sig, request_id="retried")     # the same request, retried here
    jack.vault.sync()
    ivy.vault.sync()
    kim = engine_for(s3.machine(tmp_path / "kim", "kim"), monkeypatch, vault)
    expected = 1 + 3   # the evidence, then ivy-1, jack-1 and "retried" once
    for engine in (ivy, jack, kim):
        assert engine.store.seen(sig)[0] == expected


def test_no_credential_reaches_the_vault_a_log_or_an_error(s3, tmp_path):
    vault = uri("secret")
    lee = s3.machine(tmp_path / "lee", "lee")
    outputs = [mem(lee, "--vault", vault, "init")]
    (tmp_path / "f.log").write_text(failure("lee", 1))
    outputs.append(mem(lee, "--vault", vault, "ingest", str(tmp_path / "f.log")))
    outputs.append(mem(lee, "--vault", "s3://no-such-bucket/x", "init", check=False))
    outputs.append(mem(lee, "--vault", "s3://no-such-bucket/x", "sync", check=False))
    outputs.append(mem(lee, "--vault", f"s3://{ACCESS_KEY}:{SECRET_KEY}@{BUCKET}/x", "init",
                       check=False))    # a key typed into the URI is not echoed back
    wrong = dict(lee, AWS_SECRET_ACCESS_KEY=SECRET_KEY[::-1])
    outputs.append(mem(wrong, "--vault", vault, "verify", check=False))
    s3.relay.stop()
    try:
        outputs.append(mem(lee, "--vault", vault, "ingest", str(tmp_path / "f.log")))
        outputs.append(mem(lee, "--vault", vault, "sync", check=False))
        outputs.append(mem(lee, "--vault", vault, "--json", "stats"))
        outputs.append(mem(lee, "--vault", vault, "verify", check=False))
    finally:
        s3.relay.start()
    assert any(p.returncode != 0 and "failed (" in p.stdout + p.stderr for p in outputs)
    texts = [p.stdout + p.stderr for p in outputs]
    texts += [path.read_bytes().decode("utf-8", "replace")
              for path in (tmp_path / "lee").rglob("*") if path.is_file()]
    texts += [b.decode("utf-8", "replace") for bodies in s3.objects("secret/").values()
              for b in bodies]
    for secret in (ACCESS_KEY, SECRET_KEY, SECRET_KEY[::-1]):
        assert not [t for t in texts if secret in t]


def test_objects_are_never_overwritten_by_a_second_machine_with_the_same_writer_id(s3, tmp_path):
    """Two machines both called `build` (a copied image): create-only chunks keep both."""
    vault = uri("twins")
    one, two = (s3.machine(tmp_path / n, "build") for n in ("one", "two"))
    shas = []
    for n, env in enumerate((one, two, one, two)):
        (tmp_path / f"{n}.log").write_text(failure(f"twin{n}", n))
        out = mem(env, "--vault", vault, "--json", "ingest", str(tmp_path / f"{n}.log")).stdout
        shas.append(json.loads(out)["results"][0]["evidence_sha"])
    objects = s3.objects("twins/log/")
    assert all(len(bodies) == 1 for bodies in objects.values())
    assert set(shas) <= set(chunk_records(s3, "twins")["build"])
    mem(one, "--vault", vault, "sync")
    assert mem(one, "--vault", vault, "verify").returncode == 0


def test_a_folder_vault_moves_to_the_team_with_mem_push(s3, tmp_path):
    folder = tmp_path / "mine"
    env = s3.machine(tmp_path / "mo", "mo")
    (tmp_path / "f.log").write_text(failure("mo", 1))
    out = mem(env, "--vault", str(folder), "--json", "ingest", str(tmp_path / "f.log")).stdout
    sha = json.loads(out)["results"][0]["evidence_sha"]
    vault = uri("moved")
    mem(env, "--vault", vault, "init")
    assert json.loads(mem(env, "--vault", vault, "--json", "push", str(folder)).stdout)["added"] >= 1
    assert sha in chunk_records(s3, "moved")["mo.import"]
    ned = s3.machine(tmp_path / "ned", "ned")
    mem(ned, "--vault", vault, "sync")
    stats = json.loads(mem(dict(ned, POIMEN_VAULT=vault), "--json", "stats").stdout)
    assert stats["memories"]["L0"] == 1 and stats["vault"] == vault
    assert mem(ned, "--vault", vault, "rebuild", "--from-log").returncode == 0
    assert mem(ned, "--vault", vault, "verify").returncode == 0


def test_opening_a_team_vault_nobody_created_says_so(s3, tmp_path):
    env = s3.machine(tmp_path / "oz", "oz")
    proc = mem(env, "--vault", uri("nothing-here"), "stats", check=False)
    assert proc.returncode == 2 and "mem init" in proc.stderr


def test_a_sha_another_machine_served_is_read_after_one_catch_up(s3, tmp_path, monkeypatch):
    """`mem serve` on one machine answers with a teammate's lesson; this machine has not
    pulled it yet: reading that sha (show, MCP get, provenance) syncs once, then answers."""
    vault = uri("served")
    pat = engine_for(s3.machine(tmp_path / "pat", "pat"), monkeypatch, vault)
    quinn = engine_for(s3.machine(tmp_path / "quinn", "quinn"), monkeypatch, vault)
    rae = engine_for(s3.machine(tmp_path / "rae", "rae"), monkeypatch, vault)
    evidence = pat.ingest(failure("served", 1), source="ci")
    lesson = pat.remember("L1", "served_plugin_1 moved to the internal index; add it.",
                          parents=[evidence.evidence_sha])
    assert pat.vault.sync()["ok"]
    assert not quinn.vault.log.contains(lesson.sha)     # nothing pulled here yet
    shown = quinn.memory(lesson.sha)
    assert shown is not None and shown["parents"] == [evidence.evidence_sha]
    assert shown["text"] == pat.memory(lesson.sha)["text"]
    assert quinn.memory(evidence.evidence_sha)["level"] == "L0"
    assert quinn.symptoms(lesson.sha) == pat.symptoms(lesson.sha)

    nobody = "0" * 64                                   # a sha no machine wrote
    cited = rae.provenance([evidence.evidence_sha, nobody])   # a card's citations, one batch
    assert list(cited) == [evidence.evidence_sha]
    assert cited[evidence.evidence_sha]["level"] == "L0"
    assert cited[evidence.evidence_sha]["source"] == "ci"
    assert quinn.memory(nobody) is None
    s3.relay.stop()
    try:   # still missing: not fetched again before the next sync (no network, no wait)
        assert quinn.memory(nobody) is None and quinn.symptoms(nobody) is None
        assert quinn.vault.sync_note() is None
    finally:
        s3.relay.start()


def test_reading_a_sha_waits_for_the_background_apply_under_way(s3, tmp_path, monkeypatch):
    """The background sync has pulled a lesson and is applying it (a lookup answers from
    the tables as they are): a read of that very sha waits for the apply, not `None`."""
    import threading

    vault = uri("applying")
    rae = engine_for(s3.machine(tmp_path / "rae", "rae"), monkeypatch, vault)
    sam = engine_for(s3.machine(tmp_path / "sam", "sam", POIMEN_SYNC_INTERVAL_S="0.2"),
                     monkeypatch, vault)
    applying, release = threading.Event(), threading.Event()
    embed = sam.vault._embed

    def held(texts):                 # the background apply stops here until released
        applying.set()
        assert release.wait(120)
        return embed(texts)

    monkeypatch.setattr(sam.vault, "_embed", held)
    lesson = rae.remember("L1", "applying_plugin_2 needs libssl3 in the runtime image.",
                          without_evidence=True)
    assert rae.vault.sync()["ok"]
    assert applying.wait(120), "sam's background sync never applied rae's lesson"
    shown: list = []
    reader = threading.Thread(target=lambda: shown.append(sam.memory(lesson.sha)))
    reader.start()
    reader.join(1.0)
    assert reader.is_alive(), f"answered while the apply was under way: {shown}"
    release.set()
    reader.join(120)
    assert shown and shown[0] is not None and shown[0]["text"] == rae.memory(lesson.sha)["text"]
    sam.vault.close()


class HeldStore:
    """A loopback endpoint that takes connections and answers nothing until released
    (then cuts them): an object store that hangs."""

    def __init__(self):
        import socket
        import threading

        self.sock = socket.create_server(("127.0.0.1", 0))
        self.endpoint = f"http://127.0.0.1:{self.sock.getsockname()[1]}"
        self.reached = threading.Event()
        self.conns: list = []
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            self.conns.append(conn)
            self.reached.set()

    def release(self) -> None:
        import socket

        self.sock.shutdown(socket.SHUT_RDWR)
        self.sock.close()
        for conn in self.conns:
            conn.close()


def test_the_lsp_warm_up_creates_no_team_vault_and_initialize_never_waits_on_the_store(
        s3, tmp_path):
    from stress.lspwire import Wire

    def lsp(env: dict, vault: str, name: str) -> Wire:
        wire = Wire([MEM, "lsp", "--log-level", "info"], tmp_path / f"{name}.err", env)
        answer = wire.initialize({"vault": vault, "project": "team", "debounceMs": 0,
                                  "answersDir": str(tmp_path / name)}, tmp_path)
        assert "hoverProvider" in answer["result"]["capabilities"]
        return wire

    # a vault nobody created: the warm-up opens it without creating it
    wire = lsp(s3.machine(tmp_path / "uma", "uma"), uri("lsp-none"), "none")
    deadline = time.monotonic() + 300
    while "warm-up skipped" not in (tmp_path / "none.err").read_text():
        assert time.monotonic() < deadline and wire.proc.poll() is None
        time.sleep(0.1)
    assert "mem init" in (tmp_path / "none.err").read_text()
    assert wire.close() == 0
    assert s3.objects("lsp-none/") == {}

    # a store that hangs: initialize is answered while the warm-up waits on the network
    vault = uri("lsp-held")
    writer = s3.machine(tmp_path / "vic", "vic")
    (tmp_path / "v.log").write_text(failure("lsp", 1))
    mem(writer, "--vault", vault, "init")
    mem(writer, "--vault", vault, "ingest", str(tmp_path / "v.log"))
    held = HeldStore()
    env = s3.machine(tmp_path / "wes", "wes", AWS_ENDPOINT_URL=held.endpoint)
    try:
        wire = lsp(env, vault, "held")
        assert held.reached.wait(300), "the warm-up never went to the store"
        assert wire.proc.poll() is None
    finally:
        held.release()
    uri_ = (tmp_path / "held.txt").as_uri()
    wire.notify("poimen/diagnostics", {"uri": uri_, "diagnostics": [{
        "range": {"start": {"line": 1, "character": 0}, "end": {"line": 1, "character": 9}},
        "message": failure("lsp", 1), "severity": 1, "source": "python"}]})
    assert "result" in wire.hover(uri_, 1, timeout=300)   # answered, the store gone
    assert wire.close() == 0, (tmp_path / "held.err").read_text()[-2000:]
