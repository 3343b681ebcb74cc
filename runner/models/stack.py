"""The client an episode, a judge or a method talks to: the provider client wrapped, outermost first,
in the stream's live counters (turns in flight, spend), the stream replica's sampling seed, the journal
(response cache; every call recorded), the gate (priority and concurrency), the price (a reservation
against the run's budget while the call is in flight), and the model's own cap on output tokens (so the
reservation is for the request as it will be sent).

Cached answers are replayed before the gate, so they take no slot and are never charged; calls waiting
for a slot hold no reservation. The offline scripted model only passes the gate: it is free and
in-process, so there is nothing to cache or price.

With `--batch tests`, a batching model's test calls (a test episode's agent and pitch judge) take the
batch route instead (`runner.models.batched`): no gate, the batch price; serving calls are unchanged.
"""

from __future__ import annotations

from collections.abc import Container, Mapping
from dataclasses import dataclass, field

from runner.batching.batcher import Batcher
from runner.config.prices import Price
from runner.cost.budget import Budget
from runner.cost.budget_ledger import BudgetLedger
from runner.display.progress import RunProgress
from runner.journal import Journal
from runner.models.batched import BatchedModel, BatchRoute
from runner.models.capped import CappedModel
from runner.models.gate import Gate, GatedModel
from runner.models.journaled import JournaledModel
from runner.models.priced import PricedModel
from runner.models.registry import ModelEntry
from runner.models.scoped import CacheScopedModel, cache_scope
from runner.models.seeded import seeded
from runner.models.watched import WatchedModel
from runner.providers.priority import TEST, PriorityLimiter, ServingClaim
from simulators.model_api import ModelClient, Purpose

__all__ = ["ClientStack"]


@dataclass
class ClientStack:
    run_id: str
    journal: Journal
    progress: RunProgress
    models: Mapping[str, ModelEntry]
    prices: Mapping[str, Price | None]
    budget: Budget | None
    concurrency: int
    model_concurrency: int
    replayable: Container[str] | None = None
    """Units with cached answers (from the journal, at start); None: any unit may have some."""
    replay_from: str | None = None
    """An audit's recorded run: its paid answers answer the same unit's identical requests for free."""
    batcher: Batcher | None = None
    """`--batch tests`: the run's batches, for the models it batches (their test calls)."""
    batch_prices: Mapping[str, Price | None] = field(default_factory=dict)
    """Each batching model's batch price (what its batched calls reserve and are charged; None: unpriced,
    --allow-unpriced, as a live call of an unpriced model is)."""

    def __post_init__(self) -> None:
        if self.budget is not None and self.batcher is not None:
            # Collected items hold budget room: while calls wait for room, batches go as they are.
            budget, batcher = self.budget, self.batcher
            batcher.urgent = lambda: budget.waiting > 0
            budget.on_wait.append(batcher.wake)
        if self.budget is not None:  # the dashboard counts the calls waiting for room from the moment they wait
            budget, progress = self.budget, self.progress
            budget.on_wait.append(lambda: setattr(progress, "budget_waiting", budget.waiting))
        self._ledger = BudgetLedger(self.journal, self.run_id) if self.budget is not None else None
        run_wide = PriorityLimiter(self.concurrency)
        self.progress.call_limit = self.concurrency
        self._gates = {name: Gate(run_wide, PriorityLimiter(self.model_concurrency), self.progress)
                       for name in self.models}

    def client(self, model: str, unit_id: str, stream_id: str, purpose: Purpose, priority: int,
               seed: int | None = None) -> ModelClient:
        """`seed`: the stream replica's sampling seed (None: no seed sent)."""
        client = seeded(self._client(model, unit_id, stream_id, purpose, priority), seed)
        return self._watched(client, unit_id, stream_id, purpose)

    def serving_claim(self, model: str) -> ServingClaim:
        """A serving stream's claim on `model`'s slots (per model and run-wide), held while it serves."""
        gate = self._gates[model]
        return ServingClaim((gate.per_model, gate.run_wide))

    def _client(self, model: str, unit_id: str, stream_id: str, purpose: Purpose, priority: int) -> ModelClient:
        entry = self.models[model]
        if entry.offline:
            return GatedModel(entry.client, self._gates[model], priority)
        # Retries reserve their own worst case as they go (BEFORE_RETRY), so one attempt is held up front.
        # Innermost: the provider's prompt cache learns the stream, which no outer layer hashes or prices.
        scoped = CacheScopedModel(entry.client, cache_scope(stream_id, purpose))
        priced = PricedModel(scoped, self.prices.get(model), self.budget, self.progress, purpose, ledger=self._ledger)
        # Capped outside the price: the reservation is for the request as it will be sent.
        gated = GatedModel(CappedModel(priced, entry.max_tokens), self._gates[model], priority)
        if self.batcher is not None and priority == TEST and model in self.batcher.models:
            # Scoped like a live call: the batch's items carry the stream's prompt-cache key or marks too.
            route = CacheScopedModel(BatchRoute(self.batcher, model, unit_id), cache_scope(stream_id, purpose))
            batched = CappedModel(PricedModel(route, self.batch_prices[model], self.budget, self.progress, purpose,
                                              ledger=self._ledger), entry.max_tokens)
            either = BatchedModel(batched, gated)
            return JournaledModel(either, self.journal, self.run_id, unit_id, stream_id, purpose, self.replayable,
                                  self.replay_from, route=lambda: either.route)
        return JournaledModel(gated, self.journal, self.run_id, unit_id, stream_id, purpose, self.replayable,
                              self.replay_from)

    def _watched(self, client: ModelClient, unit_id: str, stream_id: str, purpose: Purpose) -> ModelClient:
        """Outermost: the stream's dashboard row counts the call (a stream the run does not know, as in
        a probe, has no row)."""
        stream = self.progress.streams.get(stream_id)
        return client if stream is None else WatchedModel(client, stream, unit_id, purpose)
