"""PricedModel: each call reserves its worst case before it is sent and settles to its cost after; a call
the cap refuses never reaches the provider, and concurrent calls cannot push spend past the cap."""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Sequence
from dataclasses import replace

import anyio
import anyio.lowlevel
import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

import runner.models.priced
from bench.mock_provider import Failure as MockFailure
from bench.mock_provider import Recorded, Response, serve_mock
from runner.config.prices import Price
from runner.cost.budget import Budget, BudgetExhausted
from runner.cost.pricing import cost_usd, worst_case_usd
from runner.display.progress import RunProgress
from runner.models.capped import CappedModel
from runner.models.priced import PricedModel
from runner.providers import make_http_client
from runner.providers.taxonomy import ProviderError
from simulators.model_api import ModelRequest, ModelResponse, Usage
from simulators.protocol import AssistantTurn, Message
from tests.fakes import TOY_TOOLS
from tests.runner.providers.support import fast_retrier, openai_client

PRICE = Price(input=2.0, cached_input=0.5, cache_write=2.5, output=8.0)
USAGE = Usage(input_tokens=1000, cached_input_tokens=600, cache_write_tokens=100, output_tokens=50)
REQUEST = ModelRequest(system="You decide cases.", messages=(Message("user", "Decide c1."),), tools=TOY_TOOLS,
                       max_output_tokens=500)


class FixedProvider:
    """Answers every call with the same usage, or raises `error`; `hook` runs while a call is in flight."""

    def __init__(self, usage: Usage = USAGE, error: Exception | None = None,
                 hook: Callable[[], None] | None = None) -> None:
        self.usage = usage
        self.error = error
        self.hook = hook
        self.received: list[ModelRequest] = []
        self.called = anyio.Event()
        self.release = anyio.Event()
        self.wait = False

    @property
    def name(self) -> str:
        return "fixed"

    async def respond(self, request: ModelRequest) -> ModelResponse:
        self.received.append(request)
        self.called.set()
        if self.hook is not None:
            self.hook()
        if self.wait:
            await self.release.wait()
        if self.error is not None:
            raise self.error
        return ModelResponse(AssistantTurn(text="ok"), self.usage)


def test_public_api() -> None:
    assert runner.models.priced.__all__ == ["PricedModel"]


async def test_a_call_reserves_its_worst_case_and_settles_to_its_cost() -> None:
    budget, progress = Budget(10.0), RunProgress("run", "journal.sqlite")
    held: list[float] = []
    provider = FixedProvider(hook=lambda: held.append(budget.reserved))
    model = PricedModel(provider, PRICE, budget, progress, "judge", max_attempts=2)
    response = await model.respond(REQUEST)
    assert held == [worst_case_usd(REQUEST, PRICE, attempts=2)]
    assert response.cost_usd == pytest.approx(0.00155)  # 300 x 2 + 600 x 0.5 + 100 x 2.5 + 50 x 8 micro-dollars
    assert (budget.spent, budget.reserved) == (response.cost_usd, 0.0)
    assert budget.spent_by_purpose() == {"judge": response.cost_usd}
    assert (progress.spent_usd, progress.reserved_usd, progress.budget_usd) == (response.cost_usd, 0.0, 10.0)
    assert model.name == "fixed"


async def test_a_call_the_cap_refuses_is_never_sent() -> None:
    budget, progress = Budget(worst_case_usd(REQUEST, PRICE) / 2), RunProgress("run", "journal.sqlite")
    provider = FixedProvider()
    with pytest.raises(BudgetExhausted):
        await PricedModel(provider, PRICE, budget, progress).respond(REQUEST)
    assert provider.received == []
    assert (budget.spent, budget.reserved, progress.spent_usd, progress.reserved_usd) == (0.0, 0.0, 0.0, 0.0)


async def test_a_failed_call_is_settled_at_zero_and_the_error_propagates() -> None:
    budget = Budget(10.0)
    provider = FixedProvider(error=ProviderError("HTTP 500"))
    with pytest.raises(ProviderError, match="HTTP 500"):
        await PricedModel(provider, PRICE, budget, None).respond(REQUEST)
    assert (len(provider.received), budget.spent, budget.reserved, budget.in_flight) == (1, 0.0, 0.0, 0)


