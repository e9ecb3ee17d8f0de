"""The OpenAI-compatible backend against a local HTTP server standing in for the LLM."""

from __future__ import annotations

import json
import socket
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from poimen.embed import Embedder
from poimen.symptoms import SymptomGenerationError, make_generator
from poimen.symptoms.prompt import load_template, template_sha

MEMORY = ("Uploads over a few megabytes broke because the ingress buffers request bodies "
          "with a one-megabyte default; raising the proxy's body limit fixed it.")


class FakeLLM:
    """Answers chat completions from a script: each item is (status, content-or-raw-body)."""

    def __init__(self, script):
        self.script, self.requests = list(script), []
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                fake.requests.append({"path": self.path, "body": body,
                                      "auth": self.headers.get("Authorization")})
                status, content = fake.script.pop(0) if len(fake.script) > 1 else fake.script[0]
                raw = content if isinstance(content, bytes) else json.dumps(
                    {"choices": [{"message": {"role": "assistant", "content": content}}]}).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(raw)))
                self.end_headers()
                self.wfile.write(raw)

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self):
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture(scope="module")
def embedder():
    return Embedder()


@pytest.fixture
def llm(request):
    fake = FakeLLM(request.param)
    yield fake
    fake.close()


def generator(embedder, url, **extra):
    settings = {"backend": "openai", "url": url, "model": "qwen2.5:0.5b", "seed": 7,
                "timeout_s": 5, **extra}
    gen = make_generator(settings, embedder)
    gen.backoff_s = 0
    return gen


ANSWER = ("- 413 Request Entity Too Large\n"
          "2. client intended to send too large body: 2097152 bytes\n"
          "Bananas are rich in potassium.\n"
          "\n"
          "- 413 Request Entity Too Large\n")


@pytest.mark.parametrize("llm", [[(200, ANSWER)]], indirect=True)
def test_lines_parsed_filtered_and_request_pinned(embedder, llm, monkeypatch):
    monkeypatch.setenv("FAKE_LLM_KEY", "s3cret")
    gen = generator(embedder, llm.url, api_key_env="FAKE_LLM_KEY")
    projection = gen.project(MEMORY, ["client intended to send too large body"])
    assert [(l.text, l.origin) for l in projection.lines] == [
        ("client intended to send too large body", "evidence"),
        ("413 Request Entity Too Large", "generated"),
        ("client intended to send too large body: 2097152 bytes", "generated")]
    assert ("Bananas are rich in potassium.", "matches nothing the memory says") in projection.dropped
    (request,) = llm.requests
    assert request["path"] == "/v1/chat/completions"
    assert request["auth"] == "Bearer s3cret"
    body = request["body"]
    assert body["temperature"] == 0 and body["seed"] == 7 and body["model"] == "qwen2.5:0.5b"
    prompt = body["messages"][0]["content"]
    assert MEMORY in prompt and "return nothing" in prompt
    assert projection.prompt_sha == template_sha(load_template())
    assert projection.model_id == "openai:qwen2.5:0.5b@seed7"


@pytest.mark.parametrize("llm", [[(200, "")]], indirect=True)
def test_empty_answer_is_valid_and_never_retried(embedder, llm):
    projection = generator(embedder, llm.url).project(MEMORY, [])
    assert projection.lines == () and projection.text == ""
    assert len(llm.requests) == 1


@pytest.mark.parametrize("llm", [[(200, "")]], indirect=True)
def test_empty_answer_keeps_evidence_lines(embedder, llm):
    projection = generator(embedder, llm.url).project(MEMORY, ["HTTP 413"])
    assert [(l.text, l.origin) for l in projection.lines] == [("HTTP 413", "evidence")]
    assert len(llm.requests) == 1


@pytest.mark.parametrize("llm", [[(503, b"busy"), (502, b"bad"), (200, "413 Request Entity Too Large")]],
                         indirect=True)
def test_5xx_is_retried(embedder, llm):
    projection = generator(embedder, llm.url, retries=2).project(MEMORY, [])
    assert projection.text == "413 Request Entity Too Large"
    assert len(llm.requests) == 3


@pytest.mark.parametrize("llm", [[(500, b"down")]], indirect=True)
def test_persistent_5xx_gives_up_with_a_clear_error(embedder, llm):
    with pytest.raises(SymptomGenerationError, match="failed after 3 attempts.*HTTP 500"):
        generator(embedder, llm.url, retries=2).project(MEMORY, [])
    assert len(llm.requests) == 3


@pytest.mark.parametrize("llm", [[(400, b'{"error": "bad model"}')]], indirect=True)
def test_4xx_is_not_retried(embedder, llm):
    with pytest.raises(SymptomGenerationError, match="HTTP 400"):
        generator(embedder, llm.url, retries=2).project(MEMORY, [])
    assert len(llm.requests) == 1


@pytest.mark.parametrize("llm", [[(200, b'{"choices": []}')]], indirect=True)
def test_malformed_reply_is_a_clear_error(embedder, llm):
    with pytest.raises(SymptomGenerationError, match="malformed chat-completions reply"):
        generator(embedder, llm.url).project(MEMORY, [])
    assert len(llm.requests) == 1


def test_transport_errors_are_retried_then_reported(embedder):
    with socket.socket() as sock:  # a port with nobody listening
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    with pytest.raises(SymptomGenerationError, match="failed after 2 attempts.*transport error"):
        generator(embedder, f"http://127.0.0.1:{port}/v1", retries=1).project(MEMORY, [])


def test_missing_api_key_is_a_clear_error(embedder, monkeypatch):
    monkeypatch.delenv("NO_SUCH_KEY_VAR", raising=False)
    with pytest.raises(SymptomGenerationError, match="NO_SUCH_KEY_VAR is not set"):
        generator(embedder, "http://127.0.0.1:9/v1", api_key_env="NO_SUCH_KEY_VAR").project(MEMORY, [])
