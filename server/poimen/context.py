"""The three-tier context lookup: "what do we already know about this failure?".

Tier 1 is an exact `sig_sha` hit (this failure happened before); tier 2 is similarity
over symptom and text vectors plus full text, fused with LanceDB's RRF reranker;
tier 3 is the R reference corpus, searched only when tiers 1-2 leave budget unfilled.
The skills leg runs beside tier 2. Every leg runs under a timeout; a failing leg
answers empty with a `degraded` note, never an error. Ordering is by tier, then
rerank; raw scores are exposed beside the rerank. See docs/CONTEXT.md.
"""

from __future__ import annotations

import json
import logging
import threading
import time
from concurrent.futures import ThreadPoolExecutor, TimeoutError as LegTimeout
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Callable

import numpy as np

from . import budget as budgeting
from . import resident
from .canonical import canonical
from .config import DEFAULT_LEG_TIMEOUT_S

log = logging.getLogger("poimen.context")

LESSON_LEVELS = ("L1", "L2")
SCOPES = ("project", "all-projects")
MAX_SOURCE_CHARS = 1_000_000
MAX_BUDGET = 100_000
SEARCH_LIMIT = 30
TIER2_LIMIT = 8
TIER3_LIMIT = 4
TIER2_MIN_SIMILARITY = 0.45   # cosine (symptom or text) a tier-2 lesson must reach
PROSE_MIN_SIMILARITY = 0.40   # the same floor for a request with no failure signature
TIER2_STRONG = 0.75           # cosine that stands without a near-identical signature
NEAR_SIGNATURE = 0.55         # trigram Dice of normalised messages (same family)
TIER3_MIN_SIMILARITY = 0.40   # cosine a reference chunk must reach
TRIGRAM_MIN = 0.20            # degraded mode: trigram Dice a hit must reach
TRIGRAM_STRONG = 0.50         # degraded mode: Dice that stands without a signature
PROJECT_BOOST = 0.5 / 61      # half a top RRF place, for a same-project memory
RRF_K = 60
EMBED_TIMEOUT_S = 10.0
ROUND = 4


class BadContextRequest(ValueError):
    """The request cannot be answered as asked (the reason says why)."""


class LegFault(RuntimeError):
    """A failure injected into a leg through `Settings.fault_injection`."""


@dataclass(frozen=True)
class Request:
    tool: str | None
    task: str | None
    signature_source: str | None
    project: str
    scope: str
    budget: int
    request_id: str | None


def parse_request(raw: dict, default_project: str, default_budget: int) -> Request:
    """Validate a request dict; raises BadContextRequest with the reason."""
    if not isinstance(raw, dict):
        raise BadContextRequest("the request must be a JSON object")
    known = {"tool", "task", "signature_source", "project", "scope", "budget",
             "request_id"}
    unknown = sorted(set(raw) - known)
    if unknown:
        raise BadContextRequest(f"unknown field(s): {', '.join(unknown)}")
    text = {}
    for name in ("tool", "task", "signature_source", "project", "scope", "request_id"):
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
                   scope, limit, text["request_id"] or None)


def encode_body(body: dict) -> bytes:
    """The response bytes: canonical JSON, so identical answers are identical bytes."""
    return canonical(body).encode("utf-8")


# -- similarity helpers -------------------------------------------------------------

def trigrams(text: str) -> set[str]:
    t = " ".join(text.lower().split())
    return {t[i:i + 3] for i in range(max(len(t) - 2, 0))}


def trigram_similarity(a: set[str], b: set[str]) -> float:
    """Dice coefficient of two trigram sets."""
    return 2 * len(a & b) / (len(a) + len(b)) if a and b else 0.0


def rrf(ranked_lists: list[list[str]]) -> dict[str, float]:
    """Reciprocal-rank fusion of ranked sha lists: LanceDB's `RRFReranker` arithmetic
    (sum of 1 / (rank + K) per list, in list order, kept as float32), without building
    the Arrow tables it needs (that was ~3 ms a call)."""
    fused: dict[str, float] = {}
    for shas in ranked_lists:
        for rank, sha in enumerate(shas, 1):
            fused[sha] = fused.get(sha, 0.0) + 1 / (rank + RRF_K)
    return {sha: float(np.float32(score)) for sha, score in fused.items()}


