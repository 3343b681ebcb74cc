"""`body_lines` reads a streamed body exactly as httpx's `aiter_lines` does: the same lines from the
same bytes however the bytes are cut into pieces (line breaks and UTF-8 characters split across pieces,
lone \\r, the breaks `str.splitlines` knows, a last line without a break, bad bytes, a charset, gzip),
both read from a real loopback server and from every cut of a few tricky bodies."""

from __future__ import annotations

import gzip
import random
from collections.abc import AsyncIterator

import anyio
import anyio.abc
import httpx

from runner.providers import make_http_client
from runner.providers.sse import body_lines
from tests.runner.providers.test_sockets import _read_request, _server

BODIES = [
    b"data: {\"a\": 1}\n\ndata: [DONE]\n\n",
    b"event: x\r\ndata: one\r\n\r\ndata: two\r\rdata: three\rlast line without a break",
    "data: caf\u00e9 \u2603 \U0001f600\n\u2028next\x0bv\x0cf\x1cfs\x85nel\r\n".encode(),
    b"bad \xff\xfe bytes\n\xe2\x82",  # invalid, then a character cut short at the end
    b"\r\n\r\n\n\r\r\n",
    b"",
]


class _Pieces(httpx.AsyncByteStream):
    def __init__(self, pieces: list[bytes]) -> None:
        self._pieces = pieces

    async def __aiter__(self) -> AsyncIterator[bytes]:
        for piece in self._pieces:
            yield piece


def _response(pieces: list[bytes], headers: dict[str, str] | None = None) -> httpx.Response:
    return httpx.Response(200, headers=headers or {}, stream=_Pieces(pieces))


async def _both(pieces: list[bytes], headers: dict[str, str] | None = None) -> tuple[list[str], list[str]]:
    theirs = [line async for line in _response(pieces, headers).aiter_lines()]
    ours = [line async for line in body_lines(_response(pieces, headers), lambda: None)]
    return ours, theirs


def _cuts(body: bytes, rng: random.Random) -> list[list[bytes]]:
    whole = [[body]]
    bytewise = [[body[i:i + 1] for i in range(len(body))]]
    at_random = []
    for _ in range(30):
        points = sorted(rng.sample(range(1, len(body)), min(len(body) - 1, rng.randint(1, 6)))) if len(body) > 1 else []
        edges = [0, *points, len(body)]
        at_random.append([body[a:b] for a, b in zip(edges, edges[1:], strict=False)])
    return whole + bytewise + at_random


async def test_every_cut_of_tricky_bodies_gives_httpx_s_lines() -> None:
    rng = random.Random(14)
    for body in BODIES:
        for pieces in _cuts(body, rng):
            ours, theirs = await _both(pieces)
            assert ours == theirs, (body, pieces)


async def test_the_charset_and_the_content_encoding_are_honoured() -> None:
    text = "premi\u00e8re ligne\nzweite Zeile \u00fc\n"
    ours, theirs = await _both([text.encode("latin-1")], {"content-type": "text/event-stream; charset=latin-1"})
    assert ours == theirs == ["premi\u00e8re ligne", "zweite Zeile \u00fc"]
    packed = gzip.compress(BODIES[1])
    ours, theirs = await _both([packed[:7], packed[7:]], {"content-encoding": "gzip"})
    assert ours == theirs and ours[0] == "event: x"


async def test_a_stream_from_a_loopback_server_in_small_pieces() -> None:
    body = BODIES[1] + BODIES[2]

    async def dribble(stream: anyio.abc.SocketStream) -> None:
        await _read_request(stream)
        await stream.send(b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n")
        for start in range(0, len(body), 3):
            piece = body[start:start + 3]
            await stream.send(b"%x\r\n%s\r\n" % (len(piece), piece))
            await anyio.sleep(0.001)
        await stream.send(b"0\r\n\r\n")

    async with _server(dribble) as port, make_http_client() as http:
        url = f"http://127.0.0.1:{port}/x"
        async with http.stream("POST", url, content=b"{}") as response:
            ours = [line async for line in body_lines(response, lambda: None)]
        async with http.stream("POST", url, content=b"{}") as response:
            theirs = [line async for line in response.aiter_lines()]
    assert ours == theirs and len(ours) > 5
