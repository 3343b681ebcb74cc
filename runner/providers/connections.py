"""A keep-alive connection pool whose cost per request does not grow with its size.

httpcore's own pool (1.0.x) re-scans every connection on each request and on each response close, and
its idle-connection check is itself a scan, so one request costs O(connections²) Python calls plus a
`poll()` per idle connection: with 32 connections that was 46% of the runner's CPU per model call
(bench/cpu_per_call.py; ~3 million `is_idle` calls for 534 calls). This pool keeps a stack of idle
connections per origin and a counter of free slots, so a request touches one connection.

It speaks httpcore's interface (`handle_async_request`, `aclose`), and `LeanTransport` puts it under
httpx's own transport, so requests, responses and the mapping of httpcore errors to httpx errors
(timeouts, dropped connections, `PoolTimeout`) are httpx's, unchanged. HTTP/1.1 only (one request a
connection at a time), as `make_http_client` configures.
"""

from __future__ import annotations

import ssl
from collections import deque
from collections.abc import AsyncIterable, AsyncIterator
from types import TracebackType
from typing import Any

import anyio
import httpcore
import httpx

from runner.providers.sockets import LeanBackend

__all__ = ["LeanPool", "LeanTransport"]

_Key = tuple[bytes, bytes, int]
"""An origin as (scheme, host, port): httpcore's `Origin` compares by value but does not hash."""


class _Slots:
    """At most `size` requests hold a connection; the others wait first come, first served, for at
    most the request's pool timeout (then `httpcore.PoolTimeout`, as httpcore's pool raises)."""

    def __init__(self, size: int) -> None:
        self.free = size
        self._waiters: deque[anyio.Event] = deque()

    async def acquire(self, wait_s: float | None) -> None:
        if self.free > 0 and not self._waiters:
            self.free -= 1
            return
        handed = anyio.Event()
        self._waiters.append(handed)
        try:
            with anyio.fail_after(wait_s):
                await handed.wait()
        except BaseException as exc:
            if handed.is_set():
                self.release()  # the slot arrived as we gave up: pass it on
            else:
                self._waiters.remove(handed)
            if isinstance(exc, TimeoutError):
                raise httpcore.PoolTimeout("no connection became free within the pool timeout") from None
            raise

    def release(self) -> None:
        if self._waiters:
            self._waiters.popleft().set()  # handed over: `free` stays as it is
        else:
            self.free += 1


class LeanPool:
    def __init__(self, *, ssl_context: ssl.SSLContext | None, max_connections: int,
                 keepalive_expiry: float | None, retries: int = 0) -> None:
        """`ssl_context`: None for httpx's default (certifi's roots), built at the first https connection:
        loading the roots costs ~25 ms of CPU, which a pool that only speaks to a local server never needs."""
        self._ssl_context = ssl_context
        self._keepalive_expiry = keepalive_expiry
        self._retries = retries
        self._max = max_connections
        self._slots = _Slots(max_connections)
        self._idle: dict[_Key, list[httpcore.AsyncHTTPConnection]] = {}
        self._open: set[httpcore.AsyncHTTPConnection] = set()
        self._network = LeanBackend()

    @property
    def max_connections(self) -> int:
        return self._max

    @property
    def connections(self) -> int:
        """Connections open or being opened (for tests and the benchmark)."""
        return len(self._open)

    async def handle_async_request(self, request: httpcore.Request) -> httpcore.Response:
        timeouts = request.extensions.get("timeout", {})
        origin = request.url.origin
        key = (origin.scheme, origin.host, origin.port)
        await self._slots.acquire(timeouts.get("pool"))
        try:
            while True:
                connection = await self._checkout(key, origin)
                try:
                    response = await connection.handle_async_request(request)
                except httpcore.ConnectionNotAvailable:
                    await self._discard(connection)  # the server had closed it meanwhile: open another
                    continue
                except BaseException:
                    await self._checkin(connection, key)
                    raise
                break
        except BaseException:
            self._slots.release()
            raise
        assert isinstance(response.stream, AsyncIterable)
        return httpcore.Response(status=response.status, headers=response.headers,
                                 content=_Returning(response.stream, self, connection, key),
                                 extensions=response.extensions)

    async def _checkout(self, key: _Key, origin: httpcore.Origin) -> httpcore.AsyncHTTPConnection:
        """The most recently used idle connection to `origin` that is still good, else a new one."""
        idle = self._idle.get(key)
        while idle:
            connection = idle.pop()
            if connection.is_available() and not connection.has_expired():
                return connection
            await self._discard(connection)
        if len(self._open) >= self._max:
            # Only idle connections to other origins can fill the pool here (this request holds a slot).
            await self._discard(self._oldest_idle())
        tls = self._tls() if origin.scheme == b"https" else None
        connection = _Connection(origin, ssl_context=tls, keepalive_expiry=self._keepalive_expiry,
                                 retries=self._retries, network_backend=self._network)
        self._open.add(connection)
        return connection

    def _tls(self) -> ssl.SSLContext:
        if self._ssl_context is None:
            self._ssl_context = httpx.create_ssl_context()
        return self._ssl_context

    async def _checkin(self, connection: httpcore.AsyncHTTPConnection, key: _Key) -> None:
        if connection.is_idle() and not connection.has_expired():
            idle = self._idle.setdefault(key, [])
            idle.append(connection)
            # The stack's bottom is the longest unused; close it once it expired (or the server hung up),
            # one check a request, so connections a smaller load no longer needs do not linger.
            if len(idle) > 1 and idle[0].has_expired():
                await self._discard(idle.pop(0))
        elif connection.is_closed():
            self._open.discard(connection)
        else:
            await self._discard(connection)

    def _oldest_idle(self) -> httpcore.AsyncHTTPConnection:
        for idle in self._idle.values():
            if idle:
                return idle.pop(0)
        raise RuntimeError("connection pool: no idle connection to make room")  # slots guarantee one

    async def _discard(self, connection: httpcore.AsyncHTTPConnection) -> None:
        self._open.discard(connection)
        with anyio.CancelScope(shield=True):
            await connection.aclose()

    async def _released(self, connection: httpcore.AsyncHTTPConnection, key: _Key) -> None:
        try:
            await self._checkin(connection, key)
        finally:
            self._slots.release()

    async def aclose(self) -> None:
        connections, self._open, self._idle = list(self._open), set(), {}
        with anyio.CancelScope(shield=True):
            for connection in connections:
                await connection.aclose()

    async def __aenter__(self) -> LeanPool:
        return self

    async def __aexit__(self, exc_type: type[BaseException] | None = None, exc_value: BaseException | None = None,
                        traceback: TracebackType | None = None) -> None:
        await self.aclose()