def _r(x: float | None) -> float | None:
    return None if x is None else round(float(x), ROUND)


# -- the lookup ---------------------------------------------------------------------

class _Run:
    """One lookup: the request, the engine's parts, notes and timings."""

    def __init__(self, engine, req: Request):
        self.engine, self.req = engine, req
        self.store = resident.of(engine.vault.store)
        self.settings = engine.settings
        self.faults = dict(getattr(self.settings, "fault_injection", {}) or {})
        self.timeout = float(getattr(self.settings, "leg_timeout_s", DEFAULT_LEG_TIMEOUT_S))
        self.degraded: list[str] = []
        self.latency: dict[str, float] = {}
        self.vector: np.ndarray | None = None
        self.query = ""
        self.signatures: list = []
        self.source = ""          # the redacted signature_source
        self.count: budgeting.TokenCounter | None = None

    def fault(self, leg: str) -> None:
        mode = self.faults.get(leg)
        if not mode:
            return
        if mode.startswith("delay:"):
            time.sleep(float(mode.split(":", 1)[1]))
        else:
            raise LegFault(f"injected fault in {leg}")

    def leg(self, name: str, fn: Callable, pool: ThreadPoolExecutor, empty):
        """Run `fn` as a leg; returns a getter that waits (with the timeout)."""
        start = time.perf_counter()

        def body():
            self.fault(name)
            return fn()

        future = pool.submit(body)

        def result(timeout: float | None = None):
            limit = self.timeout if timeout is None else timeout
            try:
                return future.result(timeout=limit)
            except LegTimeout:
                self.degraded.append(f"{name}: timed out after {limit:g}s")
            except Exception as exc:  # noqa: BLE001 - a leg's failure is never the caller's
                self.degraded.append(f"{name}: failed ({type(exc).__name__}: {exc})")
            finally:
                self.latency[name] = round((time.perf_counter() - start) * 1000, 1)
            return empty

        return result


def lookup(engine, request: dict, log_line: bool = True) -> dict:
    """Answer one context request; the dict is exactly the HTTP response body."""
    req = parse_request(request, engine.project,
                        int(getattr(engine.settings, "budget", 1200)))
    started = time.perf_counter()
    engine.vault.catch_up()   # see what other processes (`mem remember`, …) wrote
    run = _Run(engine, req)
    run.count = _counter(engine, run)
    signatures = _signatures(run)
    run.signatures = signatures
    tool = req.tool or (signatures[0].tool if signatures else None)
    run.query = _query_text(req, run.source, tool, signatures)
    pool = ThreadPoolExecutor(max_workers=4, thread_name_prefix="poimen-leg")
    try:
        get_t1 = run.leg("tier1", lambda: _tier1(run, signatures), pool, Tier1())
        get_vector = run.leg("embedder", lambda: _embed_query(run), pool, None)
        run.vector = get_vector(max(run.timeout, EMBED_TIMEOUT_S))
        if run.vector is None and run.query:
            run.degraded.append("tier2: embedder unavailable, full-text + trigram only")
        get_t2 = run.leg("tier2", lambda: _tier2(run, LESSON_LEVELS),
                         pool, Hits())
        get_sk = run.leg("skills", lambda: _skills_leg(run), pool, [])
        # tier 3 starts beside tier 2, but its answer is taken only if budget is left
        get_t3 = run.leg("tier3", lambda: _tier2(run, ("R",)), pool, Hits())
        tier1_hits = get_t1()
        tier2_hits, skill_hits = get_t2(), get_sk()
        tier1, tier2 = _assemble_lessons(run, tier1_hits, tier2_hits)
        skill_items = _skill_items(skill_hits, {i["sha"] for i in tier1 + tier2})
        count = run.count
        tier3_hits = Hits()
        if budgeting.tokens_of(tier1 + tier2 + skill_items, count) < req.budget:
            tier3_hits = get_t3()
        references = _references(tier3_hits.found)
        _rerank_jointly(run, [tier2_hits, tier3_hits], tier1 + tier2 + references)
        tier1.sort(key=lambda i: (i.pop("signature_rank"), -i["rerank"], i["sha"]))
        for items in (tier2, references):
            items.sort(key=lambda i: (-i["rerank"], i["sha"]))
        sections = budgeting.Sections(tier1, tier2, skill_items, references)
        budget = budgeting.apply(sections, req.budget, count)
    finally:
        pool.shutdown(wait=False, cancel_futures=True)
    body = _body(run, tool, tier1_hits.info, sections, budget)
    if log_line:
        _log_line(run, body, started)
    return body


