"""What one language-server session holds: settings, the engine, answers and placements.

The engine is blocking (LanceDB, ONNX, fsync), so every engine call runs on one
dedicated thread (`lane`), never on the event loop; one thread also keeps the engine's
own state free of races. The engine is built on first use and rebuilt when the vault,
project or generator settings change.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import os
import re
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from lsprotocol import types
from pygls.uris import from_fs_path

from . import cards
from .cache import AnswerCache, Intake
from .inputs import Failure, Index, failure_from
from .resolution import Failing
from .settings import Settings

log = logging.getLogger(__name__)
PROVENANCE_LESSONS = 3
PROVENANCE_PARENTS = 3


@dataclass(frozen=True)
class Answer:
    failure: Failure
    response: dict
    provenance: dict[str, dict]
    document: str            # file uri of the full answer (markdown)


class Session:
    def __init__(self, settings: Settings):
        self.settings = settings
        self.cache: AnswerCache[Answer] = AnswerCache(settings.cache_size)
        self.index = Index()
        self.intake = Intake(lambda job: job(), settings.debounce_ms / 1000,
                             settings.queue_limit)
        self.lane = ThreadPoolExecutor(1, thread_name_prefix="poimen-engine")
        self.parser = ThreadPoolExecutor(1, thread_name_prefix="poimen-parse")
        self.evidence: dict[str, str] = {}     # failure key -> evidence sha it was ingested as
        self.latest: Failure | None = None     # the last failure any input showed
        self.failing: dict[str, Failing] = {}  # terminal origin -> its last failure
        self.tasks: set[asyncio.Future] = set()
        self.ready = asyncio.Event()           # set once the client's settings are in
        self._engine = None
        self._engine_key: tuple | None = None
        self._embedder = None   # made by `preload`, handed to every engine of the session

    # -- settings and the engine ---------------------------------------------------------
    def configure(self, settings: Settings) -> None:
        if settings.engine_key() != self.settings.engine_key():
            self.cache.clear()
        self.settings = settings
        self.cache.limit = settings.cache_size
        self.intake.delay = settings.debounce_ms / 1000
        self.intake.limit = settings.queue_limit

    def engine(self, create: bool = True):
        """The engine for the current settings (call on the lane only); `create` false:
        VaultError rather than a new vault."""
        key = self.settings.engine_key()
        if self._engine is None or key != self._engine_key:
            from poimen.config import Settings as EngineSettings
            from poimen.engine import Engine

            engine_settings = EngineSettings.from_env()
            engine_settings.budget = self.settings.budget
            engine_settings.leg_timeout_s = self.settings.leg_timeout_s
            if self.settings.generator != "embedded" or self.settings.generator_url:
                engine_settings.generator = {"backend": self.settings.generator,
                                             "url": self.settings.generator_url,
                                             "model": self.settings.generator_model}
            self._engine = Engine(self.settings.vault, self.settings.project, engine_settings,
                                  create=create, embedder=self._embedder)
            self._engine_key = key
        return self._engine

    async def call(self, fn: Callable[..., Any], *args: Any) -> Any:
        """`fn(engine, *args)` on the engine's thread, once the settings are known."""
        await self.ready.wait()
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self.lane, lambda: fn(self.engine(), *args))

    async def parse(self, fn: Callable[[Callable], Any]) -> Any:
        """`fn(extract_signatures)` off the event loop and off the engine's thread, so
        inputs are indexed (and cached answers served) while the engine loads or looks up."""
        await self.ready.wait()

        def run():
            from poimen.engine import extract_signatures

            return fn(extract_signatures)

        return await asyncio.get_running_loop().run_in_executor(self.parser, run)

    def preload(self) -> None:
        """Start loading the embedding model (`poimen.embed.preload`) while the client's
        settings arrive and the vault opens (at the 10k bench vault each took ~0.7 s of
        the cold start, in turn)."""
        from poimen.embed import preload

        if self._embedder is None:
            self._embedder = preload()

    def warm(self) -> None:
        """Load what the first answer needs (the engine over an existing vault, the
        embedding model) on the engine's thread, before the first request waits for it;
        a team vault's sync at open runs there too, never in `initialize`."""
        self.lane.submit(self._warm)

    def _warm(self) -> None:
        from poimen.lookup import warm

        try:
            warm(self.engine(create=False))   # never create a vault nobody asked for
        except Exception as exc:  # noqa: BLE001 - the first real call reports it
            log.info("warm-up skipped: %s", exc)

    # -- failures and answers --------------------------------------------------------------
    async def failure(self, text: str, source: str, tool: str | None = None) -> Failure:
        return await self.parse(lambda extract: failure_from(text, source, extract, tool))

    async def answer(self, failure: Failure, request_id: str | None = None,
                     fresh: bool = False, evidence_sha: str | None = None) -> Answer:
        """The cached answer for `failure`, or a new lookup (always one when `fresh`);
        `evidence_sha`: the evidence this very failure was just recorded as."""
        cached = None if fresh else self.cache.get(failure.key)
        if cached is not None:
            return cached
        answer = await self.call(self._lookup, failure, request_id, evidence_sha)
        self.cache.put(failure.key, answer)
        return answer

    def _lookup(self, engine, failure: Failure, request_id: str | None,
                evidence_sha: str | None = None) -> Answer:
        request = {"signature_source": failure.text, "budget": self.settings.budget}
        if request_id:
            request["request_id"] = request_id
        if evidence_sha:
            request["evidence_sha"] = evidence_sha
        if self.settings.project:
            request["project"] = self.settings.project
        if self.settings.scope:
            request["scope"] = self.settings.scope
        response = engine.context(request)
        provenance = engine.provenance([
            sha for lesson in (response.get("lessons") or [])[:PROVENANCE_LESSONS]
            for sha in (lesson.get("parents") or [])[:PROVENANCE_PARENTS]])
        path = self.answers_dir() / f"{_file_name(failure.key)}.md"
        path.write_text(cards.document(response, failure.text, provenance), encoding="utf-8")
        return Answer(failure, response, provenance, from_fs_path(str(path)) or path.as_uri())

    def answers_dir(self) -> Path:
        if self.settings.answers_dir:
            path = Path(self.settings.answers_dir).expanduser()
        else:
            cache_home = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
            path = Path(cache_home) / "poimen" / "answers"
        path.mkdir(parents=True, exist_ok=True)
        return path

    def forget_answers(self) -> None:
        """After a write (remember, rebuild) every cached answer may be stale."""
        self.cache.clear()

    def own_diagnostics(self, uri: str) -> list[types.Diagnostic]:
        """Our diagnostics for `uri`: one per terminal frame that points into it."""
        out = []
        for placement in self.index.in_uri(uri, "terminal:"):
            answer = self.cache.get(placement.failure.key)
            if answer is None:
                continue
            tier = answer.response.get("tier")
            out.append(types.Diagnostic(
                range=placement.range, source="poimen",
                severity=types.DiagnosticSeverity.Information if tier == 1
                else types.DiagnosticSeverity.Hint,
                message=f"{cards.headline(answer.response)} — {placement.failure.title}",
                code=f"tier-{tier}" if tier else "unknown",
                data={"failure": placement.failure.key}))
        return out

    def spawn(self, coro) -> asyncio.Future:
        """Run `coro` beside the intake, kept referenced until it ends."""
        task = asyncio.ensure_future(coro)
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)
        return task

    def shutdown(self) -> None:
        self.lane.shutdown(wait=False, cancel_futures=True)
        self.parser.shutdown(wait=False, cancel_futures=True)


def place_id(failure: Failure, uri: str, line: int) -> str:
    """The request id for a failure shown at one place: counted once however often asked."""
    return request_id(failure.key, uri, line)


def request_id(*parts: Any) -> str:
    """A stable id for one occurrence, so a republished input is not counted twice."""
    return hashlib.sha256("\x1f".join(map(str, parts)).encode()).hexdigest()[:32]


def _file_name(key: str) -> str:
    return re.sub(r"[^A-Za-z0-9]+", "-", key)[:40].strip("-") or "answer"
