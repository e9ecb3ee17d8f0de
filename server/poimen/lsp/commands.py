"""`workspace/executeCommand`: each command takes one object argument (camelCase keys).

- `poimen.whatDoWeKnow {uri, range|position} | {failure} | {message} | {}` → the full answer,
  shown with `window/showDocument` where the client can, else as a message.
- `poimen.remember {text, level?, failure?|uri+range?|message?, parents?, supersedes?}` →
  an L1 (by default) with the failure's evidence as parent.
- `poimen.showSymptoms {sha}` → the memory's symptom projection; `{}` → memories to pick.
- `poimen.showMemory {sha}` → the memory, its parents and successor.
- `poimen.rebuild {}` → rebuild every projection from the log (work-done progress).
"""

from __future__ import annotations

import asyncio
import uuid
from typing import Any

from lsprotocol import types
from pygls.capabilities import get_capability
from pygls.exceptions import JsonRpcInvalidParams

from . import cards
from .inputs import Failure
from .session import request_id

LEVELS = ("L1", "L2")


def argument(args: tuple) -> dict:
    """The single object argument (none is `{}`); anything else is the caller's error."""
    if not args:
        return {}
    if len(args) > 1 or not isinstance(args[0], dict):
        raise JsonRpcInvalidParams("poimen commands take one object argument")
    return args[0]


async def failure_of(ls, arg: dict) -> Failure | None:
    """The failure a command is about: a known key, a range, a message, or the latest one."""
    session = ls.session
    if isinstance(arg.get("failure"), str):
        found = session.index.failure(arg["failure"])
        cached = session.cache.get(arg["failure"])
        if found or cached:
            return found or cached.failure
    if isinstance(arg.get("uri"), str):
        for uri in (("diagnostics", arg["uri"]), ("document", arg["uri"])):
            await session.intake.settle(uri)
        placements = []
        if isinstance(arg.get("range"), dict):
            placements = session.index.overlapping(arg["uri"], _structure(ls, arg["range"], types.Range))
        elif isinstance(arg.get("position"), dict):
            placements = session.index.at(arg["uri"], _structure(ls, arg["position"], types.Position))
        if placements:
            return placements[0].failure
    text = arg.get("message") or arg.get("output")
    if isinstance(text, str) and text.strip():
        return await session.failure(text, str(arg.get("source") or "diagnostic"))
    if arg.get("failure") or arg.get("uri"):
        raise JsonRpcInvalidParams("poimen: no known failure there; pass its `message`")
    return session.latest


def _structure(ls, value: dict, cls):
    try:
        return ls.protocol._converter.structure(value, cls)
    except Exception as exc:  # noqa: BLE001 - the caller's malformed argument
        raise JsonRpcInvalidParams(f"poimen: bad {cls.__name__.lower()}: {exc}") from exc


async def what_do_we_know(ls, *args: Any) -> dict:
    arg = argument(args)
    failure = await failure_of(ls, arg)
    if failure is None:
        ls.window_show_message(types.ShowMessageParams(
            types.MessageType.Info, "poimen: no failure seen yet in this session"))
        return {"tier": None, "document": None, "headline": cards.NO_ANSWER}
    where = arg.get("uri", "command"), (arg.get("range") or arg.get("position") or {})
    answer = await ls.session.answer(failure, request_id(failure.key, *map(str, where)))
    shown = False
    if get_capability(ls.client_capabilities, "window.show_document.support", False):
        result = await ls.window_show_document_async(
            types.ShowDocumentParams(uri=answer.document, take_focus=True))
        shown = bool(result and result.success)
    if not shown:
        ls.window_show_message(types.ShowMessageParams(
            types.MessageType.Info, f"poimen: {cards.message(answer.response)}"))
    return {"tier": answer.response.get("tier"), "document": answer.document,
            "headline": cards.headline(answer.response), "failure": failure.key,
            "shown": "document" if shown else "message", "response": answer.response}


