"""One request waiting on a batch, and what an item's failure means for it.

A succeeded item is its answer. An errored item the provider rejected as an invalid request fails as
the live path fails a 400 (classified by the same rules, never sent again). An expired, canceled or
otherwise errored item is tried once more in a later batch, then sent live (or live at once, by the
setting `on_item_failure = "live"`).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Protocol

import anyio

from runner.providers.batch_api import BatchResult
from runner.providers.failures import classify
from runner.providers.taxonomy import InfrastructureError, infrastructure_error
from simulators.protocol import JSON

__all__ = ["BatchClock", "BatchTiming", "Pending", "SendLive", "WallClock", "first_of",
           "rejection"]

MAX_BATCH_TRIES = 2
"""Batches an item is put in at most (the first and one resubmission) before it goes live."""


class SendLive(Exception):
    """The item failed in its batches (or once, with `on_item_failure = "live"`): send it live instead."""


@dataclass(frozen=True)
class BatchTiming:
    """The batcher's part of a sweep's `[batch]` settings (`runner.config.batch_settings.BatchSettings`
    holds their defaults and checks; `start` is the engine's)."""

    max_items: int
    wait_s: float
    poll_s: float
    poll_max_s: float
    on_item_failure: str


class BatchClock(Protocol):
    """Time as the batcher reads it (a test drives a manual one; no wall-clock race)."""

    def now(self) -> float: ...

    async def sleep(self, seconds: float) -> None: ...


class WallClock:
    def now(self) -> float:
        return anyio.current_time()

    async def sleep(self, seconds: float) -> None:
        await anyio.sleep(seconds)


@dataclass(eq=False)
class Pending:
    """One custom id waiting on a batch (every request asking it waits on this one entry)."""

    custom_id: str
    unit_id: str
    body: Mapping[str, JSON] | None
    """What is submitted; None for an item recovered from the journal until its episode asks again."""
    tries: int = 0
    """Batches this request already failed in (journaled ones included)."""
    done: anyio.Event = field(default_factory=anyio.Event)
    result: BatchResult | None = None
    failure: BaseException | None = None
    """The batch itself could not be created: every waiter raises this."""

    def answer(self, result: BatchResult) -> None:
        if not self.done.is_set():
            self.result = result
            self.done.set()

    def fail(self, failure: BaseException) -> None:
        if not self.done.is_set():
            self.failure = failure
            self.done.set()


def rejection(result: BatchResult) -> InfrastructureError | None:
    """The live path's error for an item the provider refused as invalid (never resent); None for an item
    worth another try."""
    if result.outcome != "errored" or "invalid_request" not in result.error:
        return None
    return infrastructure_error(classify(400, result.error), f"batch item {result.custom_id[:12]}: {result.error}")


async def first_of(*waits: Callable[[], Awaitable[object]]) -> None:
    """Return as soon as any of `waits` returns (the others are cancelled)."""
    async with anyio.create_task_group() as group:
        async def one(wait: Callable[[], Awaitable[object]]) -> None:
            await wait()
            group.cancel_scope.cancel()

        for wait in waits:
            group.start_soon(one, wait)
