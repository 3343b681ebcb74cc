"""The run's provider batches: collected per (endpoint, model), journaled at every step before the next one
relies on it, polled with backoff, recovered on resume. A budget stop lets outstanding batches end: their
items hold room under the cap already, so their episodes finish.

The order that makes a run killed at any moment resumable without paying twice:
1. the batch's label ('submitting') and every item ('pending') are committed before the provider is asked;
2. the provider's batch id ('submitted') is committed before anything polls it;
3. every result (answer or failure) is committed ('collected') before any is handed to its episode.
A resume polls a 'submitted' batch by its id, finds a 'submitting' one by its label (or, when the
provider cannot find it, lets its requests be submitted again, and says so), and answers a request whose
result is journaled but never used from the journal: the provider is never asked twice for an answer.
"""

from __future__ import annotations

import functools
import time
from collections import Counter
from collections.abc import AsyncIterator, Callable, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass

import anyio
import anyio.abc

from runner.batching.answers import decode_answer, encode_answer
from runner.batching.collector import Collector
from runner.batching.waiting import (
    MAX_BATCH_TRIES,
    BatchClock,
    BatchTiming,
    Pending,
    SendLive,
    WallClock,
    rejection,
)
from runner.common.errors import RunAborted
from runner.journal import Batch, Journal
from runner.providers.batch_api import BatchBackend, BatchItem, BatchResult, BatchStatus
from runner.providers.taxonomy import InfrastructureError
from simulators.model_api import ModelRequest, ModelResponse

__all__ = ["Batcher", "BatchFigures", "Lane"]

_FAILED = ("errored", "expired", "canceled")


@dataclass(frozen=True)
class Lane:
    """One batching model: its endpoint's batch API and base URL (journaled; never a key)."""

    backend: BatchBackend
    endpoint: str
    api: str = ""
    """Which batch API ('openai', 'anthropic'), journaled with each batch; empty: the backend's name."""


@dataclass
class BatchFigures:
    """What the batcher did in this process (the dashboard and the closing line say it)."""

    batches: int = 0
    items: int = 0
    resubmitted: int = 0
    """Items put in a second batch after failing in one."""
    sent_live: int = 0
    from_journal: int = 0
    """Answers journaled by an earlier process and never used, handed out without asking again."""
    recovered: int = 0
    """Batches of an earlier process picked up (polled by id, or found by label)."""
    never_created: int = 0
    """Requests of a batch an earlier process was creating when it stopped, which the provider could not
    find: submitted again."""


@dataclass
class _Open:
    lane: Lane
    batch_id: str
    items: int = 0


