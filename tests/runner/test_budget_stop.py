"""How a capped run stops starting episodes (runner.schedule.budget_stop): why it stopped (the batch tail,
room short of an episode, a refused call), said from the moment it is requested and in the run's
closing line."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import pytest

from runner.cost.budget import Budget, BudgetExhausted
from runner.cost.spend_admission import BATCH_TAIL
from runner.display.progress import RunProgress
from runner.journal import open_journal
from runner.models.stack import ClientStack
from runner.schedule.budget_stop import BudgetStop
from runner.schedule.stop_control import StopControl


@asynccontextmanager
async def budget_stop_of(tmp_path: Path, budget: Budget) -> AsyncIterator[BudgetStop]:
    """A run's budget stop over a real journal, four call slots."""
    async with open_journal(tmp_path / "j.sqlite") as journal:
        clients = ClientStack("r1", journal, RunProgress("r1", str(tmp_path)), {}, {}, budget, 4, 4)
        yield BudgetStop("r1", journal, StopControl(), clients)


async def test_a_batched_test_episode_in_the_batch_tail_stops_the_run_and_says_why(tmp_path: Path) -> None:
    budget = Budget(100.0, spent=100.0 * (1 - BATCH_TAIL) + 0.01)  # a cent under the tail left
    async with budget_stop_of(tmp_path, budget) as budget_stop:
        stop = budget_stop.stop
        assert budget_stop.spend.fits(1)  # a live episode still fits what is left ...
        assert not await budget_stop.may_start(1, batched=True)  # ... a batched one does not
    assert stop.requested and stop.status == "budget_exhausted"
    assert f"less than {BATCH_TAIL:.0%} of the cap $100.00 is left" in stop.reason
    assert budget_stop.why == f" (no batched test episode starts with less than {BATCH_TAIL:.0%} of it left)"


async def test_a_live_start_that_fits_is_not_held_to_the_batch_tail(tmp_path: Path) -> None:
    budget = Budget(100.0, spent=100.0 * (1 - BATCH_TAIL) + 0.01)
    async with budget_stop_of(tmp_path, budget) as budget_stop:
        stop = budget_stop.stop
        assert await budget_stop.may_start(1)
    assert not stop.requested and budget_stop.why == ""


async def test_a_start_that_does_not_fit_says_in_the_closing_line_what_was_left(tmp_path: Path) -> None:
    budget = Budget(1.0, spent=0.995)
    async with budget_stop_of(tmp_path, budget) as budget_stop:
        stop = budget_stop.stop
        budget.waited = True  # a call has waited for room: no episode starts before one has finished
        assert not await budget_stop.may_start(1)
    assert stop.requested and "the $0.0050 left under the cap $1.00 does not pay for another episode;" in stop.reason
    assert budget_stop.why == " (the $0.0050 left did not pay for another episode)"


async def test_a_refused_call_says_in_the_closing_line_what_did_not_fit(tmp_path: Path) -> None:
    budget = Budget(1.0, spent=0.9)
    async with budget_stop_of(tmp_path, budget) as budget_stop:
        stop = budget_stop.stop
        with pytest.raises(BudgetExhausted) as refusal:
            budget.reserve(0.25)
        await budget_stop.refused(refusal.value)
        await budget_stop.refused(BudgetExhausted(0.5, 0.9, 0.0, 1.0))  # a later refusal: the first one stays
    assert stop.requested and stop.reason == str(refusal.value)
    assert budget_stop.why == " (a call's worst case $0.25 did not fit beside what was spent and in flight)"
