"""httpcore's network streams on asyncio's own transports, without anyio's per-operation machinery.

httpcore's anyio backend wraps every read and write in a cancel scope (`fail_after`) and anyio's stream
yields to the event loop before each operation, even when the bytes are already there. At 32 calls in
flight that was a quarter of a model call's CPU, and the yields put each task at the back of the
loop's queue several times a call, so the calls of a burst advance in lock-step and each one's next
request leaves only after the whole burst was processed (bench/cpu_per_call.py).

Here a read returns buffered bytes at once and a write hands its bytes to the transport at once; only a
read with nothing buffered, or a write the kernel cannot take yet, waits, with its timeout as one timer.
Connecting is still anyio's (`anyio.connect_tcp`: name resolution, happy eyeballs, local address); its
asyncio transport then gets our protocol. The errors are httpcore's, mapped as its anyio backend maps
them (`ReadTimeout`, `ReadError`, `WriteTimeout`, `WriteError`, `ConnectError`, `ConnectTimeout`), and
a read after the server closed returns b"" as there. Whenever the transport cannot be taken over (not
asyncio, or anyio's stream changed), the connection keeps httpcore's own anyio stream.
"""

# ruff: noqa: ASYNC109  (httpcore's network interface names its timeouts `timeout`; we implement it)

from __future__ import annotations

import asyncio
import ssl
import typing
from collections.abc import Iterable

import anyio
import httpcore
from httpcore import AsyncNetworkBackend, AsyncNetworkStream
from httpcore._backends.anyio import AnyIOBackend, AnyIOStream
from httpcore._utils import is_socket_readable

__all__ = ["LeanBackend", "LeanStream"]

_PAUSE_READING_AT = 1 << 20
"""Bytes buffered unread before the socket stops being read (a reply read slower than it arrives)."""

_TRANSPORT_METHODS = ("set_protocol", "get_protocol", "set_write_buffer_limits", "pause_reading", "resume_reading",
                      "write", "close", "is_closing", "get_extra_info")

SocketOption = tuple[int, int, int] | tuple[int, int, bytes | bytearray] | tuple[int, int, None, int]


class _Protocol(asyncio.Protocol):
    """What arrived, whether the peer is gone, and who waits for either."""

    def __init__(self) -> None:
        self.transport: asyncio.Transport | None = None
        self.buffer = bytearray()
        self.at_eof = False
        self.lost = False
        self.error: BaseException | None = None
        self.writable = True
        self._read_waiter: asyncio.Future[None] | None = None
        self._write_waiter: asyncio.Future[None] | None = None
        self._reading = True

    def take_over(self, transport: asyncio.Transport) -> None:
        self.transport = transport
        transport.set_protocol(self)
        # As anyio sets it: a write is done once the kernel took every byte, so its timeout means that.
        transport.set_write_buffer_limits(0)
        transport.resume_reading()

    def data_received(self, data: bytes) -> None:
        self.buffer += data
        if len(self.buffer) >= _PAUSE_READING_AT and self.transport is not None:
            self._reading = False
            self.transport.pause_reading()
        _wake(self._read_waiter)

    def eof_received(self) -> bool:
        self.at_eof = True
        _wake(self._read_waiter)
        return True  # keep our half open, as anyio does: the close is httpcore's to make

    def connection_lost(self, exc: Exception | None) -> None:
        self.lost = True
        self.error = exc
        self.writable = True
        _wake(self._read_waiter)
        _wake(self._write_waiter)

    def pause_writing(self) -> None:
        self.writable = False

    def resume_writing(self) -> None:
        self.writable = True
        _wake(self._write_waiter)

    def take(self, max_bytes: int) -> bytes:
        data = bytes(self.buffer[:max_bytes])
        del self.buffer[:max_bytes]
        if not self._reading and len(self.buffer) < _PAUSE_READING_AT and self.transport is not None:
            self._reading = True
            self.transport.resume_reading()
        return data

    async def wait_readable(self, timeout: float | None) -> None:
        self._read_waiter = asyncio.get_running_loop().create_future()
        try:
            await _within(self._read_waiter, timeout)
        finally:
            self._read_waiter = None

    async def wait_writable(self, timeout: float | None) -> None:
        self._write_waiter = asyncio.get_running_loop().create_future()
        try:
            await _within(self._write_waiter, timeout)
        finally:
            self._write_waiter = None


def _wake(waiter: asyncio.Future[None] | None) -> None:
    if waiter is not None and not waiter.done():
        waiter.set_result(None)


def _expire(waiter: asyncio.Future[None]) -> None:
    if not waiter.done():
        waiter.set_exception(TimeoutError())


async def _within(waiter: asyncio.Future[None], timeout: float | None) -> None:
    """Wait for `waiter`; TimeoutError after `timeout` seconds (None: no limit). One timer, no task."""
    if timeout is None:
        await waiter
        return
    timer = asyncio.get_running_loop().call_later(max(0.0, timeout), _expire, waiter)
    try:
        await waiter
    finally:
        timer.cancel()


