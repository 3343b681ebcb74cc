"""Every model call is priced, and under a cap it is paid for in advance: a call reserves its worst case
before it is sent (waiting for room while calls in flight may give it back: `runner.cost.budget`) and
settles to its actual cost once it returns. A retry reserves one more attempt's
worst case before it goes out (through `BEFORE_RETRY`), so a call holds what it may really cost, not
every attempt it might make.

Wrap the provider client directly (inside the concurrency gate, so that calls waiting for a slot hold
no reservation, and inside the response cache, so that replayed answers are never charged):
`JournaledModel(GatedModel(PricedModel(provider, ...)))`.
"""

from __future__ import annotations

from dataclasses import replace

from runner.config.prices import Price
from runner.cost.budget import Budget, BudgetExhausted, Reservation
from runner.cost.budget_ledger import BudgetLedger
from runner.cost.pricing import cost_usd, saved_usd, worst_case_usd
from runner.display.progress import RunProgress
from runner.models.batched import REQUEST_KEY
from runner.models.watched import CURRENT_STREAM
from runner.providers.retry import BEFORE_RETRY
from runner.providers.taxonomy import InfrastructureError
from simulators.model_api import ModelClient, ModelRequest, ModelResponse, Purpose, Usage

__all__ = ["PricedModel"]


class PricedModel:
    def __init__(self, inner: ModelClient, price: Price | None, budget: Budget | None,
                 progress: RunProgress | None, purpose: Purpose = "agent", *, max_attempts: int = 1,
                 ledger: BudgetLedger | None = None) -> None:
        """`price` None: an unpriced model the user allowed; it reserves nothing and costs what the
        provider reports, else 0. `max_attempts`: attempts reserved up front (for an `inner` that retries
        without telling `BEFORE_RETRY`); every attempt beyond them reserves its own worst case.
        `ledger`: where each reservation is committed before its call is sent (the cap holds across a
        kill: `runner.cost.budget_ledger`)."""
        if max_attempts < 1:
            raise ValueError(f"max_attempts must be at least 1, got {max_attempts}")
        self._inner = inner
        self._price = price
        self._budget = budget
        self._progress = progress
        self._purpose = purpose
        self._max_attempts = max_attempts
        self._ledger = ledger

    @property
    def name(self) -> str:
        return self._inner.name

    async def respond(self, request: ModelRequest) -> ModelResponse:
        """Raises BudgetExhausted, without sending the call, when its worst case would pass the cap and
        nothing in flight can give room back."""
        reservation = await self._reserve(worst_case_usd(request, self._price, self._max_attempts))
        refused_after: list[Usage] = []

        def before_retry(attempt: int, billed: Usage) -> None:
            nonlocal reservation
            if attempt <= self._max_attempts or self._budget is None or reservation is None:
                return
            try:
                reservation = self._budget.extend(reservation, worst_case_usd(request, self._price))
            except BudgetExhausted:
                refused_after.append(billed)  # what the attempts already made were billed
                raise
            finally:
                self._publish(0.0)

        token = BEFORE_RETRY.set(before_retry)
        try:
            if self._ledger is not None and reservation is not None:  # durable before the call goes out
                await self._ledger.hold(reservation.amount, REQUEST_KEY.get())
            response = await self._inner.respond(request)
        except BudgetExhausted:
            self._settle(reservation, cost_usd(refused_after[0], self._price) if refused_after else 0.0)
            raise
        except InfrastructureError as exc:
            # The failed attempts' tokens travel on the error: billed like any other tokens.
            exc.cost_usd = cost_usd(exc.usage, self._price)
            self._settle(reservation, exc.cost_usd)
            self._count_cache(exc.usage)
            raise
        except BaseException:
            # Anything else (a cancelled call) returns no usage, so it is counted at 0: an under-count
            # when the provider billed it anyway. BaseException: a cancelled call releases its hold too.
            self._settle(reservation, 0.0)
            raise
        finally:
            BEFORE_RETRY.reset(token)
        cost = cost_usd(response.usage, self._price)
        self._settle(reservation, cost)
        self._count_cache(response.usage)
        return replace(response, cost_usd=cost)

    def _count_cache(self, usage: Usage) -> None:
        """The dashboard's cache figures, run-wide and on the stream whose call this is (if any)."""
        figures = (usage.input_tokens, usage.cached_input_tokens, usage.cache_write_tokens,
                   saved_usd(usage, self._price))
        if self._progress is not None:
            self._progress.cache.add(*figures)
        stream = CURRENT_STREAM.get()
        if stream is not None:
            stream.cache.add(*figures)

    async def _reserve(self, worst_case: float) -> Reservation | None:
        if self._budget is None:
            return None
        try:
            return await self._budget.reserve_when_room(worst_case, self._purpose)
        finally:
            self._publish(0.0)

    def _settle(self, reservation: Reservation | None, cost: float) -> None:
        if self._budget is not None and reservation is not None:
            self._budget.settle(reservation, cost)
        self._publish(cost)

    def _publish(self, cost: float) -> None:
        """Show the money on the dashboard. Under a budget its counters are the truth (shared by every
        priced client of the run, resumed spend included), so they are copied; without one, added to."""
        progress = self._progress
        if progress is None:
            return
        if self._budget is None:
            progress.spent_usd += cost
            return
        progress.spent_usd = self._budget.spent
        progress.reserved_usd = self._budget.reserved
        progress.budget_waiting = self._budget.waiting
        progress.budget_usd = self._budget.cap
