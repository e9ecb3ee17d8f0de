"""`mem serve` as a client sees it: errors with reasons, size limit, token, schema."""

from __future__ import annotations

import json
import subprocess
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