def warm(engine) -> None:
    """Load what a first answer needs (the model, tokenizers, the full-text index) by
    answering a request that records and logs nothing. The resident copies load on a
    thread of their own meanwhile; until they are in, the store answers."""
    threading.Thread(target=_prime, args=(engine,), name="poimen-copies",
                     daemon=True).start()
    lookup(engine, {"task": "warm up", "budget": 1}, log_line=False)


def _prime(engine) -> None:
    try:
        resident.of(engine.vault.store).prime()
    except Exception as exc:  # noqa: BLE001 - lookups fall back to the store
        log.warning("resident copies not loaded: %s", exc)


def _skills_leg(run: _Run) -> list[dict]:
    from . import skills

    found = skills.match(run.engine.vault.path, run.query, run.vector,
                         _embedder_or_none(run.engine))
    run.count.prime([hit["text"] for hit in found])
    return found


def _rerank_jointly(run: _Run, legs: list[Hits], items: list[dict]) -> None:
    """One rerank scale for every returned item: RRF over the hybrid lists of all
    legs together (merged by raw score), plus the project boost."""
    fused = rrf(Hits.merged(legs).ranked())
    for item in items:
        base = max(fused.get(item["sha"], 0.0), fused.get(item.get("successor_of", ""), 0.0))
        item["rerank"] = _r(base + _boost(run, item["project"]))


def _embedder_or_none(engine):
    from .embed import EmbedderUnavailable

    try:
        return engine.embedder
    except EmbedderUnavailable:
        return None


def _embed_query(run: _Run):
    from .embed import EmbedderUnavailable

    embedder = _embedder_or_none(run.engine)
    if embedder is None or not run.query:
        return None
    try:
        return embedder.embed_one(run.query)
    except EmbedderUnavailable:
        return None


def _counter(engine, run: _Run):
    embedder = _embedder_or_none(engine)
    if embedder is not None:
        path = embedder.tokenizer_path
    else:
        from .embed import EmbedderConfig, EmbedderUnavailable, default_tokenizer_path
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


def _signatures(run: _Run):
    """The request's failure signatures, extracted from the redacted source (stored
    evidence is redacted before extraction, so the hashes must see the same text)."""
    if not run.req.signature_source:
        return []
    from .redact import redact
    from .signatures import extract

    try:
        run.source = redact(run.req.signature_source).text
        return extract(run.source, tool=run.req.tool)
    except Exception as exc:  # noqa: BLE001 - an extractor bug degrades, never fails
        run.degraded.append(f"signatures: failed ({type(exc).__name__}: {exc})")
        return []


def _query_text(req: Request, source: str, tool: str | None, signatures) -> str:
    parts = [req.task] if req.task else []
    if signatures:
        parts += list(dict.fromkeys(s.excerpt for s in signatures[:3]))
    elif source:
        parts.append(source.strip()[:4000])
    if not parts and tool:
        parts.append(tool)
    return "\n".join(p for p in parts if p)


@dataclass
class Tier1:
    """Exact signature hits: per-signature info, [(memory sha, signature index, seen,
    last seen)], and the hit memories' rows and stored text vectors."""

    info: list = field(default_factory=list)
    hits: list = field(default_factory=list)
    rows: dict = field(default_factory=dict)
    vectors: dict = field(default_factory=dict)


def _tier1(run: _Run, signatures) -> Tier1:
    """Tier-1 hits; records one occurrence per hit signature, keyed by request_id.
    Fetches the hit memories here, beside the query embedding, not after it."""
    by_sig = run.store.signature_links_many([sig.sig_sha for sig in signatures])
    if run.req.scope == "project":
        by_sig = {sha: [ln for ln in links if ln.project == run.req.project]
                  for sha, links in by_sig.items()}
    known = [sig.sig_sha for sig in signatures if by_sig.get(sig.sig_sha)]
    _record_occurrences(run, known)
    seen = run.store.seen_many(known)
    info, hits = [], []
    for index, sig in enumerate(signatures):
        links = by_sig.get(sig.sig_sha, [])
        entry = {"sig_sha": sig.sig_sha, "tool": sig.tool, "kind": sig.kind,
                 "rule": sig.rule, "message": sig.message, "known": bool(links)}
        if links:
            count, last = seen[sig.sig_sha]
            entry.update(seen_count=count, last_seen=last)
            hits += [(ln.memory_sha, index, count, last) for ln in links
                     if ln.level in LESSON_LEVELS]
        info.append(entry)
    shas = [sha for sha, *_ in hits]
    rows = run.store.memories(shas)
    run.count.prime([row.text for row in rows.values()])
    return Tier1(info, hits, rows, run.store.vectors_of(shas, "text"))


