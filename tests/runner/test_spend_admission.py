"""Which new episodes start under a cap (runner.cost.spend_admission), and in what order calls of
started episodes take the call slots (runner.providers.priority)."""

from __future__ import annotations

import anyio
import anyio.lowlevel
import pytest

from runner.common.episode_age import EPISODE_AGE
from runner.cost.budget import Budget
from runner.cost.spend_admission import BATCH_TAIL, MARGIN, SpendAdmission
from runner.providers.priority import TEST, PriorityLimiter
from tests.runner.test_budget import wait_until


def _finish(spend: SpendAdmission, budget: Budget, cost: float) -> None:
    """One episode starts, costs `cost` and finishes."""
    spend.ended(_spend_in_flight(spend, budget, cost), finished=True)


def _spend_in_flight(spend: SpendAdmission, budget: Budget, cost: float) -> int:
    """One episode starts and spends `cost` (its calls carry its age); still in flight."""
    age = spend.begin()
    token = EPISODE_AGE.set(age)
    try:
        budget.settle(budget.reserve(cost), cost)
    finally:
        EPISODE_AGE.reset(token)
    return age


def test_an_episode_in_flight_is_expected_to_cost_what_longer_finished_ones_cost_beyond_it() -> None:
    budget = Budget(100.0)
    spend = SpendAdmission(budget)
    for cost in (1.0, 2.0, 3.0, 6.0):
        _finish(spend, budget, cost)
    # A new episode: the mean, 3.0. One that spent 2.5: the finished ones above it cost 3 and 6, so
    # it is expected to spend (3 + 6) / 2 - 2.5 = 2.0 more; a plain mean less its spend would say 0.5.
    assert spend.expected_usd == pytest.approx(3.0)
    _spend_in_flight(spend, budget, 2.5)
    left = budget.cap - budget.spent  # 100 - 12 - 2.5
    # Room for n new ones: MARGIN * (2.0 + 3.0 n) <= left.
    most = int((left / MARGIN - 2.0) / 3.0)
    assert spend.fits(most) and not spend.fits(most + 1)


def test_the_spread_of_a_method_s_own_calls_is_owed_by_every_episode() -> None:
    budget = Budget(10.0)
    spend = SpendAdmission(budget)
    for _ in range(4):
        _finish(spend, budget, 1.0)
    budget.settle(budget.reserve(2.0, "method"), 2.0)  # age 0: a learn's calls, 0.5 per finished episode
    assert spend.expected_usd == pytest.approx(1.5)
    left = budget.cap - budget.spent  # 10 - 6
    assert spend.fits(int(left / MARGIN / 1.5)) and not spend.fits(int(left / MARGIN / 1.5) + 1)


async def test_a_start_that_does_not_fit_waits_for_an_episode_to_end_then_starts() -> None:
    budget = Budget(10.0)
    spend = SpendAdmission(budget)
    _finish(spend, budget, 1.0)
    ages = [_spend_in_flight(spend, budget, 0.5) for _ in range(6)]  # 6 x 0.5 owed yet: 3.75 with the margin
    assert not spend.fits(3)  # 6 left; (6 x 0.5 owed + 3 x 1.0) x 1.25 = 7.5
    admitted: list[bool] = []

    async def start() -> None:
        admitted.append(await spend.admit(3))

    async with anyio.create_task_group() as group:
        group.start_soon(start)
        await wait_until(lambda: spend.waiting(3) == 1)
        assert admitted == []
        for age in ages[:4]:
            spend.ended(age, finished=True)  # each cost 0.5: the estimate now owes less for the rest
        await wait_until(lambda: bool(admitted))
    assert admitted == [True]


async def test_a_block_waits_while_a_smaller_start_fits_and_gives_up_once_nothing_can_change() -> None:
    budget = Budget(4.0)
    spend = SpendAdmission(budget)
    _finish(spend, budget, 1.0)
    running = _spend_in_flight(spend, budget, 0.2)  # 2.8 left; it owes 0.8 more
    outcomes: dict[str, bool] = {}

    async def start(name: str, count: int) -> None:
        outcomes[name] = await spend.admit(count)

    async with anyio.create_task_group() as group:
        group.start_soon(start, "block", 3)  # (0.8 + 3 x 1.0) x 1.25 = 4.75 > 2.8: waits
        await wait_until(lambda: spend.waiting(3) == 1)
        group.start_soon(start, "test", 1)  # (0.8 + 1.0) x 1.25 = 2.25 fits: starts beside it
        await wait_until(lambda: "test" in outcomes)
        assert outcomes == {"test": True}
        spend.ended(running, finished=True)  # nothing in flight, but the test episode is yet to begin
        for _ in range(20):  # the block wakes and looks again: the promised start keeps it waiting
            await anyio.lowlevel.checkpoint()
        assert "block" not in outcomes and spend.waiting(3) == 1
        tested = _spend_in_flight(spend, budget, 1.0)
        spend.ended(tested, finished=True)  # 1.8 left; 3 x mean(0.2, 1, 1) x 1.25 = 2.75: never fits
        await wait_until(lambda: "block" in outcomes)
    assert outcomes == {"test": True, "block": False}


