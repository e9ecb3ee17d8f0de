"""The answer: scored candidates become tier-labelled items, then the response body.

Tier-1 lessons first (signature order, then rerank), then tier-2 lessons, skills and
references, each list by rerank; a superseded hit is replaced by its successor
(`successor_of`), and a memory appears once, at its best tier.
"""

from __future__ import annotations

import json
import logging
import time

import numpy as np

from .run import Run
from .similarity import trigram_similarity, trigrams
from .tier1 import LESSON_LEVELS, SAME_MESSAGE, Tier1

log = logging.getLogger("poimen.context")

TIER2_LIMIT = 8
TIER3_LIMIT = 4
ROUND = 4


def r(x: float | None) -> float | None:
    return None if x is None else round(float(x), ROUND)


def lessons(run: Run, tier1: Tier1, scored: dict, seen_known: dict) -> tuple[list, list]:
    """Tier-1 and tier-2 lesson items, superseded memories replaced by successors."""
    store = run.store
    first, placed = [], {}
    agreed = _fused_first(scored)
    for sha, index, seen, last, how in tier1.hits:
        if sha in tier1.corroborate and sha != agreed:
            continue
        live, old = _live(store, tier1.rows.get(sha), sha)
        if live is None or live.sha in placed:
            continue
        hit = scored.get(sha) or scored.get(live.sha) or {}
        item = _item(1, live, hit, "signature", old)
        item.update(seen_count=seen, last_seen=last, signature_rank=index, match=how)
        placed[live.sha] = item
        first.append(item)
    _direct_scores(run, [item for item in first if "score" not in item], tier1.vectors)
    second = []
    for sha, hit in sorted(scored.items(), key=lambda kv: (-kv[1]["rerank"], kv[0])):
        if not hit["relevant"]:
            continue
        live, old = _live(store, hit["row"], sha)
        if live is None or live.sha in placed or live.level not in LESSON_LEVELS:
            continue
        item = _item(2, live, hit, hit["matched_kind"], old)
        placed[live.sha] = item
        second.append(item)
        if len(second) == TIER2_LIMIT:
            break
    seen = seen_of(store, [i["sha"] for i in second], seen_known,
                   run.engine.vault.deferred.pending())
    for item in second:
        item["seen_count"], item["last_seen"] = seen[item["sha"]]
    first.sort(key=lambda i: (i.pop("signature_rank"), -i["rerank"], i["sha"]))
    return first, second


def _fused_first(scored: dict) -> str | None:
    """The lesson the fused order puts first among the answers, if any."""
    answers = [(hit["rerank"], sha) for sha, hit in scored.items()
               if hit["relevant"] and hit["row"].level in LESSON_LEVELS]
    return min(answers, key=lambda a: (-a[0], a[1]))[1] if answers else None


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
            "score": r(hit.get("score")), "rerank": r(hit.get("rerank", 0.0)),
            "scores": {k: r(v) for k, v in sorted(hit.get("scores", {}).items())},
            "matched_kind": matched_kind, "parents": list(row.parents),
            "seen_count": 0, "last_seen": None}
    if successor_of:
        item["successor_of"] = successor_of
    if item["score"] is None:
        del item["score"]
    return item


def _direct_scores(run: Run, items: list[dict], stored: dict) -> None:
    """Tier-1 memories' cosines to the query when tier 2 did not see them, from their
    stored text vectors (embedded only when a vector is missing)."""
    if not items:
        return
    if run.vector is None:
        query = trigrams(run.query)
        for item in items:
            item["score"] = r(trigram_similarity(query, trigrams(item["text"])))
        return
    missing = [item["sha"] for item in items if item["sha"] not in stored]
    stored = dict(stored, **run.store.vectors_of(missing, "text"))
    for item in items:
        vector = stored.get(item["sha"])
        if vector is None:
            vector = run.engine.embedder.embed_one(item["text"])
        item["score"] = r(float(np.dot(run.vector, vector)))


