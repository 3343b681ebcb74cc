"""The hard cap: reservations, settlement, refusal, and counters that never drift."""

from __future__ import annotations

from collections.abc import Callable

import anyio
import anyio.lowlevel
import pytest

import runner.cost.budget
from runner.cost.budget import EPISODE_AGE, Budget, BudgetExhausted


def test_public_api() -> None:
    assert runner.cost.budget.__all__ == ["EPISODE_AGE", "Budget", "BudgetExhausted", "Reservation"]


def test_a_reservation_that_would_pass_the_cap_is_refused() -> None:
    budget = Budget(1.0)
    budget.reserve(0.75)
    budget.reserve(0.25)  # exactly at the cap: allowed
    with pytest.raises(BudgetExhausted, match=r"cap \$1.00 reached") as refused:
        budget.reserve(0.01)
    assert (refused.value.needed, refused.value.reserved, refused.value.cap) == (0.01, 1.0, 1.0)
    assert budget.reserved == 1.0
    assert budget.in_flight == 2


def test_settle_releases_the_reservation_and_adds_the_actual_by_purpose() -> None:
    budget = Budget(10.0)
    agent = budget.reserve(2.0)
    judge = budget.reserve(1.0, "judge")
    budget.settle(agent, 0.5)
    budget.settle(judge, 0.25)
    assert (budget.spent, budget.reserved, budget.in_flight) == (0.75, 0.0, 0)
    assert budget.spent_by_purpose() == {"agent": 0.5, "judge": 0.25}


def test_release_gives_back_a_call_never_sent() -> None:
    budget = Budget(1.0)
    reservation = budget.reserve(1.0)
    budget.release(reservation)
    assert (budget.spent, budget.reserved) == (0.0, 0.0)
    budget.reserve(1.0)


def test_closing_a_reservation_twice_is_a_bug() -> None:
    budget = Budget(1.0)
    reservation = budget.reserve(0.5)
    budget.settle(reservation, 0.1)
    with pytest.raises(ValueError, match="already settled or released"):
        budget.settle(reservation, 0.1)
    with pytest.raises(ValueError, match="already settled or released"):
        budget.release(reservation)
    assert budget.spent == 0.1


def test_a_resumed_run_starts_from_what_it_spent() -> None:
    budget = Budget(1.0, spent=0.75)
    budget.reserve(0.25)
    with pytest.raises(BudgetExhausted):
        Budget(1.0, spent=0.75).reserve(0.5)
    over = Budget(1.0, spent=1.5)
    with pytest.raises(BudgetExhausted):
        over.reserve(0.0)  # past the cap nothing is sent, not even a call with no price


def test_an_actual_above_its_reservation_is_paid_in_full_and_counted() -> None:
    budget = Budget(1.0)
    reservation = budget.reserve(0.5)
    budget.settle(reservation, 1.2)
    assert (budget.spent, budget.overruns) == (1.2, 1)


@pytest.mark.parametrize("amount", [-0.01, float("nan"), float("inf")])
def test_amounts_must_be_finite_and_not_negative(amount: float) -> None:
    budget = Budget(1.0)
    with pytest.raises(ValueError, match="finite amount >= 0"):
        budget.reserve(amount)
    with pytest.raises(ValueError, match="finite amount >= 0"):
        budget.settle(budget.reserve(0.1), amount)
    with pytest.raises(ValueError, match="cap_usd must be a finite amount >= 0"):
        Budget(amount)


def test_counters_do_not_drift() -> None:
    # Floats would leave 0.1 + 0.2 - 0.1 - 0.2 at 2.8e-17; exact sums return to 0.
    budget = Budget(100.0)
    amounts = [0.1, 0.2, 0.3, 1e-9, 7.77, 1 / 3]
    held = [budget.reserve(a) for a in amounts]
    for reservation in held[::2]:
        budget.release(reservation)
    for reservation in held[1::2]:
        budget.settle(reservation, reservation.amount)
    assert budget.reserved == 0.0
    assert budget.spent == pytest.approx(0.2 + 1e-9 + 1 / 3, rel=1e-15)


