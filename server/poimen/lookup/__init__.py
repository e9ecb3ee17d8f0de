"""The three-tier context lookup: "what do we already know about this failure?".

Its steps, one module each: `request` (validate), `query` (signatures, query text and
vector), `tier1` (the same signature seen before), `candidates` (every view of every
memory the request comes near), `fusion` (one fitted score per candidate, and whether
it is an answer), `answer` (tier-labelled items and the body); `budget` trims. Tier 1
leads and never short-circuits tiers 2 and 3; tier 3 is taken only when tiers 1-2 and
skills leave budget. Every leg runs under a timeout and degrades, never fails. See
docs/CONTEXT.md.
"""

from __future__ import annotations

import logging
import threading
import time

from .. import budget as budgeting
from .. import resident
from . import answer, candidates, fusion, query
from .request import SCOPES, BadContextRequest, Request, encode_body, parse_request
from .run import LegFault, Run
from .tier1 import LESSON_LEVELS, Tier1, tier1

__all__ = ["lookup", "warm", "parse_request", "encode_body", "BadContextRequest",
           "Request", "LegFault", "SCOPES"]

log = logging.getLogger("poimen.context")
EMBED_TIMEOUT_S = 10.0
FULL_TEXT_AFTER_S = 30.0   # an idle server loads the full-text copy after this anyway


def lookup(engine, request: dict, log_line: bool = True) -> dict:
    """Answer one context request; the dict is exactly the HTTP response body."""
    req = parse_request(request, engine.project,
                        int(getattr(engine.settings, "budget", 1200)))
    started = time.perf_counter()
    engine.vault.catch_up(reading=True)   # what other processes wrote (`mem remember`)
    run, tool = prepare(engine, req)
    try:
        # the embedding first: the longest leg, overlapped with tier 1's reads and writes
        get_vector = run.leg("embedder", lambda: query.vector(run), None)
        get_t1 = run.leg("tier1", lambda: tier1(run, run.signatures), Tier1())
        bm25 = {levels: run.start(candidates.fulltext, run, levels)
                for levels in (LESSON_LEVELS, ("R",))}
        run.vector = get_vector(max(run.timeout, EMBED_TIMEOUT_S))
        if run.vector is None and run.query:
            run.degraded.append("tier2: embedder unavailable, full-text + trigram only")
        get_t2 = run.leg("tier2", lambda: _scored(run, LESSON_LEVELS, tool, bm25), ({}, {}))
        get_sk = run.leg("skills", lambda: _skills(run), [])
        # tier 3 starts beside tier 2, but its answer is taken only if budget is left
        get_t3 = run.leg("tier3", lambda: _scored(run, ("R",), tool, bm25), ({}, {}))
        tier1_hits = get_t1()
        (scored, known), skill_hits = get_t2(), get_sk()
        first, second = answer.lessons(run, tier1_hits, scored, known)
        skill_items = answer.skill_items(skill_hits, {i["sha"] for i in first + second})
        refs = []
        if budgeting.tokens_of(first + second + skill_items, run.count) < req.budget:
            refs = answer.references(get_t3()[0])
        sections = budgeting.Sections(first, second, skill_items, refs)
        budget = budgeting.apply(sections, req.budget, run.count)
    finally:
        run.cancel()
        engine.vault.deferred.start()   # occurrences logged by tier 1, applied after
    body = answer.body(run, tool, tier1_hits.info, sections, budget)
    if log_line:
        answer.log_line(run, body, started)
        resident.of(engine.vault.store).answered.set()
    return body


def prepare(engine, req: Request) -> tuple[Run, str | None]:
    """A run with the request's signatures and query text; (run, the tool asked about)."""
    run = Run(engine, req)
    run.count = query.counter(engine, run)
    run.signatures = query.signatures(run)
    tool = req.tool or (run.signatures[0].tool if run.signatures else None)
    run.query = query.text(req, run.source, tool, run.signatures)
    run.fulltext = query.fulltext(req, run.source) or run.query
    return run, tool


def _scored(run: Run, levels: tuple, tool: str | None, bm25: dict) -> tuple[dict, dict]:
    """(sha -> scored candidate, sha -> its own sig_shas) over `levels`; `bm25`: the
    full-text searches per levels, started beside the embedding."""
    found = candidates.gather(run, levels, bm25[levels].result())
    scored = fusion.score_all(run, found, tool)
    run.count.prime([hit["row"].text for hit in scored.values() if hit["relevant"]])
    return scored, found.own_signatures


def _skills(run: Run) -> list[dict]:
    from .. import skills

    found = skills.match(run.engine.vault.path, run.query, run.vector,
                         query.embedder_or_none(run.engine))
    run.count.prime([hit["text"] for hit in found])
    return found


def warm(engine) -> None:
    """Load what a first answer needs (the model, tokenizers, the full-text index) by
    answering a request that records and logs nothing. The resident copies load on a
    thread of their own meanwhile; until they are in, the store answers."""
    threading.Thread(target=_prime, args=(engine,), name="poimen-copies",
                     daemon=True).start()
    lookup(engine, {"task": "warm up", "budget": 1}, log_line=False)


def _prime(engine) -> None:
    """The copies, the full-text one after the first answer (or FULL_TEXT_AFTER_S): its
    load (~0.7 s of CPU at the 10k bench vault, mostly holding the interpreter) beside
    the first answer made `mem lsp`'s cold start 2.0 -> 2.7 s."""
    try:
        copies = resident.of(engine.vault.store)
        copies.prime(full_text=False)
        copies.answered.wait(FULL_TEXT_AFTER_S)
        copies.prime()
    except Exception as exc:  # noqa: BLE001 - lookups fall back to the store
        log.warning("resident copies not loaded: %s", exc)
