"""How a run under a cap stops: no new episode once the room left is for the ones in flight, which
finish (their batches too: what they hold is under the cap already); a refused call (nothing in flight
could give room back) ends its episode unsent."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field

from runner.common.money import usd
from runner.cost.budget import BudgetExhausted
from runner.cost.spend_admission import BATCH_TAIL, SpendAdmission
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
    spend: SpendAdmission = field(init=False)
    """Whether a new episode fits under the cap; each episode's start order for the budget."""
    why: str = field(init=False, default="")
    """What the run's closing line adds to "budget cap reached": why the run stopped starting episodes
    (the journaled reason is replaced by that line once everything in flight has settled)."""

    def __post_init__(self) -> None:
        # A batched run's test calls hold no call slot: any number of them may hold room at once.
        parallel = None if self.clients.batcher is not None else self.clients.concurrency
        self.spend = SpendAdmission(self.clients.budget, self.clients.concurrency, parallel)
        self.stop.on_request.append(self.spend.close)  # a start waiting for room gives up at any stop

    async def may_start(self, episodes: int, wanted: Callable[[], bool] = lambda: True, batched: bool = False) -> bool:
        """Whether `episodes` new episodes may start under the cap, waiting for episodes in flight to
        end while they do not fit; when they cannot, the run stops dispatching
        (`runner.cost.spend_admission`). `wanted`: whether they are still to start after the wait
        (their stream's method may have failed meanwhile); `batched`: test episodes whose calls go in
        provider batches."""
        if await self.spend.admit(episodes, batched):
            if not self.stop.requested and wanted():
                return True
            self.spend.withdraw(episodes)
            return False
        if self.stop.requested:
            return False
        budget = self.clients.budget
        assert budget is not None  # without a cap every episode may start
        if batched and self.spend.in_batch_tail:
            await self._stopping(f"budget: less than {BATCH_TAIL:.0%} of the cap {usd(budget.cap)} is left; batch "
                                 "rounds this near the cap buy a few episodes each; resume with a higher cap",
                                 f"no batched test episode starts with less than {BATCH_TAIL:.0%} of it left")
            return False
        expected = self.spend.expected_usd
        each = f"about {usd(expected)} each" if expected else ""
        left = usd(budget.cap - budget.spent)
        await self._stopping(f"budget: the {left} left under the cap {usd(budget.cap)} does not pay for another "
                             f"episode{f' ({each})' if each else ''}; resume with a higher cap",
                             f"the {left} left did not pay for another episode{f', {each}' if each else ''}")
        return False

    async def refused(self, refusal: BudgetExhausted) -> None:
        """A call was refused: its episode ends unsent and not journaled (it runs again on resume)."""
        await self._stopping(str(refusal), f"a call's worst case {usd(refusal.needed)} did not fit beside what was "
                                           "spent and in flight")

    async def _stopping(self, reason: str, why: str) -> None:
        """The run turns to `stopping: budget` at once, on the dashboard and in the journal (`runs`): no
        new episode starts, and the ones in flight finish, their calls waiting for room as others settle."""
        if self.stop.requested:
            return  # the first reason stands
        self.why = f" ({why})"
        self.stop.request(reason, "budget_exhausted")  # the dashboard shows "stopping" and the reason
        if self.clients.batcher is not None:  # batches outstanding end: their items hold room already
            self.clients.batcher.drain()
        await self.journal.commit(Batch().run_stopping(self.run_id, "budget", reason, time.time()))
