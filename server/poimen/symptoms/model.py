"""The projection's value types and the generator protocol."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import Protocol

ORIGINS = ("generated", "evidence")


@dataclass(frozen=True)
class SymptomLine:
    text: str
    origin: str  # "generated" | "evidence"

    def __post_init__(self):
        if self.origin not in ORIGINS:
            raise ValueError(f"symptom line origin must be one of {ORIGINS}, not {self.origin!r}")


@dataclass(frozen=True)
class Projection:
    """The failures a memory would explain, one line each; empty is a valid answer."""

    lines: tuple[SymptomLine, ...]
    dropped: tuple[tuple[str, str], ...]  # (line, reason) removed by the filter
    model_id: str
    prompt_sha: str

    @property
    def text(self) -> str:
        return "\n".join(line.text for line in self.lines)

    def to_dict(self) -> dict:
        """Plain JSON-able form, as logged."""
        return {"lines": [{"text": l.text, "origin": l.origin} for l in self.lines],
                "dropped": [{"text": t, "reason": r} for t, r in self.dropped],
                "model_id": self.model_id, "prompt_sha": self.prompt_sha}

    @classmethod
    def from_dict(cls, data: dict) -> "Projection":
        return cls(tuple(SymptomLine(l["text"], l["origin"]) for l in data["lines"]),
                   tuple((d["text"], d["reason"]) for d in data.get("dropped", ())),
                   data["model_id"], data["prompt_sha"])

    @property
    def sha(self) -> str:
        """sha256 of the canonical JSON of lines, origins, model id and prompt sha."""
        body = {"lines": [[l.text, l.origin] for l in self.lines],
                "model_id": self.model_id, "prompt_sha": self.prompt_sha}
        raw = json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
        return hashlib.sha256(raw.encode("utf-8")).hexdigest()


class Generator(Protocol):
    model_id: str
    prompt_sha: str

    def project(self, memory_text: str, evidence_messages: list[str]) -> Projection: ...


class SymptomGenerationError(RuntimeError):
    """The generator could not produce an answer (unreachable backend, bad reply, bad settings)."""
