"""The server's options, from `initializationOptions` and `workspace/configuration`.

Editors send camelCase (`generatorUrl`, `debounceMs`); snake_case is accepted too.
An invalid option is reported and falls back to its default; the others still apply.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError
from pydantic.alias_generators import to_camel

from ..config import DEFAULT_LEG_TIMEOUT_S, MAX_LEG_TIMEOUT_S

SECTION = "poimen"


class Settings(BaseModel):
    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True,
                              extra="ignore", frozen=True)

    vault: str | None = None
    project: str | None = None
    generator: Literal["embedded", "openai"] = "embedded"
    generator_url: str | None = None
    generator_model: str | None = None
    budget: int = Field(1200, gt=0, le=100_000)
    scope: Literal["project", "all-projects"] | None = None
    min_severity: Literal["error", "warning", "information", "hint"] = "error"
    leg_timeout_s: float = Field(DEFAULT_LEG_TIMEOUT_S, gt=0, le=MAX_LEG_TIMEOUT_S)
    debounce_ms: int = Field(300, ge=0, le=10_000)
    queue_limit: int = Field(256, ge=1, le=100_000)
    cache_size: int = Field(512, ge=1, le=100_000)
    answers_dir: str | None = None

    def engine_key(self) -> tuple:
        """What the engine is built from: a change here means a new engine."""
        return (self.vault, self.project, self.generator, self.generator_url,
                self.generator_model, self.leg_timeout_s)


def parse(raw: Any, base: Settings | None = None) -> tuple[Settings, list[str]]:
    """Settings from a client's options, laid over `base`; and one message per bad option.

    `raw` may be the options themselves or `{"poimen": {...}}`.
    """
    base = base or Settings()
    if raw is None:
        return base, []
    if not isinstance(raw, dict):
        return base, [f"poimen settings must be an object, got {type(raw).__name__}"]
    if isinstance(raw.get(SECTION), dict):
        raw = raw[SECTION]
    merged = {**base.model_dump(), **_by_field(raw)}
    errors: list[str] = []
    while True:
        try:
            return Settings.model_validate(merged), errors
        except ValidationError as exc:
            for err in exc.errors():
                name = str(err["loc"][0]) if err["loc"] else "?"
                if name not in Settings.model_fields:
                    return base, errors + [f"invalid poimen settings: {err['msg']}"]
                errors.append(f"invalid poimen setting {to_camel(name)!r}: {err['msg']};"
                              f" keeping {getattr(base, name)!r}")
                merged[name] = getattr(base, name)


def _by_field(raw: dict) -> dict:
    """Option names mapped to field names (camelCase or snake_case in, field names out)."""
    aliases = {to_camel(name): name for name in Settings.model_fields}
    out = {}
    for key, value in raw.items():
        name = aliases.get(key, key)
        if name in Settings.model_fields:
            out[name] = value
    return out