async def test_a_cancelled_call_gives_its_reservation_back() -> None:
    budget = Budget(10.0)
    provider = FixedProvider()
    provider.wait = True
    model = PricedModel(provider, PRICE, budget, None)
    async with anyio.create_task_group() as group:
        group.start_soon(model.respond, REQUEST)
        await provider.called.wait()
        assert budget.reserved > 0
        group.cancel_scope.cancel()
    assert (budget.spent, budget.reserved, budget.in_flight) == (0.0, 0.0, 0)


async def test_without_a_budget_calls_are_priced_and_added_up() -> None:
    progress = RunProgress("run", "journal.sqlite")
    model = PricedModel(FixedProvider(usage=replace(USAGE, reported_cost_usd=0.25)), PRICE, None, progress)
    first = await model.respond(REQUEST)
    second = await model.respond(REQUEST)
    assert (first.cost_usd, second.cost_usd, progress.spent_usd) == (0.25, 0.25, 0.5)


async def test_an_unpriced_model_reserves_nothing_and_costs_what_was_reported() -> None:
    budget = Budget(1.0)
    held: list[float] = []
    reported = PricedModel(FixedProvider(usage=replace(USAGE, reported_cost_usd=0.03),
                                         hook=lambda: held.append(budget.reserved)), None, budget, None)
    silent = PricedModel(FixedProvider(), None, budget, None)
    assert (await reported.respond(REQUEST)).cost_usd == 0.03
    assert (await silent.respond(REQUEST)).cost_usd == 0.0
    assert (held, budget.spent) == ([0.0], 0.03)


async def test_each_retry_reserves_its_own_worst_case_and_a_refused_retry_is_not_sent() -> None:
    """Against a real client and loopback server: one attempt is held up front, each retry adds one more,
    and when the cap refuses a retry it is not sent; the attempts already made are still paid."""
    one = worst_case_usd(REQUEST, PRICE)
    budget = Budget(one * 2.5)
    held: list[float] = []

    def respond(request: Recorded) -> Response:
        held.append(budget.reserved)
        return MockFailure(503)

    async with serve_mock(respond) as mock, make_http_client() as http:
        client = openai_client(mock.base_url, http, fast_retrier(max_attempts=6))
        with pytest.raises(BudgetExhausted):
            await PricedModel(client, PRICE, budget, None).respond(REQUEST)
    assert held == pytest.approx([one, 2 * one])  # the third attempt would pass the cap: never sent
    assert len(mock.requests) == 2 and budget.refused
    assert (budget.reserved, budget.in_flight) == (0.0, 0)


async def test_a_call_is_capped_at_the_model_s_max_tokens_before_it_is_priced() -> None:
    budget = Budget(10.0)
    held: list[float] = []
    provider = FixedProvider(hook=lambda: held.append(budget.reserved))
    model = CappedModel(PricedModel(provider, PRICE, budget, None), 100)
    await model.respond(replace(REQUEST, max_output_tokens=16_384))
    assert provider.received[0].max_output_tokens == 100
    assert held == [worst_case_usd(replace(REQUEST, max_output_tokens=100), PRICE)]


def test_attempts_must_be_at_least_one() -> None:
    with pytest.raises(ValueError, match="max_attempts must be at least 1"):
        PricedModel(FixedProvider(), PRICE, None, None, max_attempts=0)


# --- many concurrent calls against a random provider -------------------------------------------------

