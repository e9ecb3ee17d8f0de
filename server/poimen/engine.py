"""The engine: the one facade the CLI, HTTP and LSP adapters call.

Write path: redact → derived filter → L0 + signatures → gate → log → symptom
projection → embed. Read path: `poimen.lookup`. No adapter imports here.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Sequence

import numpy as np

from . import resident
from .canonical import record_sha, sha256_text
from .config import Settings, default_project, default_vault
from .edge import SOURCES  # noqa: F401 - adapters import it from here
from .embed import Embedder, EmbedderUnavailable
from .gate import Verdict, judge
from .redact import redact
from .signatures import Signature, extract
from .team import open_vault
from .vault import projection_record



class InputError(ValueError):
    """A caller's mistake, worded for the caller."""


@dataclass
class IngestResult:
    evidence_sha: str | None
    signatures: list[Signature]
    derived: object | None = None
    redactions: tuple[tuple[str, int], ...] = ()
    new: bool = True

    def to_json(self) -> dict:
        return {"evidence_sha": self.evidence_sha, "new": self.new,
                "signatures": [signature_json(s) for s in self.signatures],
                "derived": derived_json(self.derived),
                "redactions": [{"kind": k, "count": n} for k, n in self.redactions]}


@dataclass
class RememberResult:
    sha: str | None
    verdict: str
    reason: str
    projection: dict | None = None
    redactions: tuple[tuple[str, int], ...] = ()

    def to_json(self) -> dict:
        return {"sha": self.sha, "verdict": self.verdict, "reason": self.reason,
                "projection": self.projection,
                "redactions": [{"kind": k, "count": n} for k, n in self.redactions]}


@dataclass
class Evidence:
    text: str | bytes
    source: str = "terminal"
    tool: str | None = None
    meta: dict | None = None


@dataclass
class Proposal:
    level: str
    text: str
    parents: Sequence[str] = ()
    supersedes: str | None = None
    without_evidence: bool = False
    project: str | None = None
    tool: str | None = None


def signature_json(sig: Signature) -> dict:
    return {"tool": sig.tool, "kind": sig.kind, "sig_sha": sig.sig_sha,
            "message": sig.message, "frames": list(sig.frames), "family": sig.family,
            "rule": sig.rule, "line": sig.line, "loose": sig.loose}


def extract_signatures(text: str | bytes, tool: str | None = None) -> list[Signature]:
    """A text's failure signatures, hashed from its redacted form (as stored evidence
    is); needs no vault, so adapters can parse before the store is open."""
    if isinstance(text, bytes):
        text = text.decode("utf-8", errors="replace")
    return extract(redact(text).text, tool=tool)


def derived_json(match) -> dict | None:
    return None if match is None else match.to_dict()


