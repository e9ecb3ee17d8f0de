"""The LSP framer (`poimen.lsp.framing`) against garbage between frames: every valid frame
after the garbage is still read, whatever the garbage and however the stream is chunked."""
from __future__ import annotations

import asyncio
import json

from hypothesis import given, settings, strategies as st

from poimen.lsp.framing import FrameReader
from stress.lspwire import frame


def _bodies(stream: bytes, cuts: list[int], max_message: int = 1 << 20) -> list[bytes]:
    pieces = [stream[a:b] for a, b in zip([0, *cuts], [*cuts, len(stream)]) if b > a]

    async def run() -> list[bytes]:
        feed = iter(pieces)

        async def chunk() -> bytes:
            return next(feed, b"")
        reader, out = FrameReader(chunk, max_message), []
        while (body := await reader.next_body()) is not None:
            out.append(body)
        return out
    return asyncio.run(run())


def _body(n: int) -> bytes:
    return json.dumps({"jsonrpc": "2.0", "id": n, "method": "shutdown"}).encode()


garbage = st.binary(max_size=300).filter(lambda b: b"content-length" not in b.lower())
header_junk = st.sampled_from([
    b"Content-Length: abc\r\n\r\n{}", b"Content-Length: -5\r\n\r\n{}",
    b"Content-Length: 0x10\r\n\r\n{}", b"Content-Length: 2.5\r\n\r\n{}",
    b"Content-Length: 1000000000000\r\n\r\n", b"Content-Length: 99999999999999999999999\r\n\r\n",
    b"Content-Length: 400\r\n\r\n{\"cut\": ", b"Content-Length: 3\r\n\r\n{\"too long\": 1}",
    b"X-Garbage: 1\r\n\r\n", b"\r\n\r\n", b"Content-Length: 5\r\nContent-Length: 5\r\n\r\n{}{}{"])


@settings(max_examples=400, deadline=None)
@given(st.lists(st.tuples(st.one_of(garbage, header_junk), st.booleans()), min_size=1,
                max_size=6), st.lists(st.integers(1, 2000), max_size=8))
def test_every_valid_frame_after_garbage_is_read(parts, cuts):
    stream, wanted = b"", []
    for n, (junk, lf_only) in enumerate(parts):
        body = _body(n)
        stream += junk + (b"Content-Length: %d\n\n" % len(body) + body if lf_only
                          else frame(body))
        wanted.append(body)
    got = _bodies(stream, sorted(c for c in set(cuts) if c < len(stream)))
    assert [b for b in got if b in wanted] == wanted


def test_a_length_past_the_maximum_is_refused_without_reading_it():
    body = _body(1)
    stream = b"Content-Length: 5000\r\n\r\n" + b"x" * 5000 + frame(body)
    assert _bodies(stream, [], max_message=1000) == [body]