def _record_occurrences(run: _Run, sig_shas: list[str]) -> None:
    if not sig_shas:
        return
    try:
        run.fault("occurrence")
        run.engine.record_occurrences(sig_shas, run.req.project, run.req.request_id)
    except Exception as exc:  # noqa: BLE001 - the answer stands without the count
        run.degraded.append(f"occurrence: not recorded ({type(exc).__name__}: {exc})")


def _tier2(run: _Run, levels) -> Hits:
    """Similarity hits over `levels` (superseded included, so successors surface)."""
    store, q = run.store, run.query
    hits = Hits(prose=not run.signatures)
    if not q:
        return hits
    if run.vector is not None:
        kinds = ("symptom", "text") if levels == LESSON_LEVELS else ("text",)
        for kind in kinds:
            hits.add(kind, [(h.memory_sha, h.score) for h in store.search_vectors(
                run.vector, kind=kind, limit=SEARCH_LIMIT, levels=levels,
                include_superseded=True)])
        if hits.prose and levels == LESSON_LEVELS:
            _complete_views(store, run.vector, hits)
    hits.add("fulltext", [(h.memory_sha, h.score) for h in store.search_fulltext(
        q, limit=SEARCH_LIMIT, levels=levels, include_superseded=True)])
    if run.vector is None:
        hits.add("trigram", _trigram_hits(run, levels))
    fused = rrf(hits.ranked())
    rows = store.memories(list(hits.scores))
    linked = _linked_messages(store, rows, hits.signatures) if run.signatures else {}
    for sha, sc in hits.scores.items():
        row = rows.get(sha)
        if row is None or (levels == LESSON_LEVELS and run.req.scope == "project"
                           and row.project != run.req.project):
            continue
        kind, best = _matched(sc)
        hits.found[sha] = {"scores": sc, "score": best, "matched_kind": kind, "row": row,
                           "rerank": fused.get(sha, 0.0) + _boost(run, row.project),
                           "relevant": _relevant(run, levels, best,
                                                 linked.get(sha, set()))}
    relevant = [sha for sha, hit in hits.found.items() if hit["relevant"]]
    run.count.prime([hits.found[sha]["row"].text for sha in relevant])
    if levels == LESSON_LEVELS:
        hits.seen = _seen_of(store, relevant, hits.signatures)
    return hits


def _complete_views(store, vector: np.ndarray, hits: "Hits") -> None:
    """Exact cosines of every candidate's stored views that its searches did not reach
    (a view outside one search's top SEARCH_LIMIT is weak, not absent)."""
    missing = {sha for sha, sc in hits.scores.items()
               if not {"symptom", "text"} <= set(sc)}
    if not missing:
        return
    extra: dict[str, list[tuple[str, float]]] = {}
    for kind in ("symptom", "text"):
        for sha, stored in sorted(store.vectors_of(sorted(missing), kind).items()):
            if kind not in hits.scores[sha]:
                cos = round(float(np.dot(vector, stored)), 6)
                extra.setdefault(kind, []).append((sha, cos))
    for kind, ranked in sorted(extra.items()):
        hits.add(kind, hits.lists.get(kind, []) + sorted(ranked, key=lambda x: (-x[1], x[0])))


