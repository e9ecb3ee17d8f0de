"""`mem lsp`: every LSP feature's wiring, in one place; the work is in the feature modules.

Custom methods (client → server notifications):
- `poimen/diagnostics` `{uri, diagnostics: [{range, message, source, code, severity}]}`
- `poimen/terminalOutput` `{command, exitCode, output, cwd?}`
Server → client: `poimen/rememberFix` `{failure, title, parents, command, cwd, filesChanged}`
after the user accepts the offer to record how a terminal failure was fixed.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import threading
from typing import Any

import attrs
from lsprotocol import types
from pygls.capabilities import get_capability
from pygls.exceptions import JsonRpcException, JsonRpcInvalidParams
from pygls.io_ import StdoutWriter
from pygls.lsp.server import LanguageServer
from pygls.protocol import LanguageServerProtocol

from .. import __version__
from . import code_actions, commands, framing, hover, inputs, terminal
from .inputs import ForwardedDiagnostics, TerminalOutput
from .session import Session
from .settings import SECTION, Settings, parse

log = logging.getLogger(__name__)

CONFIGURATION_TIMEOUT_S = 5.0
DIAGNOSTICS = "poimen/diagnostics"
TERMINAL_OUTPUT = "poimen/terminalOutput"
PARAMS = {DIAGNOSTICS: ForwardedDiagnostics, TERMINAL_OUTPUT: TerminalOutput}
COMMANDS = {
    "poimen.whatDoWeKnow": commands.what_do_we_know,
    "poimen.remember": commands.remember,
    "poimen.showSymptoms": commands.show_symptoms,
    "poimen.showMemory": commands.show_memory,
    "poimen.rebuild": commands.rebuild,
}


@attrs.define
class RawNotification:
    """A poimen notification as received: params are checked by its handler."""

    method: str
    jsonrpc: str
    params: Any = None


@attrs.define
class Dropped:
    """A message that could not be structured; pygls ignores its unknown version."""

    jsonrpc: str = "dropped"


class PoimenProtocol(LanguageServerProtocol):
    def get_message_type(self, method: str):
        if method in PARAMS:
            return RawNotification
        return super().get_message_type(method)

    def structure_message(self, data):
        """A request whose params do not fit its method gets an Invalid Params error
        (pygls would drop it and leave the client waiting); a notification is dropped."""
        try:
            return super().structure_message(data)
        except JsonRpcException:
            method = data.get("method")
            log.warning("malformed params for %r; message dropped", method)
            if "id" in data and method is not None:
                self._send_response(data["id"], error=JsonRpcInvalidParams(
                    f"poimen: the params of {method!r} do not fit the method").to_response_error())
            return Dropped()

    def set_writer(self, writer, include_headers: bool = True):
        super().set_writer(_ClosingAwareWriter(writer), include_headers)


class _ClosingAwareWriter:
    """Once the client has closed its end, say so once and drop what is left to send."""

    def __init__(self, writer):
        self._writer, self.client_gone = writer, False

    def close(self):
        return self._writer.close()

    def write(self, data: bytes):
        if self.client_gone:
            return None
        try:
            return self._writer.write(data)
        except (BrokenPipeError, ConnectionResetError):
            self.client_gone = True
            log.warning("the client closed the connection; nothing more is sent")
            return None


class PoimenServer(LanguageServer):
    def __init__(self, defaults: Settings):
        super().__init__("poimen", __version__, protocol_cls=PoimenProtocol,
                         text_document_sync_kind=types.TextDocumentSyncKind.Incremental)
        self.defaults = defaults
        self.session = Session(defaults)

    def start_io(self, stdin=None, stdout=None) -> int:
        """Serve on stdio through the resyncing framer; returns the exit code (LSP: 0
        after `shutdown` then `exit`, 1 for an `exit` without `shutdown`)."""
        self._stop_event = threading.Event()
        self.protocol.set_writer(StdoutWriter(stdout))
        reader = framing.FrameReader(framing.stdin_chunks(stdin, self.thread_pool))
        code = 0
        try:
            asyncio.run(framing.serve(reader, self.protocol, self._stop_event,
                                      self.report_server_error))
        except BrokenPipeError:
            log.error("the connection to the client is lost; shutting down")
        except SystemExit as exc:   # pygls ends `exit` with sys.exit(0 or 1)
            code = exc.code if isinstance(exc.code, int) else 0
        except KeyboardInterrupt:
            pass
        finally:
            self.shutdown()
        return code

    def report_server_error(self, error, source) -> None:
        """Out-of-band errors go to the log, not to pop-ups."""
        log.error("%s: %s", getattr(source, "__name__", source), error)
        try:
            self.window_log_message(types.LogMessageParams(types.MessageType.Error,
                                                           f"poimen: {error}"))
        except Exception:  # noqa: BLE001 - the transport itself may be gone
            pass

    def apply_settings(self, raw: Any, base: Settings) -> None:
        settings, errors = parse(raw, base)
        for message in errors:
            self.window_show_message(types.ShowMessageParams(types.MessageType.Warning, message))
        self.session.configure(settings)

    def params_of(self, method: str, raw: Any):
        """Structured params, or None (and a logged reason) when malformed."""
        try:
            return self.protocol._converter.structure(raw, PARAMS[method])
        except Exception as exc:  # noqa: BLE001 - bad params are the client's, not fatal
            self.window_log_message(types.LogMessageParams(
                types.MessageType.Warning, f"poimen: ignored malformed {method}: {exc}"))
            return None


def guarded(fn):
    """A failing notification handler logs and is done; the server stays up."""
    @functools.wraps(fn)
    async def run(ls: PoimenServer, *args):
        try:
            result = fn(ls, *args)
            if hasattr(result, "__await__"):
                await result
        except Exception as exc:  # noqa: BLE001
            log.exception("%s failed", fn.__name__)
            ls.report_server_error(exc, type(exc))
    return run


def after_settings(fn):
    """Requests wait until the client's settings are in (the vault may be among them)."""
    @functools.wraps(fn)
    async def run(ls: PoimenServer, *args):
        await ls.session.ready.wait()
        result = fn(ls, *args)
        return await result if hasattr(result, "__await__") else result
    return run