def seen_of(store, shas: list[str], known: dict[str, set[str]], pending: dict
            ) -> dict[str, tuple[int, str | None]]:
    """(seen_count, last_seen) of lessons by their best-known signature; (0, None)
    without one. `known`: the signatures of memories the candidates already read;
    `pending`: occurrences logged but maybe not applied (`Store.occurrence_times`)."""
    if not shas:
        return {}
    by_memory = {sha: known[sha] for sha in shas if sha in known}
    for row in store.signatures_of([sha for sha in shas if sha not in known]):
        by_memory.setdefault(row["memory_sha"], set()).add(row["sig_sha"])
    seen_of_sig = store.seen_many(sorted(set().union(*by_memory.values())),
                                  pending=pending) if by_memory else {}
    out = {}
    for sha in shas:
        best = (0, None)
        for sig_sha in sorted(by_memory.get(sha, ())):
            seen, last = seen_of_sig[sig_sha]
            if (seen, last or "") > (best[0], best[1] or ""):
                best = (seen, last)
        out[sha] = best
    return out


def skill_items(hits: list[dict], lesson_shas: set[str]) -> list[dict]:
    """Skills that matched the request or were drawn from a returned lesson."""
    items = []
    for hit in hits:
        via = sorted(set(hit["sources"]) & lesson_shas)
        if hit["relevant"] or via:
            items.append({"tier": 2, "level": "skill", "sha": hit["sha"],
                          "name": hit["name"], "text": hit["text"],
                          "score": r(hit["score"]), "matched_kind": hit["matched_kind"],
                          "sources": hit["sources"], "via": via,
                          "rerank": r(hit["score"] + (1.0 if via else 0.0))})
    items.sort(key=lambda i: (-i["rerank"], i["sha"]))
    return items


def references(scored: dict) -> list[dict]:
    """Tier-3 items: relevant R chunks, best first, at most TIER3_LIMIT."""
    items = []
    for sha, hit in sorted(scored.items(), key=lambda kv: (-kv[1]["rerank"], kv[0])):
        if hit["relevant"] and hit["row"].level == "R":
            item = _item(3, hit["row"], hit, hit["matched_kind"], None)
            item["heading"] = hit["row"].meta.get("heading")
            item["path"] = hit["row"].meta.get("path")
            items.append(item)
        if len(items) == TIER3_LIMIT:
            break
    return items


def body(run: Run, tool, sig_info, sections, budget) -> dict:
    found = sections.tier1 + sections.tier2
    tiers = [i["tier"] for i in found + sections.skills + sections.references]
    if any(s["known"] and not s["loose"] and s["match"] != SAME_MESSAGE for s in sig_info):
        tiers.append(1)
    return {"tier": min(tiers) if tiers else None, "tool": tool,
            "tool_inferred": run.req.tool is None and tool is not None,
            "project": run.req.project, "scope": run.req.scope,
            "signatures": sig_info, "lessons": found, "skills": sections.skills,
            "references": sections.references, "budget": budget,
            "degraded": sorted(set(run.degraded))}


def log_line(run: Run, answer: dict, started: float) -> None:
    log.info(json.dumps({
        "event": "context", "tier": answer["tier"], "scope": run.req.scope,
        "tiers": {"1": len([i for i in answer["lessons"] if i["tier"] == 1]),
                  "2": len([i for i in answer["lessons"] if i["tier"] == 2]),
                  "3": len(answer["references"]), "skills": len(answer["skills"])},
        "scores": [[i["tier"], i["sha"][:12], i.get("score"), i["rerank"]]
                   for i in answer["lessons"] + answer["references"]],
        "latency_ms": dict(run.latency, total=round((time.perf_counter() - started)
                                                    * 1000, 1)),
        "dropped": [[d["section"], d["sha"][:12]] for d in answer["budget"]["dropped"]],
        "degraded": answer["degraded"]}, sort_keys=True))
