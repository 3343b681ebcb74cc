"""A batching model's test calls (`--batch tests`): the batch route, and its way back to the live one.

    JournaledModel(route='batch' or 'live', as answered)
      BatchedModel
        batch: CappedModel > PricedModel(the batch price) > BatchRoute     (no concurrency gate: a waiting
                                                                             item holds no slot)
        live:  GatedModel > CappedModel > PricedModel(the live price) > the provider client
                (an item that failed in its batches, or with `on_item_failure = "live"`)

The item reserves its worst case at the batch price before it joins a batch, and is charged at it. Its
custom id is the request hash the journal keys the call by (`REQUEST_KEY`, set by JournaledModel), so a
resumed run recognises its own requests. A budget stop lets the item's batch end: the item holds its
room under the cap already.
"""

from __future__ import annotations

from contextvars import ContextVar
from dataclasses import dataclass

from runner.batching.batcher import Batcher
from runner.batching.waiting import SendLive
from simulators.model_api import ModelClient, ModelRequest, ModelResponse

__all__ = ["REQUEST_KEY", "BatchRoute", "BatchedModel"]

REQUEST_KEY: ContextVar[str] = ContextVar("shiftbench_request_key", default="")
"""The journal's key of the call in flight (its request hash), set by JournaledModel around its inner call."""


@dataclass
class BatchRoute:
    batcher: Batcher
    model: str
    unit_id: str

    @property
    def name(self) -> str:
        return self.model

    async def respond(self, request: ModelRequest) -> ModelResponse:
        key = REQUEST_KEY.get()
        if not key:
            raise RuntimeError("a batched call outside JournaledModel has no request hash to use as its custom id")
        return await self.batcher.ask(self.model, key, self.unit_id, request)


class BatchedModel:
    def __init__(self, batch: ModelClient, live: ModelClient) -> None:
        self._batch = batch
        self._live = live
        self.route = "batch"
        """How the last call was answered: 'batch', or 'live' for an item sent live after its batches."""

    @property
    def name(self) -> str:
        return self._batch.name

    async def respond(self, request: ModelRequest) -> ModelResponse:
        self.route = "batch"
        try:
            return await self._batch.respond(request)
        except SendLive:
            self.route = "live"
            return await self._live.respond(request)