def build(defaults: Settings | None = None) -> PoimenServer:
    server = PoimenServer(defaults or Settings())

    @server.feature(types.INITIALIZE)
    def initialize(ls: PoimenServer, params: types.InitializeParams):
        ls.session.preload()
        ls.apply_settings(params.initialization_options, ls.defaults)

    @server.feature(types.INITIALIZED)
    async def initialized(ls: PoimenServer, params: types.InitializedParams):
        try:
            await pull_configuration(ls)
        finally:
            ls.session.ready.set()
            ls.session.warm()

    @server.feature(types.WORKSPACE_DID_CHANGE_CONFIGURATION)
    @guarded
    async def did_change_configuration(ls: PoimenServer,
                                       params: types.DidChangeConfigurationParams):
        if isinstance(params.settings, dict) and params.settings:
            ls.apply_settings(params.settings, ls.session.settings)
        else:
            await pull_configuration(ls)

    @server.feature(DIAGNOSTICS)
    @guarded
    async def forwarded_diagnostics(ls: PoimenServer, params: Any):
        parsed = ls.params_of(DIAGNOSTICS, params)
        if parsed is not None:
            await inputs.on_diagnostics(ls, parsed)

    @server.feature(TERMINAL_OUTPUT)
    @guarded
    async def terminal_output(ls: PoimenServer, params: Any):
        parsed = ls.params_of(TERMINAL_OUTPUT, params)
        if parsed is not None:
            await terminal.on_terminal_output(ls, parsed)

    @server.feature(types.TEXT_DOCUMENT_DID_OPEN)
    @guarded
    async def did_open(ls: PoimenServer, params: types.DidOpenTextDocumentParams):
        if inputs.is_log_document(params.text_document):
            await inputs.on_log_document(ls, params.text_document.uri)

    @server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
    @guarded
    async def did_change(ls: PoimenServer, params: types.DidChangeTextDocumentParams):
        doc = ls.workspace.get_text_document(params.text_document.uri)
        if inputs.is_log_document(doc):
            await inputs.on_log_document(ls, doc.uri)

    @server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
    @guarded
    def did_close(ls: PoimenServer, params: types.DidCloseTextDocumentParams):
        inputs.on_close(ls, params.text_document.uri)

    @server.feature(types.TEXT_DOCUMENT_HOVER)
    @after_settings
    async def on_hover(ls: PoimenServer, params: types.HoverParams):
        return await hover.hover(ls, params)

    @server.feature(types.TEXT_DOCUMENT_CODE_ACTION, types.CodeActionOptions(
        code_action_kinds=[types.CodeActionKind.QuickFix]))
    @after_settings
    def on_code_action(ls: PoimenServer, params: types.CodeActionParams):
        return code_actions.code_actions(ls, params)

    for name, command in COMMANDS.items():
        server.command(name)(after_settings(command))

    @server.feature(types.SHUTDOWN)
    def shutdown(ls: PoimenServer, params: None):
        ls.session.shutdown()

    return server


async def pull_configuration(ls: PoimenServer) -> None:
    """`workspace/configuration` (section `poimen`), where the client supports it."""
    if not get_capability(ls.client_capabilities, "workspace.configuration", False):
        return
    try:
        (raw,) = await asyncio.wait_for(ls.workspace_configuration_async(
            types.ConfigurationParams(items=[types.ConfigurationItem(section=SECTION)])),
            CONFIGURATION_TIMEOUT_S)
    except Exception as exc:  # noqa: BLE001 - keep the settings we have
        log.warning("workspace/configuration failed: %s", exc)
        return
    if raw:
        ls.apply_settings(raw, ls.session.settings)
