"""`mem lsp` under hostile input, over a bare JSON-RPC wire (tests/stress/lspwire.py):
broken frames, invalid JSON, unknown methods, and a flood of 10k forwarded diagnostics.
The server must answer every request, keep memory bounded and stay responsive; the
timeouts are hang guards, not speed claims (figures: docs/RELIABILITY.md).
"""
from __future__ import annotations

import json
import queue
import subprocess
import sys
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from poimen.engine import Engine
from stress.lspwire import Wire, frame, rss_mb

MEM = str(Path(sys.executable).with_name("mem"))
FAILURE = "npm ERR! code ERESOLVE\nnpm ERR! ERESOLVE unable to resolve dependency tree"
FLOOD = 10_000
FLOOD_GROWTH_MB = 100   # 10k diagnostics are ~2 MB of text; the index keeps the last per uri


@pytest.fixture(scope="module")
def vault(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("lsp-hostile") / "vault"
    engine = Engine(path, project="p")
    evidence = engine.ingest(FAILURE, source="terminal", tool="npm").evidence_sha
    engine.remember("L1", "ERESOLVE with react 18: pin react-dom to 18.2", parents=[evidence])
    return path


@pytest.fixture
def wire(vault, tmp_path):
    server = Wire([MEM, "lsp"], tmp_path / "lsp.err")
    answer = server.initialize({"vault": str(vault), "project": "p", "debounceMs": 0,
                                "answersDir": str(tmp_path / "answers")}, tmp_path)
    assert "hoverProvider" in answer["result"]["capabilities"]
    yield server
    assert server.close() == 0, (tmp_path / "lsp.err").read_text()[-3000:]


def _diagnostic(message: str, line: int, source: str = "npm") -> dict:
    return {"range": {"start": {"line": line, "character": 0},
                      "end": {"line": line, "character": 20}},
            "message": message, "severity": 1, "source": source}


def _known_failure_hovers_as_tier_1(wire: Wire, path: Path) -> None:
    uri = path.as_uri()
    wire.notify("poimen/diagnostics", {"uri": uri, "diagnostics": [_diagnostic(FAILURE, 1)]})
    answer = wire.hover(uri, 1, timeout=300)
    assert answer["result"]["contents"]["value"].startswith("Tier 1"), answer


BROKEN = [frame(b"{not json"), frame(b"[1, 2, 3]"), frame(b'"a string"'), frame(b"null"),
          frame(b'{"jsonrpc": "2.0", "id": 99}'), frame(b'{"jsonrpc": "2.0", "method": 7}'),
          frame(b'{"jsonrpc": "2.0", "method": "initialized", "params": "x"}'),
          frame("{\"jsonrpc\": \"2.0\", \"method\": \"\udcff\"}".encode("utf-8", "surrogatepass")),
          b"Content-Length: abc\r\n\r\n{}", b"X-Garbage: 1\r\n\r\n",
          frame(b'{"jsonrpc": "2.0", "method": "$/poimen/unknown", "params": {}}')]


def test_broken_frames_and_unknown_methods_leave_the_server_answering(wire, tmp_path):
    for data in BROKEN:
        wire.send_raw(data)
    unknown = wire.request("poimen/noSuchRequest", {}, timeout=60)
    assert unknown["error"]["code"] == -32601
    _known_failure_hovers_as_tier_1(wire, tmp_path / "after-garbage.txt")
    assert wire.proc.poll() is None


ANSWER_WITHIN_S = 1.0   # the bar; measured figures: docs/RELIABILITY.md
BAD_HEADERS = [b"Content-Length: abc\r\n\r\n", b"Content-Length: -5\r\n\r\n{}",
               b"Content-Length: 0x10\r\n\r\n{}", b"Content-Length: 2.5\r\n\r\n{}",
               b"Content-Length: 1000000000000\r\n\r\n", b"Content-Length: 500\r\n\r\n{",
               b"Content-Length: 3\r\n\r\n{\"long\": 1}", b"Content-Type: x\r\n\r\n{}"]


def _answered_after(wire: Wire, data: bytes) -> float:
    """Send `data` and then, at once, a normal request frame (nothing that would resync a
    naive reader); the seconds until its answer."""
    wire.send_raw(data)
    started = time.monotonic()
    answer = wire.request("poimen/noSuchRequest", {}, timeout=30)
    assert answer["error"]["code"] == -32601, (data, answer)
    return time.monotonic() - started


@pytest.fixture
def warm_wire(wire, tmp_path):
    """The wire once the engine has warmed up: a server told to exit while still warming
    sometimes dies in LanceDB's finalisation (docs/RELIABILITY.md, known failures)."""
    _known_failure_hovers_as_tier_1(wire, tmp_path / "warm.txt")
    return wire


def test_after_each_bad_header_the_next_request_is_answered(warm_wire):
    """Every bad header of issue 19, each followed directly by a normal request."""
    wire = warm_wire
    waited = {bad: _answered_after(wire, bad) for bad in BAD_HEADERS}
    assert max(waited.values()) < ANSWER_WITHIN_S, waited
    assert wire.proc.poll() is None
    body = json.dumps({"jsonrpc": "2.0", "id": 777, "method": "poimen/lfOnly"}).encode()
    wire.responses[777] = queue.Queue()
    assert _answered_after(wire, b"Content-Length: %d\n\n" % len(body) + body) < ANSWER_WITHIN_S
    assert "error" in wire.responses[777].get(timeout=5)   # an LF-only frame is read, answered


@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
@given(junk=st.binary(min_size=1, max_size=2000).filter(
    lambda b: b"content-length" not in b.lower()))
def test_random_bytes_between_frames_never_deafen_the_server(warm_wire, junk):
    wire = warm_wire
    assert _answered_after(wire, junk) < 10 * ANSWER_WITHIN_S   # hang guard under load
    assert wire.proc.poll() is None


def test_exit_without_shutdown_exits_1(tmp_path):
    server = subprocess.Popen([MEM, "--vault", str(tmp_path), "lsp"], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    _, stderr = server.communicate(_message({"method": "exit"}), timeout=60)
    assert server.returncode == 1, stderr.decode()[-2000:]


def test_told_to_exit_while_warming_up_the_server_exits_cleanly(vault, tmp_path):
    """`shutdown` and `exit` right after `initialized`, while the engine warms up (LanceDB
    opening, copies loading): exit code 0 every time, never an abort in finalisation."""
    codes = []
    for attempt in range(5):
        server = Wire([MEM, "lsp"], tmp_path / f"lsp{attempt}.err")
        server.initialize({"vault": str(vault), "project": "p"}, tmp_path)
        time.sleep(0.1 * attempt)   # from before the warm-up starts to well inside it
        codes.append(server.close())
    assert codes == [0] * 5, [(tmp_path / f"lsp{i}.err").read_text()[-1500:]
                              for i, code in enumerate(codes) if code]


def test_a_request_with_malformed_params_gets_an_error_response(wire):
    answer = wire.request("textDocument/hover", {"position": "nowhere"}, timeout=20)
    assert answer["error"]["code"] == -32602
    assert wire.proc.poll() is None


def test_a_flood_of_forwarded_diagnostics_keeps_memory_bounded_and_hovers_answered(
        wire, tmp_path):
    _known_failure_hovers_as_tier_1(wire, tmp_path / "warm.txt")   # embedder loaded
    warm_rss, _ = rss_mb(wire.proc.pid)
    started = time.monotonic()
    for i in range(FLOOD):
        uri = (tmp_path / f"src{i % 100}.py").as_uri()
        wire.notify("poimen/diagnostics", {"uri": uri, "diagnostics": [_diagnostic(
            f"TypeError: handler {i} is not a function (at line {i})", i % 500, "tsc")]})
    sent = time.monotonic() - started
    wire.notify("poimen/diagnostics", {"uri": (tmp_path / "one.py").as_uri(), "diagnostics": [
        _diagnostic(f"ValueError: bad value {i}", i, "python") for i in range(FLOOD)]})
    started = time.monotonic()
    _known_failure_hovers_as_tier_1(wire, tmp_path / "after-flood.txt")
    answered = time.monotonic() - started
    rss, peak = rss_mb(wire.proc.pid)
    print("lsp flood:", json.dumps({"diagnostics": 2 * FLOOD, "warm_rss_mb": warm_rss,
                                    "rss_mb": rss, "peak_mb": peak, "send_s": round(sent, 1),
                                    "hover_after_s": round(answered, 2)}))
    assert rss - warm_rss <= FLOOD_GROWTH_MB, (warm_rss, rss)


def _message(message: dict) -> bytes:
    return frame(json.dumps({"jsonrpc": "2.0", **message}).encode())


def test_a_client_that_closes_its_end_gets_no_traceback_and_a_clean_exit(tmp_path):
    """The reply to `shutdown` meets a closed pipe: one warning, no traceback, exit 0."""
    server = subprocess.Popen([MEM, "--vault", str(tmp_path), "lsp"], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    server.stdin.write(_message({"id": 1, "method": "initialize", "params": {
        "processId": None, "rootUri": None, "capabilities": {}}}))
    server.stdin.flush()
    assert server.stdout.readline().startswith(b"Content-Length")   # initialised
    server.stdout.close()
    server.stdin.write(_message({"id": 2, "method": "shutdown"}) + _message({"method": "exit"}))
    server.stdin.close()
    stderr = server.stderr.read().decode()
    assert server.wait(timeout=60) == 0
    assert "Traceback" not in stderr and "BrokenPipe" not in stderr
    assert "the client closed the connection" in stderr
