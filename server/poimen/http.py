"""`mem serve`: the HTTP adapter (FastAPI on uvicorn).

FastAPI because the request schema is a pydantic model that gives validation (422 with
a reason) and the OpenAPI document (`/openapi.json`, `/docs`) from one declaration; it
runs on Starlette and uvicorn, both already dependencies. The adapter translates and
decides nothing: the body is `Engine.context` encoded by `poimen.lookup.encode_body`.
"""

from __future__ import annotations

import ipaddress
import logging
import secrets
import sys
import threading
from typing import Callable, Literal, Optional

from fastapi import FastAPI, Request
from fastapi.concurrency import run_in_threadpool
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, Response
from pydantic import BaseModel, ConfigDict, Field, StrictInt, StrictStr, field_validator
from starlette.exceptions import HTTPException

from .edge import unicode_problem
from .lookup import BadContextRequest, encode_body

MAX_BODY_BYTES = 2 * 1024 * 1024
LOOPBACK_NAMES = {"localhost"}
log = logging.getLogger("poimen.http")


class ServeError(ValueError):
    """The server cannot start as asked (the message says why)."""


class Opening:
    """The engine, opened on a thread while the server already answers `/health`
    (importing LanceDB and opening the vault are most of a cold start); a request
    for an answer waits for it."""

    def __init__(self, open_engine: Callable[[], object], location: str):
        self.location = location
        self._done = threading.Event()
        self._engine, self._error = None, None
        threading.Thread(target=self._open, args=(open_engine,), name="poimen-open",
                         daemon=True).start()

    def _open(self, open_engine) -> None:
        try:
            self._engine = open_engine()
        except Exception as exc:  # noqa: BLE001 - every request reports it
            self._error = exc
        finally:
            self._done.set()

    def opened(self) -> bool:
        return self._done.is_set()

    def get(self):
        """The engine once open; raises what opening it raised."""
        self._done.wait()
        if self._error is not None:
            raise self._error
        return self._engine


def _engine(engine):
    return engine.get() if isinstance(engine, Opening) else engine


class ContextRequest(BaseModel):
    """`POST /memory/context`: at least one of tool, task, signature_source."""

    model_config = ConfigDict(extra="forbid")
    tool: Optional[StrictStr] = Field(None, description="tool name; inferred from "
                                      "signature_source when omitted")
    task: Optional[StrictStr] = Field(None, description="what the caller is doing")
    signature_source: Optional[StrictStr] = Field(None, description="raw error output")
    project: Optional[StrictStr] = None
    scope: Optional[Literal["project", "all-projects"]] = None
    budget: Optional[StrictInt] = Field(None, gt=0, description="token budget")
    request_id: Optional[StrictStr] = Field(None, max_length=200, description=
                                            "idempotency key for the occurrence record")

    @field_validator("tool", "task", "signature_source", "project", "request_id")
    @classmethod
    def _unicode(cls, value: str | None) -> str | None:
        problem = unicode_problem(value) if value is not None else None
        if problem:
            raise ValueError(problem)
        return value


class Budget(BaseModel):
    limit: int
    used: int
    dropped: list[dict]
    over: bool


class ContextResponse(BaseModel):
    """The response body (fields may grow, never silently change): see docs/CONTEXT.md."""

    tier: Optional[int]
    tool: Optional[str]
    tool_inferred: bool
    project: str
    scope: str
    signatures: list[dict]
    lessons: list[dict]
    skills: list[dict]
    references: list[dict]
    budget: Budget
    degraded: list[str]


class ErrorBody(BaseModel):
    error: str
    reason: str


class Guard:
    """ASGI middleware: browsers, foreign Host names, the bearer token, the size limit.

    A request carrying `Origin` comes from a web page and is refused (no CORS: a page on
    any site could otherwise make the browser POST to a loopback port). On loopback the
    Host header must name loopback too, which defeats DNS rebinding. The body is read up
    to `max_body` before the app sees it and replayed to it, so an oversized or lying
    request gets a 413 and never reaches the engine.
    """

    def __init__(self, app, token: str | None, max_body: int, loopback_only: bool = True):
        self.app, self.token, self.max_body = app, token, max_body
        self.loopback_only = loopback_only

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        headers = {k.decode("latin-1").lower(): v.decode("latin-1")
                   for k, v in scope.get("headers", ())}
        if "origin" in headers:
            return await _error(403, "forbidden", "requests from web pages (an Origin "
                                "header) are refused")(scope, receive, send)
        if self.loopback_only and not names_loopback(_host_name(headers.get("host", ""))):
            return await _error(403, "forbidden", "the Host header must name this "
                                "machine (127.0.0.1, ::1 or localhost)")(scope, receive, send)
        if self.token is not None and not secrets.compare_digest(
                headers.get("authorization", "").encode(), f"Bearer {self.token}".encode()):
            return await _error(401, "unauthorized", "send Authorization: Bearer "
                                "<token>")(scope, receive, send)
        too_large = _error(413, "too large",
                           f"request bodies are limited to {self.max_body} bytes")
        length = headers.get("content-length")
        if length is not None and (not length.isdigit() or int(length) > self.max_body):
            return await too_large(scope, receive, send)
        chunks, size, more = [], 0, True
        while more:
            message = await receive()
            if message["type"] != "http.request":
                return await self.app(scope, receive, send)
            chunks.append(message.get("body", b""))
            size += len(chunks[-1])
            if size > self.max_body:
                return await too_large(scope, receive, send)
            more = message.get("more_body", False)
        body, replayed = b"".join(chunks), False

        async def replay():
            nonlocal replayed
            if not replayed:
                replayed = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()

        return await self.app(scope, replay, send)


