"""The runner's end of a worker's socket: frames in and out through an asyncio protocol.

Why a protocol and not a stream: a serving stream asks its worker two small requests per task (its
context, then its learn), about ten thousand on a three-scenario offline sweep. A socket stream waits
for readability by adding and removing the socket from the event loop's poller on every receive and
yields on every send; the protocol keeps the socket in the poller for the worker's life, writes without
waiting, and parses frames as their bytes arrive. Measured in bench/README.md ("Round trips through a
protocol").

What the worker may not do through it: flood the runner. Reading pauses while more than `HOLD_BYTES`
of whole frames wait unread (the kernel's buffer then holds the rest, as for a stream read only when
asked): not at every frame, for pausing and resuming costs two changes to the poller per request; a
frame longer than `MAX_FRAME` or not JSON ends the link with `FrameError`.
"""

from __future__ import annotations

import asyncio
import socket
from collections import deque
from collections.abc import Mapping
from typing import Any, cast

import anyio
import orjson

from runner.workers.wire import HEADER, MAX_FRAME, FrameError, encode

__all__ = ["HOLD_BYTES", "FrameLink", "open_link"]

HOLD_BYTES = 256 * 1024
"""Unread frames the runner holds before it stops reading: a reply and a few model calls fit in it."""


class FrameLink(asyncio.Protocol):
    """Frames over a connected socket. `send` may be called by several tasks (a method's model calls
    are answered concurrently): each frame is written whole, in call order. `receive` belongs to one
    task at a time (the worker's request lock)."""

    def __init__(self) -> None:
        self._transport: asyncio.Transport | None = None
        self._buffer = bytearray()
        self._frames: deque[tuple[dict[str, Any], int]] = deque()
        """Whole frames not yet received, each with its length on the wire."""
        self._held = 0
        """The bytes of `_frames`."""
        self._paused = False
        self._loop: asyncio.AbstractEventLoop | None = None
        """Kept from `connection_made`: asking for the running loop costs a system call on Python 3.11 (its
        fork check), and a round trip asked for it three times."""
        self._arrived: asyncio.Future[None] | None = None
        self._ended: BaseException | None = None
        """Why no more frames will come (after the queued ones): the peer's end, a broken link, a bad frame."""
        self._writable: asyncio.Future[None] | None = None
        """Set while the transport's write buffer is over its high-water mark."""

    # ------------------------------------------------------------------------- asyncio's callbacks

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self._transport = cast(asyncio.Transport, transport)  # uvloop's is one in all but its class
        self._loop = asyncio.get_running_loop()

    def data_received(self, data: bytes) -> None:
        self._buffer += data
        try:
            self._parse()
        except FrameError as exc:
            self._end(exc)
            if self._transport is not None:
                self._transport.abort()
            return
        if self._held > HOLD_BYTES and self._transport is not None and not self._paused:
            self._transport.pause_reading()  # enough waits unread: the rest stays in the kernel's buffer
            self._paused = True
        self._wake()

    def eof_received(self) -> bool:
        self._end(anyio.EndOfStream())
        return False

    def connection_lost(self, exc: Exception | None) -> None:
        self._end(anyio.EndOfStream() if exc is None else anyio.BrokenResourceError())
        self._release_writers()

    def pause_writing(self) -> None:
        if self._writable is None:
            self._writable = self.loop.create_future()

    def resume_writing(self) -> None:
        self._release_writers()

    # ---------------------------------------------------------------------------------- the face

    async def send(self, message: Mapping[str, Any]) -> None:
        transport = self._transport
        if transport is None or transport.is_closing():
            closed_here = self._ended is None or isinstance(self._ended, anyio.ClosedResourceError)
            raise anyio.ClosedResourceError if closed_here else anyio.BrokenResourceError
        transport.write(encode(message))
        while self._writable is not None:
            await asyncio.shield(self._writable)
            if transport.is_closing():
                raise anyio.BrokenResourceError

    async def receive(self) -> dict[str, Any]:
        while not self._frames:
            if self._ended is not None:
                raise self._ended
            self._arrived = self.loop.create_future()
            try:
                await self._arrived
            finally:
                self._arrived = None
        frame, size = self._frames.popleft()
        self._held -= size
        if self._paused and self._held <= HOLD_BYTES and self._transport is not None and self._ended is None:
            self._transport.resume_reading()
            self._paused = False
        return frame

    def abort(self) -> None:
        """End the link at once, unsent frames dropped (the worker is being stopped)."""
        if self._transport is not None:
            self._transport.abort()
        self._end(anyio.BrokenResourceError())

    async def aclose(self) -> None:
        if self._transport is not None:
            self._transport.close()
        self._end(anyio.ClosedResourceError())

    @property
    def loop(self) -> asyncio.AbstractEventLoop:
        """The event loop the link runs on (for timers on it, without asking for the running loop)."""
        assert self._loop is not None, "a link is made by open_link, which connects it"
        return self._loop

    # ------------------------------------------------------------------------------------- inside

    def _parse(self) -> None:
        while len(self._buffer) >= HEADER.size:
            (length,) = HEADER.unpack_from(self._buffer)
            if length > MAX_FRAME:
                raise FrameError(f"a frame of {length} bytes (the limit is {MAX_FRAME})")
            end = HEADER.size + length
            if len(self._buffer) < end:
                return
            body = bytes(memoryview(self._buffer)[HEADER.size:end])
            del self._buffer[:end]
            self._held += end
            try:
                self._frames.append((orjson.loads(body), end))
            except orjson.JSONDecodeError as exc:
                raise FrameError(f"a frame that is not JSON ({exc})") from None

    def _end(self, why: BaseException) -> None:
        if self._ended is None:
            self._ended = why
        self._wake()

    def _wake(self) -> None:
        if self._arrived is not None and not self._arrived.done():
            self._arrived.set_result(None)

    def _release_writers(self) -> None:
        waiting, self._writable = self._writable, None
        if waiting is not None and not waiting.done():
            waiting.set_result(None)


async def open_link(sock: socket.socket) -> FrameLink:
    """A link over `sock` (connected; the link owns it from here)."""
    sock.setblocking(False)
    _, link = await asyncio.get_running_loop().connect_accepted_socket(FrameLink, sock)
    return link
