"""The budget's write-ahead holds: the cap holds across a kill.

The budget (`runner.cost.budget`) lives in one process. A process killed with calls in flight loses
their reservations, and the provider may have billed those calls (or bills them when the answer it was
sending finds no one). So under a cap each call's reservation is committed to the journal before the
call is sent (`BudgetLedger.hold`); the call row written when it returns (keyed by the same request
hash) settles it. The next process of the run judges what the last one left (`judge_holds`): a hold
with no later call row of its request is lost, kept in the journal as spent at its worst case, and the
run's budget starts from its journaled spend plus every lost hold. That over-counts a call that was
billed less than its worst case, or not at all: the cap is never passed, though a killed run may stop
a little short of it.
"""

from __future__ import annotations

import itertools
import os
import time
import uuid

from runner.journal import Batch, Journal

__all__ = ["BudgetLedger", "judge_holds"]


class BudgetLedger:
    def __init__(self, journal: Journal, run_id: str) -> None:
        self._journal = journal
        self._run_id = run_id
        self._process = f"{os.getpid()}-{uuid.uuid4().hex[:8]}"
        self._ids = itertools.count(1)

    async def hold(self, amount_usd: float, request_hash: str) -> None:
        """Commit a call's reservation before it is sent (durable when this returns)."""
        hold_id = f"{self._process}-{next(self._ids)}"
        await self._journal.commit(Batch(urgent=True).budget_hold(self._run_id, hold_id, request_hash, amount_usd,
                                                                  time.time()))


async def judge_holds(journal: Journal, run_id: str) -> float:
    """At a process's start, before it sends anything: the holds earlier processes left open are lost
    when no call row of their request was journaled after them, settled otherwise (deleted). Returns
    what the run has lost so far (every lost hold's worst case), to count as spent."""
    held = await journal.read.open_holds(run_id)
    if held:
        calls = await journal.read.last_call_times(run_id, min(hold.created_at for hold in held))
        lost = [hold.hold_id for hold in held if calls.get(hold.request_hash, -1.0) < hold.created_at]
        await journal.commit(Batch().budget_holds_judged(run_id, lost))
    return await journal.read.lost_usd(run_id)
