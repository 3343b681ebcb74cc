"""How a run under a cap stops: no new episode once the room left is for the ones in flight, which
finish (their batches too: what they hold is under the cap already); a refused call (nothing in flight
could give room back) ends its episode unsent."""

from __future__ import annotations

import time
from dataclasses import dataclass

from runner.common.money import usd
from runner.cost.budget import BudgetExhausted
from runner.cost.spend_admission import SpendAdmission
from runner.journal import Batch, Journal
from runner.models.stack import ClientStack
from runner.schedule.stop_control import StopControl

__all__ = ["BudgetStop"]


@dataclass
class BudgetStop:
    run_id: str
    journal: Journal
    stop: StopControl
    clients: ClientStack

    async def may_start(self, spend: SpendAdmission, episodes: int) -> bool:
        """Whether `episodes` new episodes fit under the cap beside those in flight; when not, the run
        stops dispatching and the ones in flight finish (`runner.cost.spend_admission`)."""
        if spend.may_start(episodes):
            return True
        budget = self.clients.budget
        assert budget is not None  # without a cap every episode may start
        await self._stopping(f"budget: the {usd(budget.cap - budget.spent)} left under the cap {usd(budget.cap)} "
                             f"is kept for the {spend.in_flight} episodes in flight; resume with a higher cap")
        return False

    async def refused(self, refusal: BudgetExhausted) -> None:
        """A call was refused: its episode ends unsent and not journaled (it runs again on resume)."""
        await self._stopping(str(refusal))

    async def _stopping(self, reason: str) -> None:
        """The run turns to `stopping: budget` at once, on the dashboard and in the journal (`runs`): no
        new episode starts, and the ones in flight finish, their calls waiting for room as others settle."""
        if self.stop.requested:
            return
        self.stop.request(reason, "budget_exhausted")  # the dashboard shows "stopping" and the reason
        if self.clients.batcher is not None:  # batches outstanding end: their items hold room already
            self.clients.batcher.drain()
        await self.journal.commit(Batch().run_stopping(self.run_id, "budget", reason, time.time()))
