"""LSP base-protocol framing that survives a hostile client.

pygls's reader trusts every header: after `Content-Length: abc` it glues the next frame
onto a body and stays out of step for good, and a huge length makes it allocate that
much. Here a frame whose header block is unreadable, whose length is not a plain
decimal or exceeds `MAX_MESSAGE_BYTES`, or whose body is not JSON is dropped with one
warning, and reading resumes at the next `Content-Length:` header in the stream.
A declared length that runs into the next frame's header is cut short there: a body
cannot hold a raw `Content-Length: N` + CRLF (JSON strings escape CR, and the name is
not a JSON token).
"""

from __future__ import annotations

import asyncio
import json
import logging
import re
from typing import Awaitable, Callable

from ..edge import SURROGATE

log = logging.getLogger(__name__)

MAX_MESSAGE_BYTES = 64 << 20   # one message; the largest real one (10k diagnostics) is ~2 MB
MAX_HEADER_BYTES = 8 << 10
CHUNK = 1 << 16

_HEADER_END = re.compile(rb"\r?\n\r?\n")
_LENGTH_NAME = re.compile(rb"content-length:", re.IGNORECASE)
_NEXT_FRAME = re.compile(rb"content-length:[ \t]*\d+\r?\n", re.IGNORECASE)
_SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89a-fA-F]")
_FIELD = re.compile(rb"([!-9;-~]+):[ \t]*([ -~]*?)[ \t]*")


class FrameReader:
    """Whole message bodies from a byte stream; `read_chunk()` returns b"" at the end."""

    def __init__(self, read_chunk: Callable[[], Awaitable[bytes]],
                 max_message: int = MAX_MESSAGE_BYTES):
        self._read_chunk, self._max = read_chunk, max_message
        self._buf = bytearray()
        self._eof = False
        self.dropped = 0

    async def _more(self) -> bool:
        if self._eof:
            return False
        chunk = await self._read_chunk()
        self._eof = not chunk
        self._buf += chunk
        return bool(chunk)

    def drop(self, reason: str) -> None:
        """Discard the frame at the front and skip to the next `Content-Length:`."""
        self.dropped += 1
        log.warning("dropped a malformed LSP frame (%s); resuming at the next header", reason)
        self._resync()

    def _resync(self) -> None:
        found = _LENGTH_NAME.search(self._buf, 1)
        # without one, keep only what could be the start of a header cut by a chunk's end
        cut = found.start() if found else max(1, len(self._buf) - len(b"content-length"))
        del self._buf[:cut]

    async def next_body(self) -> bytes | None:
        """The next frame's body (unparsed), or None at the end of the stream."""
        while True:
            end = _HEADER_END.search(self._buf)
            if end is None:
                if len(self._buf) > MAX_HEADER_BYTES:
                    self.drop("header block too long")
                elif not await self._more():
                    return None
                continue
            length, problem = _content_length(bytes(self._buf[:end.start()]))
            if problem is None and length > self._max:
                problem = f"Content-Length {length} exceeds {self._max}"
            if problem is not None:
                self.drop(problem)
                continue
            body = await self._body(end.end(), length)
            if body is not None:
                return body

    async def _body(self, start: int, length: int) -> bytes | None:
        scanned = start
        while True:
            cut = _NEXT_FRAME.search(self._buf, scanned, start + length)
            if cut is not None:   # the next frame began inside the declared body
                del self._buf[:cut.start()]
                self.dropped += 1
                log.warning("dropped an LSP frame shorter than its Content-Length %d", length)
                return None
            if len(self._buf) >= start + length:
                body = bytes(self._buf[start:start + length])
                del self._buf[:start + length]
                return body
            scanned = max(start, len(self._buf) - 64)   # a header cut by a chunk's end
            if not await self._more():
                self._buf.clear()
                return None

    def resync_after_bad_body(self, body: bytes) -> None:
        """A body that is not JSON: look for a swallowed frame inside it."""
        found = _LENGTH_NAME.search(body)
        if found is not None:
            self._buf[:0] = body[found.start():]
        self.dropped += 1
        log.warning("dropped an LSP message that is not JSON (%d bytes)", len(body))


def _content_length(block: bytes) -> tuple[int, str | None]:
    """The declared length of a header block, or a reason it has none."""
    length = None
    for line in re.split(rb"\r?\n", block):
        field = _FIELD.fullmatch(line)
        if field is None:
            return 0, f"unreadable header line {line[:40]!r}"
        if field.group(1).lower() == b"content-length":
            value = field.group(2)
            if not value.isdigit() or len(value) > 19 or length is not None:
                return 0, f"bad Content-Length {value[:40]!r}"
            length = int(value)
    if length is None:
        return 0, "no Content-Length header"
    return length, None


async def serve(reader: FrameReader, protocol, stop_event,
                error_handler: Callable[[Exception, type], None]) -> None:
    """pygls's message loop over `reader`: parse each body and hand it to the protocol."""
    from pygls.exceptions import JsonRpcException

    while not stop_event.is_set():
        body = await reader.next_body()
        if body is None:
            break
        try:
            if _SURROGATE_ESCAPE.search(body):   # lone ones become U+FFFD, as in the engine
                body = json.dumps(_scrub(json.loads(body))).encode()
            message = json.loads(body, object_hook=protocol.structure_message)
        except (ValueError, RecursionError):   # not JSON, not UTF-8, nested too deep
            reader.resync_after_bad_body(body)
            continue
        try:
            protocol.handle_message(message)
        except Exception as exc:  # noqa: BLE001 - pygls's loop does the same
            log.exception("Unable to handle message")
            error_handler(exc, JsonRpcException)


def _scrub(value):
    """`value` with every lone surrogate (valid JSON escapes, not Unicode) replaced."""
    if isinstance(value, str):
        return SURROGATE.sub("\ufffd", value)
    if isinstance(value, list):
        return [_scrub(v) for v in value]
    if isinstance(value, dict):
        return {_scrub(k): _scrub(v) for k, v in value.items()}
    return value


def stdin_chunks(stream, executor) -> Callable[[], Awaitable[bytes]]:
    """Read whatever is available (up to CHUNK bytes) from a binary stream, off the loop."""
    read = getattr(stream, "read1", stream.read)

    def chunk() -> Awaitable[bytes]:
        return asyncio.get_running_loop().run_in_executor(executor, read, CHUNK)
    return chunk
