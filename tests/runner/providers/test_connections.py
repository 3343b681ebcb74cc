"""The connection pool under `make_http_client`: keep-alive reuse, its size, the pool timeout, connections
the server closed, abandoned responses, and a cost per request that does not grow with the pool."""

from __future__ import annotations

import traceback

import anyio
import anyio.abc
import httpcore
import httpx
import pytest

from bench.mock_provider import Reply, serve_mock
from runner.providers import HttpSettings, make_http_client
from runner.providers.connections import LeanPool

BODY = b'{"ok": true}'


def _pool(http: httpx.AsyncClient) -> LeanPool:
    pool = http._transport._pool  # type: ignore[attr-defined]
    assert isinstance(pool, LeanPool)
    return pool


async def _post(http: httpx.AsyncClient, url: str) -> int:
    body = {"model": "m", "messages": [{"role": "user", "content": "hi"}], "stream": True}
    async with http.stream("POST", url + "/v1/chat/completions", json=body) as response:
        await response.aread()
        return response.status_code


async def test_concurrent_calls_share_at_most_max_connections_kept_alive() -> None:
    async with serve_mock() as mock, make_http_client(HttpSettings(max_connections=4)) as http:
        mock.script(*[Reply(text="x", delay_s=0.05) for _ in range(40)])
        statuses: list[int] = []

        async def caller() -> None:
            for _ in range(5):
                statuses.append(await _post(http, mock.base_url))

        async with anyio.create_task_group() as group:
            for _ in range(8):
                group.start_soon(caller)
        assert statuses == [200] * 40
        # Kept alive: 40 requests over at most 4 connections, and the pool never held more.
        assert 1 <= mock.connections <= 4
        assert _pool(http).connections <= 4


async def test_waiting_longer_than_the_pool_timeout_is_httpx_pool_timeout() -> None:
    settings = HttpSettings(max_connections=1, pool_timeout_s=0.2)
    async with serve_mock() as mock, make_http_client(settings) as http:
        mock.script(Reply(text="held", chunk_delay_s=30), Reply(text="late"))
        body = {"model": "m", "messages": [], "stream": True}
        async with http.stream("POST", mock.base_url + "/v1/chat/completions", json=body) as held:
            assert held.status_code == 200  # its body is still coming: the one connection is taken
            with pytest.raises(httpx.PoolTimeout):
                await _post(http, mock.base_url)
        # The held response is closed unread: its connection is dropped, its slot comes back.
        assert await _post(http, mock.base_url) == 200


async def test_cancelled_waiters_and_abandoned_bodies_give_their_slots_back() -> None:
    async with serve_mock() as mock, make_http_client(HttpSettings(max_connections=2)) as http:
        mock.script(*[Reply(text="slow", chunk_delay_s=30) for _ in range(6)])
        for _ in range(3):
            with anyio.move_on_after(0.3):  # two bodies stall, more callers wait for a slot; all cancelled
                async with anyio.create_task_group() as group:
                    for _ in range(4):
                        group.start_soon(_post, http, mock.base_url)
        assert _pool(http).connections == 0  # unread bodies end their connections
        assert await _post(http, mock.base_url) == 200
        assert await _post(http, mock.base_url) == 200


async def _closing_server(listener: anyio.abc.SocketListener) -> None:
    """Answers each request keep-alive style (no `Connection: close`), then hangs up anyway."""

    async def handle(stream: anyio.abc.SocketStream) -> None:
        async with stream:
            data = b""
            while b"\r\n\r\n" not in data:
                data += await stream.receive()
            head, _, rest = data.partition(b"\r\n\r\n")
            length = next((int(line.split(b":")[1]) for line in head.split(b"\r\n")
                           if line.lower().startswith(b"content-length:")), 0)
            while len(rest) < length:
                rest += await stream.receive()
            await stream.send(b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: "
                              + str(len(BODY)).encode() + b"\r\n\r\n" + BODY)

    await listener.serve(handle)


