"""What the request is asked with: its signatures, its query text and vector, and the
token counter its budget is measured by."""

from __future__ import annotations

from functools import lru_cache

from .. import budget as budgeting
from .request import Request
from .run import Run


def signatures(run: Run):
    """The request's failure signatures, extracted from the redacted source (stored
    evidence is redacted before extraction, so the hashes must see the same text)."""
    if not run.req.signature_source:
        return []
    from ..redact import redact
    from ..signatures import extract

    try:
        run.source = redact(run.req.signature_source).text
        return extract(run.source, tool=run.req.tool)
    except Exception as exc:  # noqa: BLE001 - an extractor bug degrades, never fails
        run.degraded.append(f"signatures: failed ({type(exc).__name__}: {exc})")
        return []


def text(req: Request, source: str, tool: str | None, sigs) -> str:
    """The task, then the excerpts of the top three signatures (or the raw source when
    nothing was extracted); the tool alone when that is all there is."""
    parts = [req.task] if req.task else []
    if sigs:
        parts += list(dict.fromkeys(s.excerpt for s in sigs[:3]))
    elif source:
        parts.append(source.strip()[:4000])
    if not parts and tool:
        parts.append(tool)
    return "\n".join(p for p in parts if p)


FULLTEXT_CHARS = 4000


def fulltext(req: Request, source: str) -> str:
    """What BM25 is asked: the task and the paste itself (its words beyond the
    excerpts, a package or a flag, are what full text is good at)."""
    return "\n".join(p for p in (req.task, source.strip()[:FULLTEXT_CHARS]) if p)


def embedder_or_none(engine):
    from ..embed import EmbedderUnavailable

    try:
        return engine.embedder
    except EmbedderUnavailable:
        return None


def vector(run: Run):
    from ..embed import EmbedderUnavailable

    embedder = embedder_or_none(run.engine)
    if embedder is None or not run.query:
        return None
    try:
        return embedder.embed_one(run.query)
    except EmbedderUnavailable:
        return None


def counter(engine, run: Run):
    embedder = embedder_or_none(engine)
    if embedder is not None:
        path = embedder.tokenizer_path
    else:
        from ..embed import EmbedderConfig, EmbedderUnavailable, default_tokenizer_path
        try:
            path = EmbedderConfig.from_env().tokenizer_path or default_tokenizer_path()
        except EmbedderUnavailable:
            path = ""
    count, note = _cached_counter(str(path))
    if note:
        run.degraded.append(note)
    return count


@lru_cache(maxsize=4)
def _cached_counter(path: str):
    return budgeting.token_counter(path)