async def test_a_stop_releases_every_start_waiting_and_refuses_later_ones() -> None:
    budget = Budget(2.0)
    spend = SpendAdmission(budget)
    _finish(spend, budget, 1.0)
    _spend_in_flight(spend, budget, 0.5)
    outcomes: list[bool] = []

    async def start() -> None:
        outcomes.append(await spend.admit(1))

    async with anyio.create_task_group() as group:
        for _ in range(3):
            group.start_soon(start)
        await wait_until(lambda: spend.waiting(1) == 3)
        spend.close()
    assert outcomes == [False, False, False] and not await spend.admit(1)


def test_before_an_episode_finishes_as_many_start_as_there_are_call_slots() -> None:
    budget = Budget(1.0)
    spend = SpendAdmission(budget, first=4)
    for _ in range(4):
        assert spend.fits(1)
        spend.begin()
    assert not spend.fits(1)
    assert SpendAdmission(None, first=4).fits(100)  # without a cap every start fits


async def test_call_slots_go_to_the_oldest_episode_first_within_a_priority() -> None:
    limiter = PriorityLimiter(1)
    order: list[int] = []
    release = anyio.Event()

    async def call(age: int) -> None:
        EPISODE_AGE.set(age)
        async with limiter.slot(TEST):
            order.append(age)
            if age == 99:
                await release.wait()

    async with anyio.create_task_group() as group:
        group.start_soon(call, 99)
        await wait_until(lambda: order == [99])
        for age in (7, 3, 5, 0):
            group.start_soon(call, age)
        await wait_until(lambda: limiter.waiting == 4)
        release.set()
    assert order == [99, 0, 3, 5, 7]  # a method's own call (age 0) first, then by the episodes' start


def test_the_room_also_holds_what_each_episode_s_next_call_reserves_beyond_its_cost() -> None:
    """Episodes near the cap must not take turns for room, one call at a time (a batched run would wait
    out a batch's latency per turn): each episode in flight needs its next call's reservation to fit."""
    for parallel in (None, 2):  # None: no bound on calls in flight (a batched run's items); 2: two call slots
        budget = Budget(100.0)
        spend = SpendAdmission(budget, parallel=parallel)
        for reserved in (4.0, 8.0):  # two finished episodes, each one call costing 2.0
            token = EPISODE_AGE.set(age := spend.begin())
            budget.settle(budget.reserve(reserved), 2.0)
            EPISODE_AGE.reset(token)
            spend.ended(age, finished=True)
        assert budget.mean_gap == pytest.approx(4.0)  # (2 + 6) / 2 held beyond the cost
        left = budget.cap - budget.spent  # 96
        # n new episodes: MARGIN x 2.0 n for their spend, plus 4.0 for each call that may hold room at once.
        most = max(n for n in range(1, 100) if MARGIN * 2.0 * n + 4.0 * min(n, parallel or n) <= left)
        assert spend.fits(most) and not spend.fits(most + 1)
    assert most > 30  # with two slots, far more than 96 / (MARGIN x 2 + 4) = 14 fit


async def test_no_batched_test_episode_starts_once_less_than_the_batch_tail_of_the_cap_is_left() -> None:
    budget = Budget(100.0)
    spend = SpendAdmission(budget)
    _finish(spend, budget, 0.01)
    # An episode in flight (a live start that does not fit would wait for it) spends up to the tail and
    # a cent: batched starts still fit.
    in_flight = _spend_in_flight(spend, budget, (1 - BATCH_TAIL) * budget.cap - budget.spent - 0.01)
    assert spend.fits(1, batched=True) and await spend.admit(1, batched=True)
    token = EPISODE_AGE.set(spend.begin())
    budget.settle(budget.reserve(0.02), 0.02)  # now a cent under it
    EPISODE_AGE.reset(token)
    assert budget.cap - budget.spent == pytest.approx(BATCH_TAIL * budget.cap - 0.01)
    assert not spend.fits(1, batched=True) and spend.fits(1)  # a live start still fits the room
    with anyio.fail_after(5):  # refused at once, although episodes are in flight that could end
        assert not await spend.admit(1, batched=True)
    assert spend.in_flight == 2 and in_flight