def test_after_a_refusal_a_call_that_fits_is_still_held() -> None:
    # The run stops dispatching at a refusal; the calls still asked are those of episodes in flight,
    # and one that fits finishes its episode.
    budget = Budget(1.0)
    held = budget.reserve(0.5)
    with pytest.raises(BudgetExhausted):
        budget.reserve(0.6)
    assert budget.refused
    small = budget.reserve(0.01)
    with pytest.raises(BudgetExhausted):
        budget.extend(held, 0.5)
    budget.settle(held, 0.2)
    budget.settle(small, 0.01)
    assert (budget.spent, budget.reserved) == (pytest.approx(0.21), 0.0)


async def _reserve_as(budget: Budget, age: int, amount: float, granted: list[int]) -> None:
    token = EPISODE_AGE.set(age)
    try:
        await budget.reserve_when_room(amount)
        granted.append(age)
    except BudgetExhausted:
        granted.append(-age)
    finally:
        EPISODE_AGE.reset(token)


async def test_a_call_that_does_not_fit_waits_and_the_oldest_episode_is_served_first() -> None:
    budget = Budget(1.0)
    held = budget.reserve(0.9)
    granted: list[int] = []
    async with anyio.create_task_group() as group:
        for age in (7, 3, 5):
            group.start_soon(_reserve_as, budget, age, 0.5, granted)
        await wait_until(lambda: budget.waiting == 3)
        assert granted == [] and budget.waited
        budget.settle(held, 0.0)  # room for two of 0.5: the two oldest, in age order
        await wait_until(lambda: len(granted) == 2)
        assert granted == [3, 5]
        assert budget.waiting == 1 and budget.in_flight == 2
        group.cancel_scope.cancel()
    assert budget.waiting == 0


async def test_a_waiting_call_is_refused_once_nothing_in_flight_can_give_room_back() -> None:
    budget = Budget(1.0, spent=0.6)
    held = budget.reserve(0.3)
    granted: list[int] = []
    async with anyio.create_task_group() as group:
        group.start_soon(_reserve_as, budget, 1, 0.5, granted)
        await wait_until(lambda: budget.waiting == 1)
        budget.settle(held, 0.3)  # 0.1 left, nothing in flight: 0.5 can never fit
    assert granted == [-1]
    assert (budget.spent, budget.reserved, budget.in_flight) == (pytest.approx(0.9), 0.0, 0)


async def test_a_younger_call_never_takes_room_an_older_one_waits_for() -> None:
    budget = Budget(1.0)
    held = budget.reserve(0.6)
    granted: list[int] = []
    async with anyio.create_task_group() as group:
        group.start_soon(_reserve_as, budget, 2, 0.5, granted)
        await wait_until(lambda: budget.waiting == 1)
        group.start_soon(_reserve_as, budget, 9, 0.1, granted)  # it would fit, but the older waits
        await wait_until(lambda: budget.waiting == 2)
        budget.settle(held, 0.1)
    assert granted == [2, 9]


async def wait_until(condition: Callable[[], bool]) -> None:
    with anyio.fail_after(30):  # a safety net: each condition follows from the loop running
        while not condition():
            await anyio.lowlevel.checkpoint()


def test_a_retry_extends_its_call_s_reservation_within_the_cap() -> None:
    budget = Budget(1.0)
    held = budget.extend(budget.reserve(0.3), 0.3)
    assert (held.amount, budget.reserved, budget.in_flight) == (0.6, 0.6, 1)
    with pytest.raises(BudgetExhausted):
        budget.extend(held, 0.5)
    budget.settle(held, 0.45)
    assert (budget.spent, budget.reserved) == (0.45, 0.0)