async def remember(ls, *args: Any) -> dict:
    arg = argument(args)
    text = arg.get("text")
    if not isinstance(text, str) or not text.strip():
        raise JsonRpcInvalidParams("poimen.remember needs `text`: how the failure was fixed"
                                   " (the editor plugin's prompt supplies it)")
    level = arg.get("level", "L1")
    if level not in LEVELS:
        raise JsonRpcInvalidParams(f"poimen.remember: level must be one of {', '.join(LEVELS)}")
    parents = arg.get("parents") or []
    if not isinstance(parents, list) or not all(isinstance(p, str) for p in parents):
        raise JsonRpcInvalidParams("poimen.remember: `parents` must be a list of shas")
    session = ls.session
    failure = None
    if not parents:
        failure = await failure_of(ls, {k: v for k, v in arg.items() if k != "text"})
        if failure is not None:
            parents = [await _evidence(session, failure)]
    supersedes = arg.get("supersedes")
    result = await session.call(lambda engine: engine.remember(
        level, text.strip(), parents=[p for p in parents if p], supersedes=supersedes))
    if result.verdict != "rejected":
        session.forget_answers()
    kind = types.MessageType.Warning if result.verdict == "rejected" else types.MessageType.Info
    ls.window_show_message(types.ShowMessageParams(
        kind, f"poimen: {result.verdict} ({result.reason})" if result.reason
        else f"poimen: {result.verdict}"))
    out = result.to_json()
    out["parents"] = parents
    out["failure"] = failure.key if failure else None
    return out


async def _evidence(session, failure: Failure) -> str | None:
    """The evidence sha the failure was ingested as; ingested now if it never was."""
    if failure.key not in session.evidence:
        source = failure.source if failure.source in ("terminal", "diagnostic", "ci") else "note"
        result = await session.call(lambda engine: engine.ingest(failure.text, source))
        if result.evidence_sha:
            session.evidence[failure.key] = result.evidence_sha
    return session.evidence.get(failure.key)


async def show_symptoms(ls, *args: Any) -> dict:
    arg = argument(args)
    sha = arg.get("sha")
    if sha is None:
        return {"memories": _known_memories(ls.session)}
    projection = await ls.session.call(lambda engine: engine.symptoms(_sha(sha)))
    if projection is None:
        raise JsonRpcInvalidParams(f"poimen: no symptom projection for memory {sha!r}")
    return projection


async def show_memory(ls, *args: Any) -> dict:
    sha = _sha(argument(args).get("sha"))
    memory = await ls.session.call(lambda engine: engine.memory(sha))
    if memory is None:
        raise JsonRpcInvalidParams(f"poimen: no memory {sha!r}")
    return memory


async def rebuild(ls, *args: Any) -> dict:
    argument(args)
    session = ls.session
    token = None
    if get_capability(ls.client_capabilities, "window.work_done_progress", False):
        token = str(uuid.uuid4())
        await ls.work_done_progress.create_async(token)
        ls.work_done_progress.begin(token, types.WorkDoneProgressBegin(
            title="poimen: rebuilding projections", percentage=0))
    loop = asyncio.get_running_loop()

    def progress(done: int, total: int) -> None:
        if token is not None:
            percent = int(100 * done / total) if total else 100
            loop.call_soon_threadsafe(ls.work_done_progress.report, token,
                                      types.WorkDoneProgressReport(
                                          message=f"{done}/{total} records", percentage=percent))

    try:
        result = await session.call(lambda engine: engine.rebuild(progress))
    finally:
        session.forget_answers()
        if token is not None:
            ls.work_done_progress.end(token, types.WorkDoneProgressEnd(message="done"))
    ls.window_show_message(types.ShowMessageParams(
        types.MessageType.Info, f"poimen: rebuilt {result.get('records')} records"))
    return result


def _known_memories(session) -> list[dict]:
    seen: dict[str, dict] = {}
    for answer in session.cache.values():
        for lesson in answer.response.get("lessons") or ():
            seen.setdefault(lesson["sha"], {
                "sha": lesson["sha"], "level": lesson.get("level"), "tier": lesson.get("tier"),
                "label": " ".join(str(lesson.get("text", "")).split())[:80]})
    return list(seen.values())


def _sha(value: Any) -> str:
    if not isinstance(value, str) or not value.strip():
        raise JsonRpcInvalidParams("poimen: pass the memory's `sha`")
    return value.strip()
