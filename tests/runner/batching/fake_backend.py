"""An in-memory BatchBackend faithful to the protocol: ids, a label to find, batches that end when told (or at
once), every result read once, cancel; with counters a test asserts on and a hook on each result read."""

from __future__ import annotations

import itertools
from collections import Counter
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from dataclasses import dataclass, field

import anyio
import anyio.lowlevel

from runner.providers.batch_api import BatchItem, BatchResult, BatchStatus, ItemOutcome
from simulators.model_api import ModelRequest, ModelResponse, Usage
from simulators.protocol import JSON, AssistantTurn


def echo(body: Mapping[str, JSON]) -> ModelResponse:
    """The answer to an item: its last message, said back (a test knows what each request gets)."""
    return ModelResponse(AssistantTurn(text=f"re: {body['last']}"), Usage(input_tokens=100, output_tokens=10))


@dataclass
class FakeBatch:
    batch_id: str
    label: str
    items: list[BatchItem]
    ended: bool = False
    cancelled: bool = False
    read: bool = False
    outcomes: dict[str, ItemOutcome] = field(default_factory=dict)


class FakeBackend:
    def __init__(self, *, auto_end: bool = True, findable: bool = True,
                 outcome: Callable[[str, int], ItemOutcome] = lambda custom_id, seen: "succeeded",
                 error: str = "server_error: boom") -> None:
        """`auto_end`: a batch ends at its first status poll (else when `end` is called). `outcome`: each
        item's fate from its custom id and how many times it was submitted before."""
        self.batches: dict[str, FakeBatch] = {}
        self.submitted: Counter[str] = Counter()
        self.submits = 0
        self.cancels: list[str] = []
        self.on_results: Callable[[FakeBatch], object] = lambda batch: None
        self.created = anyio.Event()
        self._ids = itertools.count(1)
        self._auto_end = auto_end
        self._findable = findable
        self._outcome = outcome
        self._error = error
        self.fail_submit: BaseException | None = None
        """Raised by the next submit after the batch was made (a reply lost on the way back)."""

    @property
    def name(self) -> str:
        return "fake"

    def body(self, request: ModelRequest) -> dict[str, JSON]:
        return {"last": request.messages[-1].content if request.messages else "", "max": request.max_output_tokens}

    async def submit(self, items: Sequence[BatchItem], label: str) -> str:
        await anyio.lowlevel.checkpoint()
        batch_id = f"batch_{next(self._ids)}"
        batch = FakeBatch(batch_id, label, list(items))
        for item in items:
            batch.outcomes[item.custom_id] = self._outcome(item.custom_id, self.submitted[item.custom_id])
            self.submitted[item.custom_id] += 1
        self.batches[batch_id] = batch
        self.submits += 1
        self.created.set()
        self.created = anyio.Event()
        if self.fail_submit is not None:
            failure, self.fail_submit = self.fail_submit, None
            raise failure
        return batch_id

    async def find(self, label: str) -> str | None:
        if not self._findable:
            return None
        return next((b.batch_id for b in self.batches.values() if b.label == label), None)

    async def status(self, batch_id: str) -> BatchStatus:
        await anyio.lowlevel.checkpoint()
        batch = self.batches[batch_id]
        if self._auto_end:
            batch.ended = True
        return BatchStatus(batch_id, batch.ended, "cancelled" if batch.cancelled else
                           ("ended" if batch.ended else "in_progress"))

    def end(self, batch_id: str | None = None) -> None:
        for batch in self.batches.values():
            if batch_id in (None, batch.batch_id):
                batch.ended = True

    async def results(self, batch_id: str) -> AsyncIterator[BatchResult]:
        batch = self.batches[batch_id]
        assert batch.ended and not batch.read, "results are read once, of an ended batch"
        batch.read = True
        for item in batch.items:
            outcome = batch.outcomes[item.custom_id]
            if outcome == "succeeded":
                result = BatchResult(item.custom_id, outcome, echo(item.body))
            else:
                result = BatchResult(item.custom_id, outcome, error=self._error if outcome == "errored" else "")
            self.on_results(batch)
            yield result

    async def cancel(self, batch_id: str) -> None:
        batch = self.batches[batch_id]
        self.cancels.append(batch_id)
        if not batch.ended:
            batch.cancelled = batch.ended = True
            # What was not processed yet is canceled; the fake processed every second item already.
            for index, item in enumerate(batch.items):
                if index % 2:
                    batch.outcomes[item.custom_id] = "canceled"


class ManualClock:
    """Time that moves only when a test says so: `sleep` waits until `advance` passes its deadline."""

    def __init__(self) -> None:
        self._now = 0.0
        self._moved = anyio.Event()
        self.sleepers = 0

    def now(self) -> float:
        return self._now

    async def sleep(self, seconds: float) -> None:
        until = self._now + seconds
        self.sleepers += 1
        try:
            while self._now < until:
                await self._moved.wait()
        finally:
            self.sleepers -= 1

    def advance(self, seconds: float) -> None:
        self._now += seconds
        self._moved.set()
        self._moved = anyio.Event()