class Hits:
    """One similarity leg's ranked lists (kind -> [(sha, raw score)]) and its finds.

    `prose`: the request carried no failure signature (a symptom described in words),
    so a memory's views are averaged rather than the best one taken; see ranked()."""

    def __init__(self, prose: bool = False):
        self.prose = prose
        self.lists: dict[str, list[tuple[str, float]]] = {}
        self.scores: dict[str, dict[str, float]] = {}
        self.found: dict[str, dict] = {}
        self.signatures: dict[str, set[str]] = {}   # memory sha -> its own sig_shas
        self.seen: dict[str, tuple[int, str | None]] = {}   # of the relevant finds

    def add(self, kind: str, ranked: list[tuple[str, float]]) -> None:
        self.lists[kind] = ranked
        for sha, score in ranked:
            self.scores.setdefault(sha, {})[kind] = score

    def ranked(self) -> list[list[str]]:
        """The rankings RRF fuses: one list by each memory's vector score when there
        are vectors; full text and trigrams when degraded. The vector score is the best
        cosine (symptom or text) for a failure paste, whose error text meets the
        symptom view; for prose it is the mean of the memory's views, since a worded
        symptom half-matches both (dev set through the full lookup, see
        bench/bench_tier2.py). Full text is not fused beside vectors: lessons avoid
        the error's own words, and fusing BM25 cut recurrence MRR from 0.89 to 0.65."""
        views: dict[str, list[float]] = {}
        for kind in ("symptom", "text"):
            for sha, score in self.lists.get(kind, ()):
                views.setdefault(sha, []).append(score)
        vector = {sha: (sum(v) / len(v) if self.prose else max(v))
                  for sha, v in views.items()}
        lists = [sorted(vector.items(), key=lambda x: (-x[1], x[0]))] if vector else \
            [sorted(self.lists[k], key=lambda x: (-x[1], x[0]))
             for k in ("fulltext", "trigram") if k in self.lists]
        return [[sha for sha, _ in ranked] for ranked in lists if ranked]

    @classmethod
    def merged(cls, legs: list["Hits"]) -> "Hits":
        out = cls(prose=any(hits.prose for hits in legs))
        for hits in legs:
            for kind, ranked in hits.lists.items():
                out.lists.setdefault(kind, []).extend(ranked)
        return out


def _boost(run: _Run, project: str) -> float:
    """Project match is a rank boost, not a filter."""
    return PROJECT_BOOST if project == run.req.project else 0.0


def _linked_messages(store, rows: dict, own: dict[str, set[str]]
                     ) -> dict[str, set[tuple[str, str]]]:
    """(family, normalised message) of the signatures each memory is linked to; an L2
    inherits those of the lessons it generalises (up to three levels up). Fills `own`
    with each memory's own sig_shas (rows read anyway, reused for seen counts)."""
    sources = {sha: {sha} for sha in rows}
    pending = {sha: set(row.parents) for sha, row in rows.items() if row.level == "L2"}
    for _ in range(3):
        if not pending:
            break
        parents = store.memories(sorted({p for ps in pending.values() for p in ps}))
        for sha, ps in pending.items():
            sources[sha] |= ps
        pending = {sha: {g for p in ps if p in parents and parents[p].level == "L2"
                         for g in parents[p].parents} for sha, ps in pending.items()}
        pending = {sha: ps for sha, ps in pending.items() if ps}
    by_memory: dict[str, set[tuple[str, str]]] = {}
    own.update({sha: set() for sha in rows})
    for row in store.signatures_of(sorted({s for ss in sources.values() for s in ss})):
        by_memory.setdefault(row["memory_sha"], set()).add((row["family"], row["message"]))
        if row["memory_sha"] in own:
            own[row["memory_sha"]].add(row["sig_sha"])
    return {sha: set().union(*(by_memory.get(s, set()) for s in ss))
            for sha, ss in sources.items()}


def _near_signature(run: _Run, linked: set[tuple[str, str]]) -> bool:
    """Same family (tool + kind) and nearly the same normalised message as one of the
    request's signatures: the same failure worded by another version or path."""
    return any(family == sig.family and trigram_similarity(
        trigrams(message), trigrams(sig.message)) >= NEAR_SIGNATURE
        for sig in run.signatures for family, message in linked)


def _relevant(run: _Run, levels, best: float, linked: set[tuple[str, str]]) -> bool:
    """Whether a similarity hit is an answer, not just the nearest neighbour.

    References: cosine >= TIER3_MIN (trigram Dice >= TRIGRAM_MIN when degraded).
    Lessons: cosine >= TIER2_MIN (Dice >= TRIGRAM_MIN); and when the request carried
    failure signatures, the lesson must be linked to a near-identical signature
    unless its score is strong. In a crowded vault every error has same-domain
    neighbours near 0.6 cosine (sharing generic families such as `nginx:error`),
    and an unknown failure must fall through to tier 3.
    """
    floor, strong = (TRIGRAM_MIN, TRIGRAM_STRONG) if run.vector is None else \
        (PROSE_MIN_SIMILARITY if not run.signatures else TIER2_MIN_SIMILARITY,
         TIER2_STRONG)
    if levels != LESSON_LEVELS:
        return best >= (TRIGRAM_MIN if run.vector is None else TIER3_MIN_SIMILARITY)
    if best < floor:
        return False
    return not run.signatures or best >= strong or _near_signature(run, linked)


