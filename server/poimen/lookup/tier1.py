"""Tier 1: this failure happened here before: the same `sig_sha` ("exact"), or the same
tool, kind and normalised message raised through other frames or none ("same error":
a paste that cut the stack, or another caller), or a message sharing a clause key
("same message": a wrapper's or logger's context around it, `signatures.clauses`). The
match says which; a "same message" match is held to the loose rule below.

A signature is known when an earlier, different record carries it: evidence ingested
before, or a lesson. A loose signature (a last-resort rule's generic line, for tools no
rule knows) counts as seen, but its lessons are tier 1 only when the content agrees
(`Tier1.corroborate`: the fused order puts the lesson first, `answer.lessons`): the
same generic headline with different causes below it would otherwise be a confident
wrong answer. The evidence the request's own source was just recorded as
(`evidence_sha`, as `mem run` and the language server send it) is this occurrence,
not an earlier one: it neither makes the failure known nor counts as seen, and no
occurrence record is added for it. Otherwise each hit signature appends one occurrence
record keyed by `request_id` (a retry counts once), logged durably before the answer
and applied to the tables in the background (`poimen.deferred`).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..signatures.clauses import clause_keys
from ..store import LESSON_LEVELS
from .run import Run

SAME_MESSAGE = "same message"   # a clause match: known, but tier 1 only where content agrees


@dataclass
class Tier1:
    """Signature hits: per-signature info, [(memory sha, signature index, seen, last
    seen, "exact" | "same error")], the hit memories a loose signature alone found
    (tier 1 only if the fused order agrees), and the hit memories' rows and stored text
    vectors."""

    info: list = field(default_factory=list)
    hits: list = field(default_factory=list)
    corroborate: set = field(default_factory=set)
    rows: dict = field(default_factory=dict)
    vectors: dict = field(default_factory=dict)


def tier1(run: Run, signatures) -> Tier1:
    """Tier-1 hits; fetches the hit memories here, beside the query embedding."""
    matches = _matches(run, signatures)
    known = sorted({ln.sig_sha for links, _ in matches.values() for ln in links})
    if run.req.evidence_sha is None:
        _record_occurrences(run, known)
    seen = run.store.seen_many(known, without=run.req.evidence_sha,
                               pending=run.engine.vault.deferred.pending())
    info, hits, loose, strong = [], [], set(), set()
    for index, sig in enumerate(signatures):
        links, how = matches.get(sig.sig_sha, ([], None))
        entry = {"sig_sha": sig.sig_sha, "tool": sig.tool, "kind": sig.kind,
                 "rule": sig.rule, "message": sig.message, "known": bool(links),
                 "loose": sig.loose}
        if links:
            count, last = max(seen[sha] for sha in {ln.sig_sha for ln in links})
            lessons = [ln for ln in links if ln.level in LESSON_LEVELS]
            entry.update(match=how, seen_count=count, last_seen=last, lessons=len(lessons))
            hits += [(ln.memory_sha, index, count, last, how) for ln in lessons]
            if sig.loose or how == SAME_MESSAGE:
                loose |= {ln.memory_sha for ln in lessons}
            else:
                strong |= {ln.memory_sha for ln in lessons}
        info.append(entry)
    shas = list(dict.fromkeys(sha for sha, *_ in hits))
    rows = run.store.memories(shas)
    run.count.prime([row.text for row in rows.values()])
    return Tier1(info, hits, loose - strong, rows, run.store.vectors_of(shas, "text"))


def _matches(run: Run, signatures) -> dict[str, tuple[list, str]]:
    """sig_sha -> (links, "exact" | "same error" | "same message"): the stored signature
    itself, else the same tool, kind and normalised message with other frames (or none),
    else a message sharing a clause key with it (`clause_keys`), whatever the rule."""
    def usable(links):
        return [ln for ln in links if ln.memory_sha != run.req.evidence_sha and (
            run.req.scope != "project" or ln.project == run.req.project)]

    exact = run.store.signature_links_many([sig.sig_sha for sig in signatures])
    out = {sha: (usable(links), "exact") for sha, links in exact.items() if usable(links)}
    rest = [sig for sig in signatures if sig.sig_sha not in out]
    same = run.store.same_error_links([(sig.family, sig.message) for sig in rest])
    for sig in rest:
        links = usable(same.get((sig.family, sig.message), []))
        if links:
            out[sig.sig_sha] = (links, "same error")
    rest = [sig for sig in rest if sig.sig_sha not in out]
    keys = {sig.sig_sha: clause_keys(sig.message) for sig in rest}
    clauses = run.store.clause_links([k for sig_keys in keys.values() for k in sig_keys])
    for sig in rest:
        links = usable([ln for key in keys[sig.sig_sha] for ln in clauses.get(key, [])])
        if links:
            out[sig.sig_sha] = (list(dict.fromkeys(links)), SAME_MESSAGE)
    return out


def _record_occurrences(run: Run, sig_shas: list[str]) -> None:
    if not sig_shas:
        return
    try:
        run.fault("occurrence")
        run.engine.record_occurrences(sig_shas, run.req.project, run.req.request_id,
                                      later=True)
    except Exception as exc:  # noqa: BLE001 - the answer stands without the count
        run.degraded.append(f"occurrence: not recorded ({type(exc).__name__}: {exc})")
