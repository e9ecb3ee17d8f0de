"""`mem serve` as a client sees it: errors with reasons, size limit, token, schema."""

from __future__ import annotations

import json
import socket
import subprocess
import threading
from pathlib import Path

import httpx
import pytest

from test_context_acceptance import MEM, Server, mem


@pytest.fixture(scope="module")
def vault(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("http") / "vault"
    mem(path, "init")
    return path


@pytest.fixture(scope="module")
def server(vault):
    srv = Server(vault, log_dir=vault.parent)
    yield srv
    srv.stop()


def _post(server, content: bytes | str, headers=None) -> httpx.Response:
    return httpx.post(server.url + "/memory/context", content=content, timeout=60,
                      headers={"content-type": "application/json", **(headers or {})})


@pytest.mark.parametrize("payload, words", [
    ({}, "at least one of tool, task, signature_source"),
    ({"task": "   "}, "at least one"),
    ({"task": "x", "colour": "red"}, "colour"),
    ({"task": "x", "budget": "ten"}, "budget"),
    ({"task": "x", "budget": 0}, "budget"),
    ({"task": "x", "scope": "galaxy"}, "scope"),
    ({"task": 7}, "task"),
    ([1, 2], "object"),
])
def test_bad_requests_are_422_with_a_reason(server, payload, words):
    response = _post(server, json.dumps(payload))
    assert response.status_code == 422
    body = response.json()
    assert body["error"] == "bad request"
    assert words.lower() in body["reason"].lower()


def test_broken_json_is_422(server):
    response = _post(server, b'{"task": "x"')
    assert response.status_code == 422 and response.json()["reason"]


def test_an_empty_vault_answers_200_with_nothing_known(server):
    response = _post(server, json.dumps({"task": "deploy the docs site"}))
    assert response.status_code == 200
    body = response.json()
    assert body["lessons"] == [] and body["references"] == [] and body["tier"] is None
    assert body["budget"]["used"] == 0


def test_a_failure_holding_a_secret_is_found_and_the_secret_not_echoed(vault, server):
    token = "ghp_" + "a1B2c3D4e5" * 4
    failure = ("Traceback (most recent call last):\n  File \"deploy.py\", line 3, in "
               f"<module>\n    push()\nRuntimeError: registry refused token {token}\n")
    source = vault.parent / "failure.log"
    source.write_text(failure)
    evidence = mem(vault, "ingest", str(source))["results"][0]["evidence_sha"]
    lesson = mem(vault, "remember", "--level", "L1", "--parent", evidence, "--text",
                 "The deploy bot's registry credential had expired; rotating it in the "
                 "secrets store fixed the push.")["sha"]
    response = _post(server, json.dumps({"signature_source": failure, "request_id": "s"}))
    assert response.status_code == 200
    body = response.json()
    assert body["tier"] == 1 and body["lessons"][0]["sha"] == lesson
    assert token not in response.text


def test_openapi_schema_describes_the_endpoint(server):
    schema = httpx.get(server.url + "/openapi.json", timeout=30).json()
    post = schema["paths"]["/memory/context"]["post"]
    assert {"200", "422"} <= set(post["responses"])
    ref = post["requestBody"]["content"]["application/json"]["schema"]["$ref"]
    fields = schema["components"]["schemas"][ref.rsplit("/", 1)[1]]["properties"]
    assert {"tool", "task", "signature_source", "project", "scope", "budget",
            "request_id"} == set(fields)


def test_oversized_requests_are_refused_before_the_engine(vault, tmp_path):
    small = Server(vault, log_dir=tmp_path, extra_args=["--max-body", "2000"])
    try:
        big = json.dumps({"signature_source": "E" * 5000})
        assert _post(small, big).status_code == 413
        chunked = httpx.post(small.url + "/memory/context", timeout=60,
                             content=iter([big[:1500].encode(), big[1500:].encode()]),
                             headers={"content-type": "application/json"})
        assert chunked.status_code == 413
        assert "limited to 2000 bytes" in chunked.json()["reason"]
        assert _post(small, json.dumps({"task": "fits"})).status_code == 200
    finally:
        small.stop()


def test_binding_beyond_loopback_needs_a_token(vault):
    done = subprocess.run(MEM + ["--vault", str(vault), "serve", "--host", "0.0.0.0",
                                 "--port", "1"], capture_output=True, text=True, timeout=120)
    assert done.returncode == 2
    assert "--token" in done.stderr and "0.0.0.0" in done.stderr


def test_a_port_in_use_is_a_clear_error_not_a_crash(vault):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        done = subprocess.run(MEM + ["--vault", str(vault), "serve", "--port",
                                     str(taken.getsockname()[1])],
                              capture_output=True, text=True, timeout=120)
    assert done.returncode > 0, done.stderr   # an exit status, not a signal (abort)
    assert "address already in use" in done.stderr
    assert "terminate called" not in done.stderr


def test_a_token_is_required_when_set(vault, tmp_path):
    guarded = Server(vault, log_dir=tmp_path, extra_args=["--token", "s3cret"])
    try:
        assert _post(guarded, json.dumps({"task": "x"})).status_code == 401
        wrong = _post(guarded, json.dumps({"task": "x"}), {"authorization": "Bearer no"})
        assert wrong.status_code == 401
        right = _post(guarded, json.dumps({"task": "x"}),
                      {"authorization": "Bearer s3cret"})
        assert right.status_code == 200
    finally:
        guarded.stop()


def test_cli_context_prints_the_http_body(vault, server):
    request = {"task": "deploy the docs site", "request_id": "cli-1"}
    done = subprocess.run(MEM + ["--vault", str(vault), "--project", "alpha", "context",
                                 "--task", request["task"], "--request-id", "cli-1"],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    http_body = _post(server, json.dumps(request)).content
    assert done.stdout.encode().rstrip(b"\n") == http_body
    assert '"event": "context"' in done.stderr


def test_cli_context_rejects_a_request_without_inputs(vault):
    done = subprocess.run(MEM + ["--vault", str(vault), "context"], capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 2 and "at least one" in done.stderr


def _listening_addresses(port: int) -> set[str]:
    """Local addresses of the sockets listening on `port` (from /proc/net/tcp{,6})."""
    found = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        for line in Path(table).read_text().splitlines()[1:]:
            local, state = line.split()[1], line.split()[3]
            address, hex_port = local.split(":")
            if state == "0A" and int(hex_port, 16) == port:
                found.add(address)
    return found


def test_serve_binds_loopback_by_default(server):
    assert _listening_addresses(server.port) == {"0100007F"}    # 127.0.0.1, nothing else
    assert "on http://127.0.0.1:" in server.log()


@pytest.mark.parametrize("host", ["evil.example", "evil.example:80", "10.0.0.7",
                                  "127.0.0.1.evil.example", "[fe80::1]:80", "", "127.0.0.2",
                                  "127.1.2.3:80"])
def test_a_host_header_not_naming_this_machine_is_refused(server, host):
    """DNS rebinding: a page on evil.example that resolves to 127.0.0.1 reaches the port
    with its own name in Host."""
    response = _post(server, json.dumps({"task": "x"}), {"host": host})
    assert response.status_code == 403 and "Host" in response.json()["reason"]


@pytest.mark.parametrize("host", ["127.0.0.1", "localhost", "[::1]", "LOCALHOST", "LocalHost"])
def test_loopback_host_names_are_served(server, host):
    response = _post(server, json.dumps({"task": "x"}), {"host": f"{host}:{server.port}"})
    assert response.status_code == 200


@pytest.mark.parametrize("origin", ["http://evil.example", "null",
                                    "http://127.0.0.1:1234"])
def test_requests_from_web_pages_are_refused_without_cors(server, origin):
    response = _post(server, json.dumps({"task": "x"}), {"origin": origin})
    assert response.status_code == 403 and "Origin" in response.json()["reason"]
    assert not [h for h in response.headers if h.lower().startswith("access-control")]
    simple = httpx.post(server.url + "/memory/context", content='{"task": "x"}', timeout=60,
                        headers={"content-type": "text/plain", "origin": origin})
    assert simple.status_code == 403
    preflight = httpx.options(server.url + "/memory/context", timeout=60, headers={
        "origin": origin, "access-control-request-method": "POST"})
    assert "access-control-allow-origin" not in preflight.headers


@pytest.mark.parametrize("body", [
    '{"task": ' + "[" * 100_000 + "]" * 100_000 + "}",
    '{"task": "x", "project": ' + '{"a":' * 100_000 + "1" + "}" * 100_000 + "}",
    "[" * 500_000,
], ids=["arrays", "objects", "unclosed"])
def test_deeply_nested_bodies_are_a_clear_422(server, body):
    response = _post(server, body)
    assert response.status_code == 422
    assert response.json()["error"] == "bad request" and response.json()["reason"]
    assert _post(server, json.dumps({"task": "still up"})).status_code == 200


def test_off_loopback_with_a_token_serves_any_host_name_but_only_with_the_token(vault,
                                                                              tmp_path):
    wide = Server(vault, log_dir=tmp_path, extra_args=["--host", "0.0.0.0", "--token", "t0k"])
    try:
        named = {"host": "poimen.internal", "authorization": "Bearer t0k"}
        assert _post(wide, json.dumps({"task": "x"}), named).status_code == 200
        assert _post(wide, json.dumps({"task": "x"}), {"host": "poimen.internal"}
                     ).status_code == 401
        assert "token required" in wide.log()
    finally:
        wide.stop()


def test_health_answers_while_the_engine_opens_and_a_lookup_waits_for_it(vault):
    from fastapi.testclient import TestClient

    from poimen.engine import Engine
    from poimen.http import Opening, create_app

    go = threading.Event()
    opening = Opening(lambda: go.wait(60) and Engine(vault, "alpha", create=False),
                      str(vault))
    client = TestClient(create_app(opening), base_url="http://127.0.0.1")
    assert client.get("/health").json() == {"ok": True, "ready": False, "vault": str(vault)}
    asked = []
    waiting = threading.Thread(target=lambda: asked.append(
        client.post("/memory/context", json={"task": "deploy the docs site"})))
    waiting.start()
    waiting.join(1.0)
    assert waiting.is_alive() and not asked   # the lookup waits for the engine
    go.set()
    waiting.join(120)
    assert asked[0].status_code == 200 and "lessons" in asked[0].json()
    assert client.get("/health").json() == {"ok": True, "ready": True, "vault": str(vault)}


def test_an_engine_that_cannot_open_is_a_503_with_the_reason(tmp_path):
    from fastapi.testclient import TestClient

    from poimen.engine import Engine
    from poimen.http import Opening, create_app

    opening = Opening(lambda: Engine(tmp_path / "nowhere", "alpha", create=False),
                      str(tmp_path / "nowhere"))
    client = TestClient(create_app(opening), base_url="http://127.0.0.1")
    asked = client.post("/memory/context", json={"task": "x"})
    assert asked.status_code == 503 and "no vault at" in asked.json()["reason"]
    health = client.get("/health")
    assert health.status_code == 503 and "no vault at" in health.json()["reason"]


def test_serve_on_a_missing_vault_is_named_before_it_listens(tmp_path):
    done = subprocess.run(MEM + ["--vault", str(tmp_path / "nowhere"), "serve", "--port",
                                 "1"], capture_output=True, text=True, timeout=120)
    assert done.returncode == 2 and "no vault at" in done.stderr and "mem init" in done.stderr
