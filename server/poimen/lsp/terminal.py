"""Terminal output: a failing command is looked up, ingested as evidence and pinned to
the workspace lines its stack frames name; the same command passing later is a
resolution, offered once to be recorded with the files changed in between."""

from __future__ import annotations

import asyncio
import logging
import uuid

from lsprotocol import types

from . import cards, resolution
from .inputs import Placement, TerminalOutput, frames_in_workspace, line_range, strip_ansi
from .resolution import Failing

log = logging.getLogger(__name__)
REMEMBER_FIX = "Remember the fix…"
NOT_NOW = "Not now"
REMEMBER_FIX_NOTIFICATION = "poimen/rememberFix"


def _roots(ls) -> list[str]:
    from pygls.uris import to_fs_path

    folders = [to_fs_path(f.uri) for f in ls.workspace.folders.values()]
    root = to_fs_path(ls.workspace.root_uri) if ls.workspace.root_uri else None
    return [p for p in dict.fromkeys([*folders, root]) if p]


async def on_terminal_output(ls, params: TerminalOutput) -> None:
    session = ls.session
    roots = _roots(ls)
    cwd = params.cwd or (roots[0] if roots else None)
    command = " ".join(params.command.split())
    origin = f"terminal:{cwd}:{command}"
    output = strip_ansi(params.output)

    async def analyse() -> None:
        if params.exit_code == 0:
            await _resolved(ls, origin, cwd, command)
            return
        if not output.strip():
            return
        failure = await session.failure(output, "terminal")
        session.latest = failure
        # each run is recorded once, as evidence; the lookup leaves it out of "seen before"
        meta = {"command": command, "exit_code": params.exit_code, "cwd": cwd,
                "run": uuid.uuid4().hex}
        ingested = await session.call(lambda engine: engine.ingest(output, "terminal", meta=meta))
        if ingested.evidence_sha:
            session.evidence[failure.key] = ingested.evidence_sha
        answer = await session.answer(failure, fresh=True, evidence_sha=ingested.evidence_sha)
        loop = asyncio.get_running_loop()
        snapshot = await loop.run_in_executor(None, resolution.snapshot, cwd)
        session.failing[origin] = Failing(failure, ingested.evidence_sha, snapshot)
        frames = await loop.run_in_executor(None, frames_in_workspace, output, cwd, roots)
        _place(ls, origin, [Placement(uri, line_range(uri, line), failure)
                            for uri, line in frames])
        summary = f"`{command}` failed (exit {params.exit_code}): {cards.message(answer.response)}"
        ls.window_log_message(types.LogMessageParams(types.MessageType.Info, summary))
        if answer.response.get("tier") in (1, 2):
            ls.window_show_message(types.ShowMessageParams(types.MessageType.Info,
                                                           f"poimen: {summary}"))

    session.intake.submit(origin, analyse)


def _place(ls, origin: str, placements: list[Placement]) -> None:
    """Replace a command's placements and republish our diagnostics where they changed."""
    index = ls.session.index
    touched = set(index.drop_origin(origin))
    by_uri: dict[str, list[Placement]] = {}
    for placement in placements:
        by_uri.setdefault(placement.uri, []).append(placement)
    for uri, group in by_uri.items():
        index.replace(origin, uri, group)
    for uri in sorted(touched | set(by_uri)):
        ls.text_document_publish_diagnostics(types.PublishDiagnosticsParams(
            uri=uri, diagnostics=ls.session.own_diagnostics(uri)))


async def _resolved(ls, origin: str, cwd: str | None, command: str) -> None:
    """The command that failed passes now: clear its diagnostics, offer once to remember."""
    failing = ls.session.failing.pop(origin, None)
    if failing is None:
        return
    _place(ls, origin, [])
    changed = await asyncio.get_running_loop().run_in_executor(
        None, resolution.changed_since, failing.snapshot)
    # the question waits for the user: it must not hold up the intake
    ls.session.spawn(_offer(ls, failing, command, cwd, changed))


async def _offer(ls, failing: Failing, command: str, cwd: str | None, changed: list[str]) -> None:
    files = f" Files changed since it failed: {', '.join(changed[:8])}." if changed else ""
    try:
        choice = await ls.window_show_message_request_async(types.ShowMessageRequestParams(
            type=types.MessageType.Info,
            message=f"poimen: `{command}` passes now; it failed with {failing.failure.title}."
                    f"{files} Remember what fixed it?",
            actions=[types.MessageActionItem(REMEMBER_FIX), types.MessageActionItem(NOT_NOW)]))
    except Exception as exc:  # a client that cannot ask is no error of ours
        log.info("resolution offer not shown: %s", exc)
        return
    if choice is not None and choice.title == REMEMBER_FIX:
        ls.protocol.notify(REMEMBER_FIX_NOTIFICATION, {
            "failure": failing.failure.key, "title": failing.failure.title,
            "parents": [failing.evidence_sha] if failing.evidence_sha else [],
            "command": command, "cwd": cwd, "filesChanged": changed})
