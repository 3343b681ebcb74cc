"""Time queued at a server is not a stalled stream.

A server with S parallel slots (llama.cpp's `-np`, published in its `/props` and `/slots`) works on S
requests at a time; the others wait in its queue and receive nothing meanwhile, not even the response
headers (llama.cpp sends them when a slot takes the request). A stall timeout that counts from the send
therefore cuts requests that are only waiting their turn, and the retry goes to the back of the same
queue. So, before its first byte, a streamed attempt is counted, by our own calls in flight to that
server in the order they were sent, as

    within the slots   fewer than S of our calls sent before it are still unfinished: the server should
                       be working on it, so its stall timeout runs (no byte for the stall time fails the
                       attempt) and so does the attempt's own timeout;
    queued             S or more of ours are ahead of it: neither clock runs. It moves into the slots when
                       one of those ahead ends (answered, failed or cut), and its clocks start then.

Once bytes flow, the stall timeout runs between them as before. With S unknown (the server publishes
nothing) every call counts as within the slots: the clocks run from the send, as for a hosted API.
Only our own calls are counted: another client's calls on the same server are invisible, so a shared
server's queue can still cut ours (give such a server `max_concurrency` = its slots).

`StallWatch` is the stall timeout itself, kept as the deadline of one cancel scope around the
attempt's exchange instead of httpx's read timeout (which cannot tell queued from stalled). The
deadline moves at most every eighth of the stall time, so a byte costs one clock read: a stream is cut
after between 1 and 1.125 times the stall time of silence.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable

import anyio

__all__ = ["ServerQueue", "StallWatch"]

_SLACK = 8
"""The deadline is moved only once per stall time / this; silence up to that much longer is tolerated."""


class StallWatch:
    """One streamed attempt's stall timeout: the deadline of `scope`, held (infinite) while queued."""

    __slots__ = ("_next_move", "_on_start", "_scope", "_stall_s", "queued", "stalled_while")

    def __init__(self, scope: anyio.CancelScope, stall_s: float, on_start: Callable[[], None]) -> None:
        """`on_start`: called when the attempt enters a server slot after waiting (the attempt's own
        timeout restarts then)."""
        self._scope = scope
        self._stall_s = stall_s
        self._on_start = on_start
        self._next_move = math.inf
        self.queued = False
        self.stalled_while = "waiting for the first byte"
        """What the attempt was doing if the deadline cuts it, for the failure's message."""

    def hold(self) -> None:
        """Queued behind our own calls: no stall clock."""
        self.queued = True
        self._next_move = math.inf
        self._scope.deadline = math.inf

    def start(self) -> None:
        """In a slot: the stall clock runs from now."""
        if self.queued:
            self.queued = False
            self._on_start()
        self._move()

    def byte(self) -> None:
        """A byte arrived (headers or body): the silence starts again. Cheap: one clock read."""
        if time.monotonic() >= self._next_move:
            self.stalled_while = "waiting for the next byte"
            self._move()

    def _move(self) -> None:
        self._scope.deadline = anyio.current_time() + self._stall_s * (1 + 1 / _SLACK)
        self._next_move = time.monotonic() + self._stall_s / _SLACK


class ServerQueue:
    """Our streamed calls in flight to one server, oldest first, and the server's slots when known."""

    def __init__(self, slots: int | None = None) -> None:
        self.slots = slots
        """The server's parallel slots (None: unknown, every call counts as within them)."""
        self._waiting: list[StallWatch] = []
        """In send order; a call leaves when it ends."""

    def join(self, watch: StallWatch) -> None:
        """A call is sent: it is within the slots or queued behind the ones ahead of it."""
        if self.slots is not None and len(self._waiting) >= self.slots:
            watch.hold()
        else:
            watch.start()
        self._waiting.append(watch)

    def leave(self, watch: StallWatch) -> None:
        """A call ended, however: the first queued call behind the slots (if any) moves into them."""
        try:
            position = self._waiting.index(watch)
        except ValueError:
            return
        del self._waiting[position]
        if self.slots is not None and position < self.slots <= len(self._waiting):
            behind = self._waiting[self.slots - 1]  # the first one past the slots until now
            if behind.queued:
                behind.start()

    @property
    def in_flight(self) -> int:
        return len(self._waiting)

    @property
    def queued(self) -> int:
        """Our calls waiting behind the server's slots now."""
        return sum(1 for watch in self._waiting if watch.queued)