class _Returning:
    """A response body that hands its connection back to the pool when closed (read to the end or not)."""

    def __init__(self, stream: AsyncIterable[bytes], pool: LeanPool, connection: httpcore.AsyncHTTPConnection,
                 key: _Key) -> None:
        self._stream = stream
        self._pool = pool
        self._connection = connection
        self._key = key
        self._closed = False

    async def __aiter__(self) -> AsyncIterator[bytes]:
        try:
            async for part in self._stream:
                yield part
        except BaseException:
            await self.aclose()
            raise

    async def aclose(self) -> None:
        if self._closed:
            return
        self._closed = True
        with anyio.CancelScope(shield=True):
            try:
                closer = getattr(self._stream, "aclose", None)
                if closer is not None:
                    await closer()
            finally:
                await self._pool._released(self._connection, self._key)


class _Connection(httpcore.AsyncHTTPConnection):
    """httpcore's connection, with locks that do not yield to the event loop when they are free.

    httpcore takes an anyio lock three times a request (the connection's request lock, the HTTP/1.1
    state lock on the way in and again when the response closes), and anyio yields to the loop on every
    acquire, free or not. Each yield puts the call at the back of the loop's queue: at 32 calls in flight
    the calls of a burst then advance in lock-step, and each one's next request leaves only once the whole
    burst was read (bench/cpu_per_call.py). This pool hands a connection to one request at a time, so the
    locks are never contended; anyio's `fast_acquire` keeps them locks without the yield. The HTTP/1.1
    connection exists only after the first request's connect, so its lock is swapped after that request.
    Should httpcore rename these fields, the swap is skipped and its own locks stay (tested)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        if hasattr(self, "_request_lock"):
            self._request_lock = _free_lock()  # type: ignore[assignment]

    async def handle_async_request(self, request: httpcore.Request) -> httpcore.Response:
        response = await super().handle_async_request(request)
        inner = getattr(self, "_connection", None)
        if inner is not None and hasattr(inner, "_state_lock") and not isinstance(inner._state_lock, anyio.Lock):
            inner._state_lock = _free_lock()  # not held here: it is taken again when the response closes
        return response


def _free_lock() -> anyio.Lock:
    return anyio.Lock(fast_acquire=True)


class LeanTransport(httpx.AsyncHTTPTransport):
    """httpx's HTTP transport with `LeanPool` in place of httpcore's pool."""

    def __init__(self, limits: httpx.Limits, retries: int = 0, ssl_context: ssl.SSLContext | None = None) -> None:
        """`ssl_context`: None for httpx's default, built when the first https connection opens."""
        # Not httpx's __init__: it would build httpcore's pool (and a second TLS context) only to drop it.
        # httpx's transport keeps its pool in `_pool`; every other part of the transport is httpx's own.
        self._pool = LeanPool(  # type: ignore[assignment]
            ssl_context=ssl_context, max_connections=limits.max_connections or 100,
            keepalive_expiry=limits.keepalive_expiry, retries=retries)