class RandomProvider:
    """A provider that bills no more than a request allows: prompt tokens up to the UTF-8 size of its
    text, output up to max_output_tokens, summed over up to `max_attempts` attempts. It sometimes fails,
    sometimes reports its own (discounted) cost, and keeps every request it received."""

    def __init__(self, rng: random.Random, price: Price, max_attempts: int, watch: Callable[[], None]) -> None:
        self.rng = rng
        self.price = price
        self.max_attempts = max_attempts
        self.watch = watch
        self.received: list[ModelRequest] = []

    @property
    def name(self) -> str:
        return "random"

    async def respond(self, request: ModelRequest) -> ModelResponse:
        self.received.append(request)
        self.watch()
        for _ in range(self.rng.randint(0, 3)):  # let the other calls interleave
            await anyio.lowlevel.checkpoint()
        if self.rng.random() < 0.1:
            raise ProviderError("HTTP 503")
        attempts = self.rng.randint(1, self.max_attempts)
        usage = sum((self._attempt(request) for _ in range(attempts)), Usage())
        return ModelResponse(AssistantTurn(text="ok"), usage, attempts=attempts)

    def _attempt(self, request: ModelRequest) -> Usage:
        rng = self.rng
        prompt = rng.randint(0, _text_bytes(request))
        cached = rng.randint(0, prompt)
        written = rng.randint(0, prompt - cached)
        usage = Usage(prompt, cached, written, rng.randint(0, request.max_output_tokens))
        if rng.random() < 0.3:
            return replace(usage, reported_cost_usd=rng.uniform(0, cost_usd(usage, self.price)))
        return usage


def _text_bytes(request: ModelRequest) -> int:
    text = request.system + "".join(m.content for m in request.messages) + str(request.tools)
    return len(text.encode())


def _requests(rng: random.Random, texts: Sequence[str], count: int) -> list[ModelRequest]:
    return [ModelRequest(system=f"call {i}: {rng.choice(texts)}",
                         messages=tuple(Message("user", rng.choice(texts)) for _ in range(rng.randint(0, 3))),
                         tools=TOY_TOOLS if rng.random() < 0.5 else (),
                         max_output_tokens=rng.randint(1, 4096))
            for i in range(count)]


Outcome = ModelResponse | BudgetExhausted | ProviderError


async def _call_all(model: PricedModel, requests: list[ModelRequest]) -> dict[str, Outcome]:
    outcomes: dict[str, Outcome] = {}

    async def one(request: ModelRequest) -> None:
        try:
            outcomes[request.system] = await model.respond(request)
        except (BudgetExhausted, ProviderError) as exc:
            outcomes[request.system] = exc

    async with anyio.create_task_group() as group:
        for request in requests:
            group.start_soon(one, request)
    return outcomes


rates = st.integers(0, 100_000).map(lambda n: n / 1000)  # USD per million tokens, to a tenth of a cent


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(price=st.builds(Price, rates, rates, rates, rates), cap=st.integers(0, 20_000).map(lambda n: n / 1000),
       already=st.floats(0, 1), max_attempts=st.integers(1, 3), rng=st.randoms(use_true_random=False),
       texts=st.lists(st.text(max_size=300), min_size=1, max_size=6))
def test_concurrent_calls_never_spend_past_the_cap(price: Price, cap: float, already: float, max_attempts: int,
                                                   rng: random.Random, texts: list[str]) -> None:
    budget, progress = Budget(cap, spent=cap * already), RunProgress("run", "journal.sqlite")
    start = budget.spent
    committed: list[float] = []
    provider = RandomProvider(rng, price, max_attempts, watch=lambda: committed.append(budget.spent + budget.reserved))
    model = PricedModel(provider, price, budget, progress, max_attempts=max_attempts)
    outcomes = anyio.run(_call_all, model, _requests(rng, texts, 64))

    paid = {key: o for key, o in outcomes.items() if isinstance(o, ModelResponse)}
    failed = {key for key, o in outcomes.items() if isinstance(o, ProviderError)}
    refused = {key for key, o in outcomes.items() if isinstance(o, BudgetExhausted)}
    sent = [request.system for request in provider.received]
    event("some calls refused" if refused else "no call refused")
    assert len(outcomes) == 64
    assert sorted(sent) == sorted(set(paid) | failed)  # each sent once; none refused was sent
    assert not refused & set(sent)
    assert budget.spent <= cap and all(value <= cap for value in committed)
    assert (budget.reserved, budget.in_flight, budget.overruns) == (0.0, 0, 0)
    assert all(o.cost_usd == cost_usd(o.usage, price) for o in paid.values())
    assert math.isclose(budget.spent, start + math.fsum(o.cost_usd for o in paid.values()), rel_tol=1e-9,
                        abs_tol=1e-12)
    assert (progress.spent_usd, progress.reserved_usd) == (budget.spent, 0.0)