class Engine:
    def __init__(self, vault: str | Path | None = None, project: str | None = None,
                 settings: Settings | None = None, create: bool = True,
                 embedder: Embedder | None = None):
        """`embedder`: one already made (a server loads it while the vault opens)."""
        self.settings = settings or Settings.from_env()
        self.project = project or default_project()
        self._embedder: Embedder | None = embedder
        self._generator = None
        self._artifacts = None
        try:
            model_id = self.embedder.model_id
        except EmbedderUnavailable:
            model_id = ""
        self.vault = open_vault(vault or default_vault(), self._embed_texts,
                                model_id=model_id, reproject=self._reproject, create=create)

    # -- parts, loaded when first needed ------------------------------------------------
    @property
    def embedder(self) -> Embedder:
        if self._embedder is None:
            self._embedder = Embedder()
        return self._embedder

    def _embed_texts(self, texts: list[str]) -> np.ndarray:
        return self.embedder.embed(texts)

    @property
    def generator(self):
        if self._generator is None:
            from .symptoms import make_generator

            self._generator = make_generator(self.settings.generator, self.embedder)
        return self._generator

    @property
    def artifacts(self):
        if self._artifacts is None:
            from .derived import ArtifactIndex

            self._artifacts = ArtifactIndex.load(self.vault.path,
                                                 self.settings.derived_thresholds or None)
        return self._artifacts

    @property
    def store(self):
        return self.vault.store

    def _fresh_store(self, reading: bool = True):
        """The store after applying what other processes wrote (engines live for hours).
        `reading`: this process's own occurrences still waiting for the background apply
        are left to it (`Vault.catch_up`); only a count of the occurrences table needs
        them applied first."""
        self.vault.catch_up(reading=reading)
        return self.vault.store

    # -- write path ---------------------------------------------------------------
    def ingest(self, text: str | bytes, source: str = "terminal", tool: str | None = None,
               meta: dict | None = None) -> IngestResult:
        """Record L0 evidence (redacted); derived text is logged as excluded, not kept."""
        return self.ingest_many([Evidence(text, source, tool, meta)])[0]

    def ingest_many(self, items: Iterable["Evidence"]) -> list[IngestResult]:
        """`ingest` for several pieces of evidence, logged in one durable append."""
        items = list(items)
        for item in items:
            if item.source not in SOURCES:
                raise InputError(f"unknown source {item.source!r} (one of {', '.join(SOURCES)})")
        if self.settings.derived_filter and items:
            self.artifacts.refresh()  # skills drafted since this engine started
        records, results = [], []
        for item in items:
            text = item.text
            if isinstance(text, bytes):
                text = text.decode("utf-8", errors="replace")
            cleaned = redact(text.replace("\x00", "\ufffd"))
            match = self.artifacts.check(cleaned.text) if self.settings.derived_filter else None
            if match is not None:
                records.append({
                    "type": "derived_excluded", "source": item.source, "project": self.project,
                    "text_sha": sha256_text(cleaned.text), "matched": derived_json(match),
                    "meta": item.meta or {}})
                results.append(IngestResult(None, [], match, cleaned.findings, new=False))
                continue
            signatures = extract(cleaned.text, tool=item.tool)
            record = {
                "type": "evidence", "text": cleaned.text, "source": item.source,
                "tool": item.tool or (signatures[0].tool if signatures else ""),
                "project": self.project, "meta": item.meta or {},
                "signatures": [{"sig_sha": s.sig_sha, "tool": s.tool, "kind": s.kind,
                                "family": s.family, "message": s.message} for s in signatures]}
            if not self.settings.derived_filter:
                record["derived_filter"] = "disabled"
            records.append(record)
            results.append(IngestResult(None, signatures, None, cleaned.findings))
        for result, (sha, new) in zip(results, self.vault.commit(records) if records else []):
            if result.derived is None:
                result.evidence_sha, result.new = sha, new
        return results

    def remember(self, level: str, text: str, parents: Sequence[str] = (),
                 supersedes: str | None = None, without_evidence: bool = False
                 ) -> RememberResult:
        return self.remember_many([Proposal(level, text, parents, supersedes,
                                            without_evidence)])[0]

    def remember_many(self, proposals: Iterable[Proposal]) -> list[RememberResult]:
        """Put proposals through the gate; accepted ones get a symptom projection."""
        proposals = list(proposals)
        cleaned = [redact(p.text) for p in proposals]
        vectors = self.vault.embed([c.text for c in cleaned])
        results: list[RememberResult] = []
        with self.vault.log.locked():
            self.vault.catch_up()
            records, verdicts = [], []
            batch_texts: dict[str, int] = {}
            known = self.store.memories([sha for p in proposals for sha in p.parents]
                                        + [p.supersedes for p in proposals if p.supersedes])
            gate_store = resident.of(self.store)   # near-duplicate search in memory
            for proposal, clean, vector in zip(proposals, cleaned, vectors):
                verdict = judge(gate_store, proposal.level, clean.text, proposal.parents,
                                proposal.supersedes, proposal.without_evidence, vector,
                                self.settings.near_duplicate, known)
                twin = batch_texts.get(clean.text)
                if verdict.verdict == "accepted" and twin is not None:
                    verdict = Verdict("rejected", "duplicate of another proposal in this batch")
                verdicts.append(verdict)
                records.append(self._gate_record(proposal, clean.text, verdict))
                batch_texts.setdefault(clean.text, len(records) - 1)
            kept = [record for verdict, record in zip(verdicts, records)
                    if verdict.verdict == "accepted"]
            accepted = list(zip([record_sha(r) for r in kept], [r["text"] for r in kept],
                                self.vault.evidence_messages_many([r["parents"] for r in kept])))
            if hasattr(self.generator, "warm"):  # one embedding batch for all of them
                self.generator.warm([(text, evidence) for _, text, evidence in accepted])
            projections = [(sha, self.generator.project(text, evidence))
                           for sha, text, evidence in accepted]
            self.vault.embed([p.text for _, p in projections if p.text])
            # one append: a memory is never acknowledged without its projection
            shas = self.vault.commit(records + [projection_record(sha, p)
                                                for sha, p in projections])[:len(records)]
            shown = {sha: _projection_json(p) for sha, p in projections}
        for (sha, _), verdict, clean in zip(shas, verdicts, cleaned):
            memory = {"accepted": sha, "reinforced": verdict.existing}.get(verdict.verdict)
            results.append(RememberResult(memory, verdict.verdict, verdict.reason,
                                          shown.get(sha), clean.findings))
        return results

    def _gate_record(self, proposal: Proposal, text: str, verdict: Verdict) -> dict:
        project = proposal.project or self.project
        if verdict.verdict == "rejected":
            return {"type": "memory_rejected", "level": proposal.level, "text": text,
                    "parents": list(proposal.parents), "reason": verdict.reason,
                    "project": project, "attempt": uuid.uuid4().hex}
        if verdict.verdict == "reinforced":
            return {"type": "reinforced", "memory": verdict.existing,
                    "parents": list(proposal.parents), "text": text, "project": project}
        record = {"type": "memory", "level": proposal.level, "text": text,
                  "parents": list(proposal.parents), "project": project,
                  "tool": proposal.tool or ""}
        if proposal.supersedes:
            record["supersedes"] = proposal.supersedes
        if proposal.without_evidence:
            record["without_evidence"] = True
        return record

    def _reproject(self, items: list[tuple[str, list[str]]]) -> list[str]:
        """Projection shas the generator gives now (rebuild compares them with the log)."""
        if hasattr(self.generator, "warm"):
            self.generator.warm(items)
        return [projection_record("", self.generator.project(text, evidence))["projection_sha"]
                for text, evidence in items]

    def record_occurrence(self, sig_sha: str, project: str | None = None,
                          request_id: str | None = None) -> bool:
        """Note that a known signature was seen again; a repeated request_id counts once."""
        return self.record_occurrences([sig_sha], project, request_id)[0]

    def record_occurrences(self, sig_shas: Sequence[str], project: str | None = None,
                           request_id: str | None = None, later: bool = False) -> list[bool]:
        """`record_occurrence` for several signatures of one request, in one commit;
        `later`: logged durably now, applied to the tables in the background."""
        request_id = request_id or uuid.uuid4().hex
        records = [{"type": "occurrence", "sig_sha": sha, "project": project or self.project,
                    "request_id": request_id} for sha in sig_shas]
        written = self.vault.acknowledge(records) if later else self.vault.commit(records)
        return [new for _, new in written]

    # -- read path ----------------------------------------------------------------
    def context(self, request: dict) -> dict:
        from .lookup import lookup

        body = lookup(self, request)
        note = getattr(self.vault, "sync_note", lambda: None)()
        if note:  # a team vault whose store was unreachable at the last sync
            body["degraded"] = sorted(set(body["degraded"]) | {note})
        return body

    def signatures(self, text: str | bytes, tool: str | None = None) -> list[Signature]:
        return extract_signatures(text, tool)

    def search(self, query: str, kind: str = "both", limit: int = 10) -> list[dict]:
        """Raw tier-2 search: cosine scores per path, for inspection and evaluation."""
        if kind not in ("text", "symptom", "both"):
            raise InputError("kind must be text, symptom or both")
        vector = self.embedder.embed_one(redact(query).text)
        store = self._fresh_store()
        kinds = ("text", "symptom") if kind == "both" else (kind,)
        best: dict[str, tuple[float, str]] = {}
        for k in kinds:
            for hit in store.search_vectors(vector, kind=k, limit=limit,
                                                 levels=("L1", "L2")):
                if hit.memory_sha not in best or hit.score > best[hit.memory_sha][0]:
                    best[hit.memory_sha] = (hit.score, k)
        ranked = sorted(best.items(), key=lambda kv: (-kv[1][0], kv[0]))[:limit]
        rows = store.memories([sha for sha, _ in ranked])
        return [{"sha": sha, "level": rows[sha].level, "score": score,
                 "matched_kind": k, "text": rows[sha].text}
                for sha, (score, k) in ranked if sha in rows]

    def memory(self, sha: str) -> dict | None:
        store = self._fresh_store()
        row = store.memories([sha]).get(sha)
        if row is None and self.vault.fetch_missing(sha):
            row = store.memories([sha]).get(sha)
        if row is None:
            return None
        successor = store.successor(sha) if row.superseded_by else None
        return {"sha": row.sha, "level": row.level, "text": row.text,
                "project": row.project, "tool": row.tool, "source": row.source,
                "created": row.created, "parents": list(row.parents),
                "superseded_by": row.superseded_by or None, "successor": successor,
                "signatures": sorted({s["sig_sha"] for s in store.signatures_of([sha])})}

    def provenance(self, shas: Sequence[str]) -> dict[str, dict]:
        """What a card says of each cited record (level, source, tool, project, created),
        read in one batch; a record this vault lacks is fetched (`Vault.fetch_missing`)
        or left out."""
        copies, wanted = resident.of(self._fresh_store()), list(dict.fromkeys(shas))
        cards = copies.cards(wanted)
        missing = [sha for sha in wanted if sha not in cards and self.vault.fetch_missing(sha)]
        if missing:
            cards.update(copies.cards(missing))
        return cards

    def memories(self, levels: Sequence[str] = ("L1", "L2")) -> list[dict]:
        """The live (not superseded) memories of these levels, newest first."""
        rows = [r for r in self._fresh_store().all_memories(levels) if not r.superseded_by]
        rows.sort(key=lambda r: (r.created, r.sha), reverse=True)
        return [{"sha": r.sha, "level": r.level, "text": r.text, "project": r.project,
                 "tool": r.tool, "created": r.created} for r in rows]

    def symptoms(self, sha: str) -> dict | None:
        store = self._fresh_store()
        if not store.memories([sha]):
            self.vault.fetch_missing(sha)
        return store.symptom_projection(sha)

    def settle(self) -> None:
        """After a bulk write (`mem import`): the full-text index over every row."""
        self.vault.settle()

    def rebuild(self, progress=None) -> dict:
        applied = self.vault.rebuild(progress)
        return {"records": applied.records, "projection_drift": applied.projection_drift}

    def derived_violations(self) -> list[str]:
        """Evidence in the vault that matches an emitted artifact (should be none)."""
        from .derived import verify_evidence

        evidence = ((e.sha, e.rec["text"]) for e in self.vault.log.entries()
                    if e.rec.get("type") == "evidence")
        return [str(v) for v in verify_evidence(self.artifacts, evidence)]

    def stats(self) -> dict:
        store = self._fresh_store(reading=False)
        levels = {lv: store.count("memories", f"level = '{lv}'") for lv in ("L0", "L1", "L2", "R")}
        team = getattr(self.vault, "team_stats", None)
        return {"vault": getattr(self.vault, "uri", str(self.vault.path)), "memories": levels,
                "superseded": store.count("memories", "superseded_by != ''"),
                "vectors": {k: store.count("vectors", f"kind = '{k}'")
                            for k in ("text", "symptom", "evidence")},
                "signatures": store.count("signatures"),
                "occurrences": store.count("occurrences"),
                "log_records": sum(1 for _ in self.vault.log.entries()),
                "log_bytes": sum(self.vault.log.sizes().values()),
                **({"team": team()} if team else {})}


def _projection_json(projection) -> dict:
    return {"lines": [{"text": l.text, "origin": l.origin} for l in projection.lines],
            "dropped": [list(d) for d in projection.dropped],
            "model_id": projection.model_id, "prompt_sha": projection.prompt_sha}