async def test_a_kept_alive_connection_the_server_closed_is_replaced() -> None:
    listener = await anyio.create_tcp_listener(local_host="127.0.0.1", local_port=0)
    port = listener.extra(anyio.abc.SocketAttribute.local_port)
    async with listener, anyio.create_task_group() as group, make_http_client(HttpSettings(max_connections=2)) as http:
        group.start_soon(_closing_server, listener)
        for _ in range(10):
            response = await http.post(f"http://127.0.0.1:{port}/x", content=b"{}")
            assert response.content == BODY
            await anyio.sleep(0.05)  # the hang-up reaches the idle connection before it is reused
        group.cancel_scope.cancel()


async def test_work_per_request_does_not_grow_with_the_pool(monkeypatch: pytest.MonkeyPatch) -> None:
    """httpcore's own pool scanned every connection (and each connection's idleness, again over all of
    them) at each request and each response close: ~2 x 32² `is_idle` calls a request with 32 open."""
    checks = 0
    is_idle = httpcore.AsyncHTTPConnection.is_idle

    def counted(self: httpcore.AsyncHTTPConnection) -> bool:
        nonlocal checks
        checks += 1
        return is_idle(self)

    monkeypatch.setattr(httpcore.AsyncHTTPConnection, "is_idle", counted)
    async with serve_mock() as mock, make_http_client(HttpSettings(max_connections=32)) as http:
        mock.script(*[Reply(text="x", delay_s=0.05) for _ in range(32)])
        async with anyio.create_task_group() as group:  # 32 connections open
            for _ in range(32):
                group.start_soon(_post, http, mock.base_url)
        assert mock.connections == 32
        checks = 0
        for _ in range(20):
            assert await _post(http, mock.base_url) == 200
        assert checks <= 20 * 2


async def test_a_proxy_in_the_environment_keeps_httpx_stock_transport(monkeypatch: pytest.MonkeyPatch) -> None:
    """httpx honours HTTPS_PROXY and friends only with its own transport, so that one is kept."""
    monkeypatch.setenv("HTTPS_PROXY", "http://127.0.0.1:9")
    async with make_http_client() as http:
        assert not isinstance(http._transport._pool, LeanPool)  # type: ignore[attr-defined]
        assert http._mounts  # the proxy is mounted for https:// URLs


async def test_connections_idle_past_their_keepalive_are_closed() -> None:
    async with serve_mock() as mock, make_http_client(HttpSettings(max_connections=8, keepalive_expiry_s=0.2)) as http:
        mock.script(*[Reply(text="x", delay_s=0.05) for _ in range(6)])
        async with anyio.create_task_group() as group:
            for _ in range(6):
                group.start_soon(_post, http, mock.base_url)
        assert _pool(http).connections == 6
        await anyio.sleep(0.5)  # all six idle past their keep-alive
        for _ in range(6):
            assert await _post(http, mock.base_url) == 200
        assert _pool(http).connections == 1  # one at a time needs one connection; the rest were closed


async def test_a_request_on_a_kept_alive_connection_makes_no_trip_through_the_loop_for_its_locks(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """httpcore's locks (three acquires a request) yielded to the event loop even when free, which kept a
    burst of calls in lock-step; the pool's connections take them without that trip, and stay correct."""
    from anyio._backends._asyncio import AsyncIOBackend

    trips = 0
    checkpoint = AsyncIOBackend.cancel_shielded_checkpoint

    async def counted() -> None:
        nonlocal trips
        callers = traceback.extract_stack(limit=6)
        trips += any("/httpcore/" in frame.filename for frame in callers)  # not the in-process mock's own
        await checkpoint()

    async with serve_mock() as mock, make_http_client(HttpSettings(max_connections=2)) as http:
        mock.script(*[Reply(text="x", delay_s=0.02) for _ in range(12)])
        assert await _post(http, mock.base_url) == 200  # the first request opens the connection
        monkeypatch.setattr(AsyncIOBackend, "cancel_shielded_checkpoint", staticmethod(counted))
        for _ in range(3):
            assert await _post(http, mock.base_url) == 200
        assert trips == 0
        async with anyio.create_task_group() as group:  # two at a time on two connections: still fine
            for _ in range(8):
                group.start_soon(_post, http, mock.base_url)
        assert _pool(http).connections == 2
