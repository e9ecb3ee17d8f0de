"""The pinned prompt template (`prompts/symptom.tmpl`) and its sha."""

from __future__ import annotations

import hashlib
from importlib import resources
from pathlib import Path

TEMPLATE_NAME = "symptom.tmpl"


def load_template() -> str:
    """The template text: from the wheel's `poimen/prompts`, else the repo's `prompts/`."""
    packaged = resources.files("poimen").joinpath("prompts", TEMPLATE_NAME)
    if packaged.is_file():
        return packaged.read_text(encoding="utf-8")
    repo = Path(__file__).resolve().parents[3] / "prompts" / TEMPLATE_NAME
    if repo.is_file():
        return repo.read_text(encoding="utf-8")
    raise FileNotFoundError(f"prompt template {TEMPLATE_NAME} not found in poimen/prompts or {repo.parent}")


def template_sha(template: str) -> str:
    return hashlib.sha256(template.encode("utf-8")).hexdigest()


def render(template: str, memory_text: str, evidence_messages: list[str]) -> str:
    evidence = "\n".join(f"- {m}" for m in evidence_messages) or "(none)"
    return template.replace("{{memory}}", memory_text.strip()).replace("{{evidence}}", evidence)