class LeanStream(AsyncNetworkStream):
    def __init__(self, protocol: _Protocol, transport: asyncio.Transport) -> None:
        self._protocol = protocol
        self._transport = transport
        self._closed = False

    async def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        protocol = self._protocol
        while True:
            if protocol.buffer:
                return protocol.take(max_bytes)
            if self._closed:
                raise httpcore.ReadError("the connection was closed")
            if protocol.lost and protocol.error is not None:
                raise httpcore.ReadError(str(protocol.error) or type(protocol.error).__name__) from protocol.error
            if protocol.at_eof or protocol.lost:
                return b""
            try:
                await protocol.wait_readable(timeout)
            except TimeoutError as exc:
                raise httpcore.ReadTimeout(str(exc)) from exc

    async def write(self, buffer: bytes, timeout: float | None = None) -> None:
        if not buffer:
            return
        protocol = self._protocol
        if self._closed or protocol.lost or self._transport.is_closing():
            error = protocol.error
            raise httpcore.WriteError(str(error) if error else "the connection was closed") from error
        self._transport.write(buffer)
        while not protocol.writable and not protocol.lost:
            try:
                await protocol.wait_writable(timeout)
            except TimeoutError as exc:
                raise httpcore.WriteTimeout(str(exc)) from exc
        if protocol.lost and protocol.error is not None:
            raise httpcore.WriteError(str(protocol.error)) from protocol.error

    async def aclose(self) -> None:
        self._closed = True
        self._transport.close()

    async def start_tls(self, ssl_context: ssl.SSLContext, server_hostname: str | None = None,
                        timeout: float | None = None) -> AsyncNetworkStream:
        loop = asyncio.get_running_loop()
        try:
            transport = await loop.start_tls(self._transport, self._protocol, ssl_context,
                                             server_hostname=server_hostname, ssl_handshake_timeout=timeout)
        except TimeoutError as exc:
            await self.aclose()
            raise httpcore.ConnectTimeout(str(exc)) from exc
        except (ssl.SSLError, OSError) as exc:
            await self.aclose()
            raise httpcore.ConnectError(str(exc)) from exc
        if transport is None:  # the peer closed during the handshake
            await self.aclose()
            raise httpcore.ConnectError("the connection closed during the TLS handshake")
        self._protocol.transport = transport
        return LeanStream(self._protocol, transport)

    def get_extra_info(self, info: str) -> typing.Any:
        if info == "is_readable":  # what httpcore asks of an idle connection: did the server send or hang up?
            protocol = self._protocol
            if protocol.buffer or protocol.at_eof or protocol.lost:
                return True
            # The loop may not have seen a hang-up that is already in the kernel (a server closing right
            # after its reply): ask the socket, as httpcore's anyio stream does.
            return is_socket_readable(self._transport.get_extra_info("socket"))
        name = {"ssl_object": "ssl_object", "client_addr": "sockname", "server_addr": "peername",
                "socket": "socket"}.get(info)
        return self._transport.get_extra_info(name) if name is not None else None


class LeanBackend(AsyncNetworkBackend):
    """httpcore's anyio backend for connecting, `LeanStream` for the connection's life."""

    def __init__(self) -> None:
        self._anyio = AnyIOBackend()

    async def connect_tcp(self, host: str, port: int, timeout: float | None = None,
                          local_address: str | None = None,
                          socket_options: Iterable[SocketOption] | None = None) -> AsyncNetworkStream:
        stream = await self._anyio.connect_tcp(host, port, timeout=timeout, local_address=local_address,
                                               socket_options=socket_options)
        return _taken_over(stream)

    async def connect_unix_socket(self, path: str, timeout: float | None = None,
                                  socket_options: Iterable[SocketOption] | None = None) -> AsyncNetworkStream:
        return await self._anyio.connect_unix_socket(path, timeout=timeout, socket_options=socket_options)

    async def sleep(self, seconds: float) -> None:
        await anyio.sleep(seconds)


def _taken_over(stream: AsyncNetworkStream) -> AsyncNetworkStream:
    """The anyio stream's asyncio transport under our protocol; the anyio stream itself if that can't be."""
    inner = getattr(stream, "_stream", None) if isinstance(stream, AnyIOStream) else None
    found = getattr(inner, "_transport", None)
    # uvloop's transports are asyncio transports in all but their class, so ask for what is used.
    if not all(callable(getattr(found, name, None)) for name in _TRANSPORT_METHODS):
        return stream
    transport = typing.cast(asyncio.Transport, found)
    if transport.is_closing():
        return stream
    protocol = _Protocol()
    for early in getattr(transport.get_protocol(), "read_queue", ()):  # anything that arrived before us
        protocol.buffer += early
    protocol.take_over(transport)
    return LeanStream(protocol, transport)
