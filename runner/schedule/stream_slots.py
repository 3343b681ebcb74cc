"""A run-wide bound on serving streams that hold a method worker on an offline model.

A user's method runs in a worker process of its own per serving stream, alive for the whole stream (7-8
MiB of PSS each). Offline (the scripted model), a stream is CPU work in the runner's own process, so
a sweep of 12 such streams gains nothing from serving all 12 at once on 2 cores and pays 12 workers'
memory: bench/README.md ("Fewer workers alive at once") measured the peak PSS against the bound. Live,
a stream spends its time waiting on its provider, and serving them all at once is what keeps the
provider busy: those streams are never held back.

The bound never shares a process between two streams: a stream waits ("queued") for a slot before
it opens its worker and gives the slot back after its last test set, when its worker is closed. It
changes when a stream runs, never what it computes (each stream's results depend on its own order
only), so it is not hashed.
"""

from __future__ import annotations

import os
from collections.abc import Awaitable, Callable
from typing import TypeVar

import anyio

from runner.display.progress import StreamProgress

__all__ = ["QUEUED", "StreamSlots", "default_method_workers"]

T = TypeVar("T")

QUEUED = "queued"
"""The phase of a stream waiting for its slot (the dashboard shows it)."""


def default_method_workers() -> int:
    """Twice the cores this process may use, at least 2: a stream waiting on its worker leaves the
    runner another to serve, and the runner is one thread."""
    try:
        cores = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # macOS has no affinity
        cores = os.cpu_count() or 1
    return max(2, 2 * cores)


class StreamSlots:
    def __init__(self, bound: int = 0) -> None:
        """`bound`: the most bounded streams served at once; 0: `default_method_workers()`."""
        self.bound = bound or default_method_workers()
        self._limiter = anyio.CapacityLimiter(self.bound)
        self.peak = 0
        """The most bounded streams that held a slot at once (tests check the bound)."""

    async def run(self, bounded: bool, live: StreamProgress, serve: Callable[[T], Awaitable[None]], stream: T) -> None:
        """`serve(stream)`, first waiting for a slot when it is `bounded`."""
        if not bounded:
            await serve(stream)
            return
        before, live.phase = live.phase, QUEUED
        async with self._limiter:
            live.phase = before
            self.peak = max(self.peak, int(self._limiter.borrowed_tokens))
            await serve(stream)