class Batcher:
    def __init__(self, run_id: str, journal: Journal, lanes: Mapping[str, Lane], timing: BatchTiming,
                 clock: BatchClock | None = None, say: Callable[[str], None] = print) -> None:
        self._run_id = run_id
        self._journal = journal
        self._lanes = dict(lanes)
        self._timing = timing
        self._clock = clock or WallClock()
        self._say = say
        self._collectors: dict[tuple[str, bool], Collector] = {}
        self._pending: dict[str, Pending] = {}
        self._answered: dict[str, bytes] = {}
        self._tries: Counter[str] = Counter()
        self._open: dict[str, _Open] = {}
        self._rounds: Counter[str] = Counter()
        self._labels = 0
        self._group: anyio.abc.TaskGroup | None = None
        self.figures = BatchFigures()
        self.urgent: Callable[[], bool] = lambda: False
        """Whether what is collected goes at once (calls wait for budget room that collected items hold)."""
        self._draining = False

    @property
    def models(self) -> frozenset[str]:
        return frozenset(self._lanes)

    @property
    def waiting(self) -> int:
        """Requests waiting on a batch (collected or submitted)."""
        return len(self._pending)

    def dashboard_line(self) -> str:
        """What the dashboard says of the batches: the ones the provider holds now, what waits to join
        one, and what this process sent, tried again and sent live."""
        held = sum(opened.items for opened in self._open.values())
        queued = self.waiting - held
        figures = self.figures
        return (f"batches {len(self._open)} out ({held} items), {max(0, queued)} waiting; {figures.batches} sent, "
                f"{figures.resubmitted} resubmitted, {figures.sent_live} live")

    def wake(self) -> None:
        """`urgent` may have changed: every collector looks again."""
        for collector in self._collectors.values():
            collector.wake()

    def drain(self) -> None:
        """The run is stopping for its budget: no new episode will add to a batch, so what is collected
        goes at once from now on, and the episodes in flight finish without waiting out `wait_s`."""
        self._draining = True
        self.wake()

    @asynccontextmanager
    async def running(self) -> AsyncIterator[Batcher]:
        """The collectors and pollers run inside; the run's unfinished batches are picked up first."""
        followed = await self._recover()  # before any task: a start that cannot go on stops plainly
        async with anyio.create_task_group() as group:
            self._group = group
            for lane, label, batch_id, custom_ids in followed:
                group.start_soon(self._follow, lane, label, batch_id, custom_ids)
            # Second tries wait apart, so a batch is all first tries or all resubmissions (its column says which).
            for model in self._lanes:
                for again in (False, True):
                    collector = Collector(self._timing.max_items, self._timing.wait_s, self._clock,
                                          functools.partial(self._submit, model))
                    collector.urgent = lambda: self._draining or self.urgent()
                    self._collectors[(model, again)] = collector
                    group.start_soon(collector.run, group)
            try:
                yield self
            finally:
                group.cancel_scope.cancel()
                self._group = None

    # --------------------------------------------------------------------------------------- asking

    async def ask(self, model: str, custom_id: str, unit_id: str, request: ModelRequest) -> ModelResponse:
        """The answer to `request` through `model`'s batches. Raises SendLive (failed in its batches), or the
        live path's error for a request the provider rejected."""
        journaled = self._answered.pop(custom_id, None)
        if journaled is not None:
            settled = self._pending.get(custom_id)
            if settled is not None and settled.done.is_set():
                del self._pending[custom_id]  # a recovered item answered before its episode asked
            self.figures.from_journal += 1
            return decode_answer(journaled)
        body = self._lanes[model].backend.body(request)
        while True:
            pending = self._pending.get(custom_id)
            if pending is None and self._spent_tries(custom_id):
                self.figures.sent_live += 1  # failed in its batches before (a resume): live, not a third try
                raise SendLive(f"batch item {custom_id[:12]} failed in {self._tries[custom_id]} batches already")
            if pending is None:
                pending = Pending(custom_id, unit_id, body, tries=self._tries[custom_id])
                self._pending[custom_id] = pending
                self._collectors[(model, pending.tries > 0)].add(pending)
            elif pending.body is None:
                pending.body = body  # recovered from the journal: resubmittable now
            await pending.done.wait()
            if self._pending.get(custom_id) is pending:
                del self._pending[custom_id]
            self._answered.pop(custom_id, None)
            if pending.failure is not None:
                raise pending.failure
            result = pending.result
            assert result is not None
            if result.outcome == "succeeded" and result.response is not None:
                return result.response
            refused = rejection(result)
            if refused is not None:
                raise refused
            self._tries[custom_id] = max(self._tries[custom_id], pending.tries + 1)
            if self._spent_tries(custom_id):
                self.figures.sent_live += 1
                raise SendLive(f"batch item {result.outcome}: {result.error or 'no answer'}")
            self.figures.resubmitted += 1

    def _spent_tries(self, custom_id: str) -> bool:
        """Whether the item has had all the batches it gets (one, with on_item_failure = "live")."""
        tries = self._tries[custom_id]
        return tries >= MAX_BATCH_TRIES or (tries >= 1 and self._timing.on_item_failure == "live")

    # ------------------------------------------------------------------------------------ submitting

    async def _submit(self, model: str, items: list[Pending]) -> None:
        lane = self._lanes[model]
        self._labels += 1
        self._rounds[model] += 1
        label = f"sb-{self._run_id}-{self._labels:05d}"
        resubmitted = int(any(p.tries > 0 for p in items))
        await self._journal.commit(Batch().provider_batch(
            self._run_id, label, lane.api or lane.backend.name, lane.endpoint, model,
            [(p.custom_id, p.unit_id) for p in items], self._rounds[model], resubmitted, time.time()))
        body = [BatchItem(p.custom_id, p.body) for p in items if p.body is not None]
        try:
            batch_id = await lane.backend.submit(body, label)
        except Exception as exc:
            found = await self._find_quietly(lane, label)
            if found is None:
                await self._not_created(label, items, exc)
                return
            batch_id = found
        with anyio.CancelScope(shield=True):  # created means journaled, or a resume must find it by label
            await self._journal.commit(Batch().batch_created(self._run_id, label, batch_id, "submitted"))
        self.figures.batches += 1
        self.figures.items += len(items)
        await self._follow(lane, label, batch_id, {p.custom_id for p in items})

    async def _find_quietly(self, lane: Lane, label: str) -> str | None:
        """A create that failed may have been made anyway (the reply lost): the label tells."""
        try:
            return await lane.backend.find(label)
        except Exception:
            return None

    async def _find_at_start(self, lane: Lane, label: str) -> str | None:
        """A batch the last process was creating: only a provider that answers "not there" lets its
        requests go again; one that cannot be asked stops the start (else they might be paid twice)."""
        try:
            return await lane.backend.find(label)
        except InfrastructureError as exc:
            raise RunAborted(f"cannot tell whether batch {label} (being created when the run stopped) exists: "
                             f"{exc.headline()}; resume again once {lane.endpoint} answers") from exc

    async def _not_created(self, label: str, items: list[Pending], failure: BaseException) -> None:
        await self._journal.commit(Batch().batch_status(self._run_id, label, "cancelled",
                                                        f"not created: {type(failure).__name__}", time.time()))
        for pending in items:
            pending.fail(failure)

    # ------------------------------------------------------------------------------------ following

    async def _follow(self, lane: Lane, label: str, batch_id: str, custom_ids: set[str]) -> None:
        """Poll until the batch ends (backoff from poll_s to poll_max_s), journal every result, then hand
        them out. An item with no result in the batch's output counts as expired (tried again)."""
        opened = _Open(lane, batch_id, len(custom_ids))
        self._open[label] = opened
        try:
            status, results = await self._until_ended(opened, custom_ids)
        except InfrastructureError as exc:
            # Only a failure that stops the run reaches here (the rest are polled through); the batch
            # stays 'submitted' in the journal, so a resume polls it again.
            del self._open[label]
            for custom_id in custom_ids:
                if custom_id in self._pending:
                    self._pending[custom_id].fail(exc)
            return
        why = status.failed_reason or f"no result in batch {batch_id} ({status.provider_status})"
        for missing in custom_ids - results.keys():
            results[missing] = BatchResult(missing, "expired", error=why)
        batch = Batch()
        for result in results.values():
            answer = encode_answer(result.response) if result.response is not None else None
            batch.batch_item_result(self._run_id, label, result.custom_id, result.outcome, answer, result.error)
        batch.batch_status(self._run_id, label, "collected", status.provider_status, time.time())
        with anyio.CancelScope(shield=True):  # read means journaled: never lost between the two
            await self._journal.commit(batch)
        del self._open[label]
        for result in results.values():
            self._deliver(result)

    async def _until_ended(self, opened: _Open, custom_ids: set[str]) -> tuple[BatchStatus, dict[str, BatchResult]]:
        """Poll (backoff from poll_s to poll_max_s) and read the results.
        A failure that would only requeue a live call is polled through at the longest interval."""
        interval = self._timing.poll_s
        while True:
            try:
                status = await opened.lane.backend.status(opened.batch_id)
                if status.ended:
                    results: dict[str, BatchResult] = {}
                    async for result in opened.lane.backend.results(opened.batch_id):
                        if result.custom_id in custom_ids:
                            results[result.custom_id] = result
                    return status, results
            except InfrastructureError as exc:
                if exc.policy.outcome == "stop_run":
                    raise
                interval = self._timing.poll_max_s
            await self._clock.sleep(interval)
            interval = min(2 * interval, self._timing.poll_max_s)

    def _deliver(self, result: BatchResult) -> None:
        pending = self._pending.get(result.custom_id)
        if result.outcome == "succeeded" and result.response is not None:
            self._answered[result.custom_id] = encode_answer(result.response)
        if pending is not None:
            pending.answer(result)
        elif result.outcome in _FAILED:
            self._tries[result.custom_id] += 1

    # ------------------------------------------------------------------------------------ recovering

    async def _recover(self) -> list[tuple[Lane, str, str, set[str]]]:
        """Pick up what an earlier process of this run left: answers never used, items that failed, and
        the batches not collected yet, each waited on by the requests it holds (returned to be followed:
        lane, label, batch id, custom ids)."""
        followed: list[tuple[Lane, str, str, set[str]]] = []
        read = self._journal.read
        self._answered.update(await read.unused_answers(self._run_id))
        self._tries.update(await read.failed_tries(self._run_id))
        batches = await read.provider_batches(self._run_id)
        self._labels = len(batches)
        for row in batches:
            self._rounds[row.model] = max(self._rounds[row.model], row.round)
        for row in await read.open_batches(self._run_id):
            lane = self._lanes.get(row.model)
            if lane is None:
                continue  # the model is not batched in this process (its endpoint was turned off)
            items = [i for i in await read.batch_items(self._run_id, row.label) if i.status == "pending"]
            batch_id = row.batch_id or await self._find_at_start(lane, row.label)
            if not batch_id:
                await self._journal.commit(Batch().batch_status(
                    self._run_id, row.label, "cancelled", "not found by label: submitted again", time.time()))
                self.figures.never_created += len(items)
                self._say(f"Batch {row.label} was being created when the run stopped and {lane.backend.name} "
                          f"cannot find it: its {len(items)} requests are submitted again")
                continue
            if not row.batch_id:
                await self._journal.commit(Batch().batch_created(self._run_id, row.label, batch_id, "found by label"))
            for item in items:
                self._pending.setdefault(item.custom_id, Pending(item.custom_id, item.unit_id, None,
                                                                 tries=self._tries[item.custom_id]))
            self.figures.recovered += 1
            followed.append((lane, row.label, batch_id, {i.custom_id for i in items}))
        return followed
