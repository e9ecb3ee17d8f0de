"""OpenAI-compatible chat-completions backend (Ollama, llama.cpp server, vLLM, hosted).

Temperature 0, a fixed seed, the pinned prompt. Retries only on transport errors and
5xx answers; an empty answer is a valid answer and is never retried.
"""

from __future__ import annotations

import os
import re
import time

import httpx

from .filter import FilterConfig, filter_lines
from .model import Projection, SymptomGenerationError, SymptomLine
from .prompt import load_template, render, template_sha

_BULLET = re.compile(r"^\s*(?:[-*•]|\d+[.)])\s+")
MAX_LINES = 8
MAX_LINE_CHARS = 300


class OpenAIGenerator:
    """`Generator` calling `POST {url}/chat/completions`."""

    def __init__(self, embedder, url: str = "", model: str = "", api_key_env: str | None = None,
                 timeout_s: float = 30.0, seed: int = 0, retries: int = 2,
                 backoff_s: float = 0.5, template: str | None = None,
                 filters: FilterConfig = FilterConfig()):
        if not url or not model:
            raise SymptomGenerationError("openai backend needs 'url' and 'model'")
        self.embedder, self.filters = embedder, filters
        self.url = url.rstrip("/") + "/chat/completions"
        self.model, self.seed, self.timeout_s = model, int(seed), float(timeout_s)
        self.retries, self.backoff_s = int(retries), float(backoff_s)
        self.api_key_env = api_key_env
        self.template = template if template is not None else load_template()
        self.prompt_sha = template_sha(self.template)
        self.model_id = f"openai:{model}@seed{self.seed}"

    def _headers(self) -> dict:
        if not self.api_key_env:
            return {}
        key = os.environ.get(self.api_key_env)
        if not key:
            raise SymptomGenerationError(f"environment variable {self.api_key_env} is not set")
        return {"Authorization": f"Bearer {key}"}

    def complete(self, prompt: str) -> str:
        body = {"model": self.model, "temperature": 0, "seed": self.seed,
                "messages": [{"role": "user", "content": prompt}]}
        headers, last = self._headers(), None
        for attempt in range(self.retries + 1):
            if attempt:
                time.sleep(self.backoff_s * attempt)
            try:
                reply = httpx.post(self.url, json=body, headers=headers, timeout=self.timeout_s)
            except httpx.TransportError as exc:
                last = f"transport error: {exc!r}"
                continue
            if reply.status_code >= 500:
                last = f"HTTP {reply.status_code}"
                continue
            if reply.status_code >= 400:
                raise SymptomGenerationError(f"{self.url} answered HTTP {reply.status_code}: {reply.text[:200]}")
            return _content(reply)
        raise SymptomGenerationError(f"{self.url} failed after {self.retries + 1} attempts ({last})")

    def project(self, memory_text: str, evidence_messages: list[str]) -> Projection:
        evidence = list(dict.fromkeys(" ".join(m.split()) for m in evidence_messages if m.strip()))
        answer = self.complete(render(self.template, memory_text, evidence))
        generated = parse_lines(answer)
        kept, dropped = filter_lines(generated, memory_text.strip(), evidence, self.embedder, self.filters)
        lines = [SymptomLine(m, "evidence") for m in evidence] + [SymptomLine(t, "generated") for t in kept]
        return Projection(tuple(lines), tuple(dropped), self.model_id, self.prompt_sha)


def _content(reply: httpx.Response) -> str:
    try:
        content = reply.json()["choices"][0]["message"]["content"]
    except (ValueError, KeyError, IndexError, TypeError) as exc:
        raise SymptomGenerationError(f"malformed chat-completions reply: {reply.text[:200]!r}") from exc
    return content or ""


def parse_lines(answer: str) -> list[str]:
    """One symptom per non-empty line, bullets and numbering stripped, deduplicated."""
    out: list[str] = []
    for raw in answer.splitlines():
        line = " ".join(_BULLET.sub("", raw).split())[:MAX_LINE_CHARS]
        if line and line not in out:
            out.append(line)
    return out[:MAX_LINES]
