"""The lease of the run this process drives (`runner.journal.lease`): taken before the run's first row,
renewed while it runs, given up when it ends; and who else may be writing a run, for `resume`, a shard's
start and `journal merge`.

Taking a lease is a swap against what was read: two processes starting one run at once (two copies of
a shard on two hosts) both swap, one finds its own lease afterwards and goes on, the other is refused in
one line naming the winner's host and PID, having written nothing. A holder that finds its lease taken
(it was frozen or cut off longer than the lease holds, and another host took the run over) stops at once
and writes nothing more; a clash on a journaled row is explained the same way, never as a traceback.
The lease holds `SHIFTBENCH_LEASE_S` seconds (default 60) and is renewed four times as often: a host
that dies frees its runs within that time. Hosts' clocks must agree to within a small part of it.
"""

from __future__ import annotations

import os
import time
from collections.abc import Mapping
from dataclasses import dataclass

import anyio

from runner.journal import Batch, Journal, JournalFull
from runner.journal.lease import Lease, clock, lease_meta_key, live_writer, this_host
from simulators.errors import ShiftbenchInputError

__all__ = ["LEASE_ENV", "LeaseKeeper", "lease_ttl_s", "live_writer", "take_lease", "this_host"]

LEASE_ENV = "SHIFTBENCH_LEASE_S"
DEFAULT_TTL_S = 60.0
RENEWALS_PER_TTL = 4


def lease_ttl_s(environ: Mapping[str, str] = os.environ) -> float:
    text = environ.get(LEASE_ENV, "").strip()
    if not text:
        return DEFAULT_TTL_S
    try:
        ttl = float(text)
    except ValueError:
        ttl = 0.0
    if not 0.5 <= ttl <= 86_400:
        raise ShiftbenchInputError(f"{LEASE_ENV}: how long a run's lease holds, 0.5 to 86400 seconds; got {text!r}")
    return ttl


@dataclass
class LeaseKeeper:
    journal: Journal
    run_id: str
    held: Lease
    lost: Lease | None = None
    """Who took the run over, once this process found its lease gone."""

    @property
    def key(self) -> str:
        return lease_meta_key(self.run_id)

    async def renew_forever(self) -> None:
        """Renew until cancelled (the run's end); a lease found taken ends the run with one line."""
        while True:
            await anyio.sleep(self.held.ttl_s / RENEWALS_PER_TTL)
            if not await self._swap(self.held.renewed(time.time())):
                raise self.taken_over()

    async def give_up(self) -> None:
        """Release the lease at the run's end. On a full disk the release is not written: the lease lapses
        by its TTL instead, and the run's own stop (said by the caller) is what the user must see."""
        if self.lost is None:
            with anyio.CancelScope(shield=True):
                try:
                    await self._swap(self.held.given_up(time.time()))
                except JournalFull:
                    pass

    def taken_over(self) -> ShiftbenchInputError:
        lost = self.lost
        who = "another process" if lost is None else f"process {lost.pid} on host {lost.host}"
        return ShiftbenchInputError(f"run {self.run_id}: {who} took this run over while this process's lease "
                                    f"({self.held.ttl_s:g} s, last renewed at {clock(self.held.renewed_at)}) had "
                                    "lapsed (was this process frozen or cut off?); this process stops and writes "
                                    "nothing more")

    async def explain(self, error: BaseException) -> BaseException:
        """A row clash (an episode journaled twice): another writer, named, if the lease says so."""
        found = Lease.from_json(await self.journal.read.meta(self.key))
        if found is not None and found.same_holder(self.held):
            return error
        self.lost = found
        return self.taken_over()

    async def _swap(self, new: Lease) -> bool:
        await self.journal.commit(Batch().lease_swap(self.key, new.to_json(), self.held.to_json()))
        after = await self.journal.read.meta(self.key)
        if after == new.to_json():
            self.held = new
            return True
        self.lost = Lease.from_json(after)
        return False


async def take_lease(journal: Journal, run_id: str, status_live: bool = False, pid: int = 0) -> LeaseKeeper:
    """This process's lease on the run, taken before it writes any row of it (a new run's too: of two
    processes creating one run, one gets the lease); refused in one line while another live process
    holds it. `status_live`, `pid`: the run as journaled, for a journal from before leases."""
    key = lease_meta_key(run_id)
    before = await journal.read.meta(key)
    now = time.time()
    writer = live_writer(status_live, pid, "", before, now, os.getpid())
    if writer is not None:
        raise _held(run_id, writer)
    mine = Lease(this_host(), os.getpid(), now, lease_ttl_s())
    await journal.commit(Batch().lease_swap(key, mine.to_json(), before))
    after = await journal.read.meta(key)
    if after != mine.to_json():
        winner = Lease.from_json(after)
        raise _held(run_id, "another process" if winner is None else f"process {winner.pid} on host {winner.host}")
    return LeaseKeeper(journal, run_id, mine)


def _held(run_id: str, writer: str) -> ShiftbenchInputError:
    return ShiftbenchInputError(f"run {run_id} is being written by {writer}; nothing was written. Wait for it to end "
                                "(or stop it); if its host is down, run this again once its lease has lapsed")
