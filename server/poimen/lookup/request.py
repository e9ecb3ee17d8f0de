"""A context request: validated once, at the edge of the lookup."""

from __future__ import annotations

from dataclasses import dataclass

from ..canonical import canonical

SCOPES = ("project", "all-projects")
MAX_SOURCE_CHARS = 1_000_000
MAX_BUDGET = 100_000
FIELDS = ("tool", "task", "signature_source", "project", "scope", "budget", "request_id",
          "evidence_sha")


class BadContextRequest(ValueError):
    """The request cannot be answered as asked (the reason says why)."""


@dataclass(frozen=True)
class Request:
    tool: str | None
    task: str | None
    signature_source: str | None
    project: str
    scope: str
    budget: int
    request_id: str | None
    evidence_sha: str | None = None   # the source was just recorded as this evidence


def parse_request(raw: dict, default_project: str, default_budget: int) -> Request:
    """Validate a request dict; raises BadContextRequest with the reason."""
    if not isinstance(raw, dict):
        raise BadContextRequest("the request must be a JSON object")
    unknown = sorted(set(raw) - set(FIELDS))
    if unknown:
        raise BadContextRequest(f"unknown field(s): {', '.join(unknown)}")
    text = {}
    for name in FIELDS:
        if name == "budget":
            continue
        value = raw.get(name)
        if value is not None and not isinstance(value, str):
            raise BadContextRequest(f"{name} must be a string")
        text[name] = value.strip() if isinstance(value, str) and name != \
            "signature_source" else value
    if not any(text[k] and text[k].strip() for k in ("tool", "task", "signature_source")):
        raise BadContextRequest("give at least one of tool, task, signature_source")
    if text["signature_source"] and len(text["signature_source"]) > MAX_SOURCE_CHARS:
        raise BadContextRequest(f"signature_source is over {MAX_SOURCE_CHARS} characters")
    scope = text["scope"] or ("all-projects" if text["signature_source"] else "project")
    if scope not in SCOPES:
        raise BadContextRequest(f"scope must be one of {', '.join(SCOPES)}")
    limit = raw.get("budget", default_budget)
    if limit is None:
        limit = default_budget
    if isinstance(limit, bool) or not isinstance(limit, int) or not 0 < limit <= MAX_BUDGET:
        raise BadContextRequest(f"budget must be an integer in 1..{MAX_BUDGET}")
    return Request(text["tool"] or None, text["task"] or None,
                   text["signature_source"] or None, text["project"] or default_project,
                   scope, limit, text["request_id"] or None, text["evidence_sha"] or None)


def encode_body(body: dict) -> bytes:
    """The response bytes: canonical JSON, so identical answers are identical bytes."""
    return canonical(body).encode("utf-8")