def _matched(scores: dict) -> tuple[str, float]:
    """The kind that matched best and its raw score (cosine, or trigram Dice)."""
    for group in (("symptom", "text"), ("trigram",)):
        present = [(scores[k], k) for k in group if k in scores]
        if present:
            best, kind = max(present)
            return kind, best
    return "fulltext", 0.0


def _trigram_hits(run: _Run, levels) -> list[tuple[str, float]]:
    """Degraded tier 2: trigram Dice of the query against memory + symptom text."""
    query = trigrams(run.query)
    symptoms = {}
    if levels == LESSON_LEVELS:
        symptoms = {r["memory_sha"]: r["text"] for r in run.store.dump("projections")}
    scored = []
    for row in run.store.all_memories(levels):
        text = row.text + "\n" + symptoms.get(row.sha, "")
        scored.append((row.sha, round(trigram_similarity(query, trigrams(text)), 6)))
    scored.sort(key=lambda x: (-x[1], x[0]))
    return scored[:SEARCH_LIMIT]


def _assemble_lessons(run: _Run, tier1_hits: Tier1, tier2_hits: "Hits"
                      ) -> tuple[list, list]:
    """Tier-1 and tier-2 lesson items, superseded memories replaced by successors."""
    store, tier2 = run.store, tier2_hits.found
    tier1, placed = [], {}
    for sha, index, seen, last in tier1_hits.hits:
        live, old = _live(store, tier1_hits.rows.get(sha), sha)
        if live is None or live.sha in placed:
            continue
        hit = tier2.get(sha) or tier2.get(live.sha) or {}
        item = _item(1, live, hit, "signature", old)
        item.update(seen_count=seen, last_seen=last, signature_rank=index)
        placed[live.sha] = item
        tier1.append(item)
    _direct_scores(run, [item for item in tier1 if "score" not in item],
                   tier1_hits.vectors)
    tier2_items = []
    for sha, hit in sorted(tier2.items(), key=lambda kv: (-kv[1]["rerank"], kv[0])):
        if not hit["relevant"]:
            continue
        live, old = _live(store, hit["row"], sha)
        if live is None or live.sha in placed or live.level not in LESSON_LEVELS:
            continue
        item = _item(2, live, hit, hit["matched_kind"], old)
        placed[live.sha] = item
        tier2_items.append(item)
        if len(tier2_items) == TIER2_LIMIT:
            break
    seen = dict(tier2_hits.seen)
    seen.update(_seen_of(store, [i["sha"] for i in tier2_items if i["sha"] not in seen],
                         tier2_hits.signatures))
    for item in tier2_items:
        item["seen_count"], item["last_seen"] = seen[item["sha"]]
    return tier1, tier2_items


def _live(store, row, sha):
    """(live memory row, superseded sha or None) for a hit."""
    if row is None:
        return None, None
    if not row.superseded_by:
        return row, None
    successor = store.successor(sha)
    live = store.memories([successor]).get(successor) if successor else None
    if live is None or live.superseded_by:
        return None, None
    return live, sha


def _item(tier: int, row, hit: dict, matched_kind: str, successor_of: str | None) -> dict:
    item = {"tier": tier, "level": row.level, "sha": row.sha, "text": row.text,
            "project": row.project, "tool": row.tool or None,
            "score": _r(hit.get("score")), "rerank": _r(hit.get("rerank", 0.0)),
            "scores": {k: _r(v) for k, v in sorted(hit.get("scores", {}).items())},
            "matched_kind": matched_kind, "parents": list(row.parents),
            "seen_count": 0, "last_seen": None}
    if successor_of:
        item["successor_of"] = successor_of
    if item["score"] is None:
        del item["score"]
    return item


