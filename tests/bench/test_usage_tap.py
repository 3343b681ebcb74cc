"""The recording proxy of `bench/local_server.py` between a client and the loopback mock: it relays
replies unchanged, keeps the server's own usage, and one connection's trouble never stops it."""

from __future__ import annotations

import anyio
import httpx

from bench.mock_provider import serve_mock
from bench.usage_tap import usage_tap

ASK = {"model": "m", "messages": [{"role": "user", "content": "hi"}], "max_tokens": 8}


async def test_replies_are_relayed_and_their_usage_kept() -> None:
    async with serve_mock() as mock, usage_tap(mock.base_url) as tap, httpx.AsyncClient() as http:
        reply = await http.post(tap.base_url + "/v1/chat/completions", json=ASK)
    assert reply.status_code == 200
    assert reply.json()["usage"]["prompt_tokens"] == tap.totals()["usage_prompt"]


async def test_tool_calls_in_replies_are_counted_streamed_or_not() -> None:
    ask = {**ASK, "tools": [{"type": "function", "function": {"name": "lookup", "parameters": {"type": "object"}}}]}
    async with serve_mock() as mock, usage_tap(mock.base_url) as tap, httpx.AsyncClient() as http:
        for stream in (False, True):
            reply = await http.post(tap.base_url + "/v1/chat/completions", json={**ask, "stream": stream})
            assert reply.status_code == 200
    assert tap.totals()["tool_calls"] == 2 and tap.totals()["replies_with_calls"] == 2


async def test_a_connection_dropped_before_or_during_a_request_does_not_stop_the_tap() -> None:
    # Seen on the real server: a client connection that ended early crashed its handler, which cancelled
    # the tap's task group; every later request then waited, unaccepted, and the pilot hung.
    async with serve_mock() as mock, usage_tap(mock.base_url) as tap, httpx.AsyncClient() as http:
        port = int(tap.base_url.rsplit(":", 1)[1])
        for partial in (b"", b"POST /v1/chat/completions HTTP/1.1\r\ncontent-length: 500\r\n\r\n{\"mo"):
            stream = await anyio.connect_tcp("127.0.0.1", port)
            await stream.send(partial) if partial else None
            await stream.aclose()
        await anyio.sleep(0.2)  # let the tap see both closes before the next request
        reply = await http.post(tap.base_url + "/v1/chat/completions", json=ASK)
    assert reply.status_code == 200
    assert tap.totals()["replies"] == 1
