"""Symptom projection: the failures an accepted L1/L2 memory would explain.

`make_generator(settings, embedder)` picks a backend: "embedded" (default, the
curated catalogue, no network) or "openai" (an OpenAI-compatible HTTP server).
"""

from __future__ import annotations

from .model import Generator, Projection, SymptomGenerationError, SymptomLine

__all__ = ["Generator", "Projection", "SymptomGenerationError", "SymptomLine", "make_generator"]

_OPENAI_KEYS = {"url", "model", "api_key_env", "timeout_s", "seed", "retries"}


def make_generator(settings: dict | None, embedder) -> Generator:
    """A generator for `settings` (`{"backend": "embedded"|"openai", ...}`; None = embedded)."""
    settings = dict(settings or {})
    backend = settings.pop("backend", "embedded")
    if backend == "embedded":
        if settings:
            raise SymptomGenerationError(f"embedded backend takes no settings, got {sorted(settings)}")
        from .embedded import CatalogueGenerator
        return CatalogueGenerator(embedder)
    if backend == "openai":
        unknown = sorted(set(settings) - _OPENAI_KEYS)
        if unknown:
            raise SymptomGenerationError(f"unknown openai settings: {unknown}")
        from .openai import OpenAIGenerator
        return OpenAIGenerator(embedder, **settings)
    raise SymptomGenerationError(f"unknown symptom backend {backend!r} (embedded | openai)")