def _direct_scores(run: _Run, items: list[dict], stored: dict) -> None:
    """Tier-1 memories' cosines to the query when tier 2 did not see them, from their
    stored text vectors (embedded only when a vector is missing)."""
    if not items:
        return
    if run.vector is None:
        query = trigrams(run.query)
        for item in items:
            item["score"] = _r(trigram_similarity(query, trigrams(item["text"])))
        return
    missing = [item["sha"] for item in items if item["sha"] not in stored]
    stored = dict(stored, **run.store.vectors_of(missing, "text"))
    for item in items:
        vector = stored.get(item["sha"])
        if vector is None:
            vector = run.engine.embedder.embed_one(item["text"])
        item["score"] = _r(float(np.dot(run.vector, vector)))


def _seen_of(store, shas: list[str], known: dict[str, set[str]]
             ) -> dict[str, tuple[int, str | None]]:
    """(seen_count, last_seen) of lessons by their best-known signature; (0, None)
    without one. `known`: the signatures of memories tier 2 already read."""
    if not shas:
        return {}
    by_memory = {sha: known[sha] for sha in shas if sha in known}
    for row in store.signatures_of([sha for sha in shas if sha not in known]):
        by_memory.setdefault(row["memory_sha"], set()).add(row["sig_sha"])
    seen_of = store.seen_many(sorted(set().union(*by_memory.values())))
    out = {}
    for sha in shas:
        best = (0, None)
        for sig_sha in sorted(by_memory.get(sha, ())):
            seen, last = seen_of[sig_sha]
            if (seen, last or "") > (best[0], best[1] or ""):
                best = (seen, last)
        out[sha] = best
    return out


def _skill_items(hits: list[dict], lesson_shas: set[str]) -> list[dict]:
    """Skills that matched the request or were drawn from a returned lesson."""
    items = []
    for hit in hits:
        via = sorted(set(hit["sources"]) & lesson_shas)
        if hit["relevant"] or via:
            items.append({"tier": 2, "level": "skill", "sha": hit["sha"],
                          "name": hit["name"], "text": hit["text"],
                          "score": _r(hit["score"]), "matched_kind": hit["matched_kind"],
                          "sources": hit["sources"], "via": via,
                          "rerank": _r(hit["score"] + (1.0 if via else 0.0))})
    items.sort(key=lambda i: (-i["rerank"], i["sha"]))
    return items


def _references(found: dict) -> list[dict]:
    """Tier-3 items: relevant R chunks, best first, at most TIER3_LIMIT."""
    items = []
    for sha, hit in sorted(found.items(), key=lambda kv: (-kv[1]["rerank"], kv[0])):
        if hit["relevant"] and hit["row"].level == "R":
            item = _item(3, hit["row"], hit, hit["matched_kind"], None)
            item["heading"] = hit["row"].meta.get("heading")
            item["path"] = hit["row"].meta.get("path")
            items.append(item)
        if len(items) == TIER3_LIMIT:
            break
    return items


def _body(run: _Run, tool, sig_info, sections, budget) -> dict:
    lessons = sections.tier1 + sections.tier2
    tiers = [i["tier"] for i in lessons + sections.skills + sections.references]
    if any(s["known"] for s in sig_info):
        tiers.append(1)
    return {"tier": min(tiers) if tiers else None, "tool": tool,
            "tool_inferred": run.req.tool is None and tool is not None,
            "project": run.req.project, "scope": run.req.scope,
            "signatures": sig_info, "lessons": lessons, "skills": sections.skills,
            "references": sections.references, "budget": budget,
            "degraded": sorted(set(run.degraded))}


def _log_line(run: _Run, body: dict, started: float) -> None:
    log.info(json.dumps({
        "event": "context", "tier": body["tier"], "scope": run.req.scope,
        "tiers": {"1": len([i for i in body["lessons"] if i["tier"] == 1]),
                  "2": len([i for i in body["lessons"] if i["tier"] == 2]),
                  "3": len(body["references"]), "skills": len(body["skills"])},
        "scores": [[i["tier"], i["sha"][:12], i.get("score"), i["rerank"]]
                   for i in body["lessons"] + body["references"]],
        "latency_ms": dict(run.latency, total=round((time.perf_counter() - started)
                                                    * 1000, 1)),
        "dropped": [[d["section"], d["sha"][:12]] for d in body["budget"]["dropped"]],
        "degraded": body["degraded"]}, sort_keys=True))