def _host_name(host: str) -> str:
    """The name in a Host header, without its port or IPv6 brackets."""
    if host.startswith("["):
        return host[1:host.find("]")] if "]" in host else ""
    return host.rsplit(":", 1)[0] if host.count(":") == 1 else host


def _error(status: int, error: str, reason: str, headers=None) -> JSONResponse:
    return JSONResponse({"error": error, "reason": reason}, status_code=status,
                        headers=headers)


def _validation_reason(exc: RequestValidationError) -> str:
    parts = []
    for err in exc.errors():
        where = ".".join(str(p) for p in err.get("loc", ()) if p != "body")
        parts.append(f"{where}: {err.get('msg')}" if where else str(err.get("msg")))
    return "; ".join(parts) or "invalid request"


def create_app(engine, token: str | None = None, max_body: int = MAX_BODY_BYTES,
               loopback_only: bool = True) -> FastAPI:
    """The ASGI app over one engine; `token` (if set) is required as a Bearer token;
    `loopback_only` refuses Host headers that do not name this machine."""
    app = FastAPI(title="poimen", version="1", summary="What do we already know "
                  "about this failure?")
    app.add_middleware(Guard, token=token, max_body=max_body, loopback_only=loopback_only)

    @app.exception_handler(RequestValidationError)
    async def invalid(request: Request, exc: RequestValidationError):
        return _error(422, "bad request", _validation_reason(exc))

    @app.exception_handler(HTTPException)
    async def refused(request: Request, exc: HTTPException):
        if exc.status_code == 400:   # a body FastAPI could not parse (nested too deep)
            return _error(422, "bad request", f"the body is not usable JSON: {exc.detail}")
        return _error(exc.status_code, "refused", str(exc.detail), exc.headers)

    @app.post("/memory/context", response_model=None,
              responses={200: {"model": ContextResponse}, 422: {"model": ErrorBody},
                         413: {"model": ErrorBody}, 503: {"model": ErrorBody}})
    async def memory_context(request: ContextRequest):
        payload = request.model_dump(exclude_none=True)
        try:
            body = await run_in_threadpool(lambda: _engine(engine).context(payload))
        except BadContextRequest as exc:
            return _error(422, "bad request", str(exc))
        except Exception as exc:  # noqa: BLE001 - legs never get here; the vault can
            log.exception("context failed outside its legs")
            return _error(503, "unavailable", f"{type(exc).__name__}: {exc}")
        return Response(encode_body(body), media_type="application/json")

    @app.get("/health")
    async def health():
        if isinstance(engine, Opening) and not engine.opened():
            return {"ok": True, "ready": False, "vault": engine.location}
        try:
            return {"ok": True, "ready": True, "vault": str(_engine(engine).vault.path)}
        except Exception as exc:  # noqa: BLE001 - the vault could not be opened
            return _error(503, "unavailable", f"{type(exc).__name__}: {exc}")

    return app


def _warm(opening: Opening) -> None:
    """Open the engine, load the model and indexes while uvicorn starts (the first
    request needs them)."""
    from .lookup import warm

    try:
        warm(opening.get())
    except Exception as exc:  # noqa: BLE001 - the first real request reports it
        log.info("warm-up skipped: %s", exc)


def names_loopback(host: str) -> bool:
    """A Host name for the address we listen on: localhost (any case), 127.0.0.1 or ::1
    (127.0.0.2 is loopback too, but nothing of ours listens there)."""
    if host.lower() in LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(host) in (ipaddress.ip_address("127.0.0.1"),
                                              ipaddress.ip_address("::1"))
    except ValueError:
        return False


def is_loopback(host: str) -> bool:
    if host in LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def check_binding(host: str, token: str | None) -> None:
    """Off-loopback binding needs a token (refused before anything starts)."""
    if not is_loopback(host) and not token:
        raise ServeError(f"binding to {host} exposes the vault beyond this machine; "
                         "give --token (or POIMEN_TOKEN) so requests must present it")


def serve(open_engine: Callable[[], object], location: str, host: str = "127.0.0.1",
          port: int = 7878, token: str | None = None, max_body: int = MAX_BODY_BYTES) -> None:
    """Run the server until interrupted; off-loopback binding needs a token. The engine
    (`open_engine()`, over the vault at `location`) opens beside uvicorn's start."""
    check_binding(host, token)
    opening = Opening(open_engine, location)
    import uvicorn

    logging.basicConfig(level=logging.INFO, stream=sys.stderr, format="%(message)s")
    auth = "token required" if token else "no token (loopback only)"
    print(f"poimen serving {location} on http://{host}:{port} ({auth})",
          file=sys.stderr, flush=True)
    threading.Thread(target=_warm, args=(opening,), name="poimen-warm", daemon=True).start()
    uvicorn.run(create_app(opening, token, max_body, is_loopback(host)), host=host,
                port=port, log_level="warning", access_log=False)
