"""The run-wide hard cap on spend.

Each call reserves its worst case before it is sent and settles to its actual cost after, so the money
committed (spent + reserved) never passes the cap as long as every actual cost stays within its
reservation. Every check and the update after it is synchronous: concurrent asyncio tasks cannot
interleave between them.

A call whose worst case does not fit now waits (`reserve_when_room`) rather than ending the run: room
comes back as calls in flight settle below their worst case. Waiting calls are served oldest episode
first (`EPISODE_AGE`: the episode started first finishes first; a method's own calls, which finish a
block of episodes already run, come before all), and a younger call never takes room an older one
waits for. A call is refused only when nothing is in flight that could give room back.

Amounts are kept as exact fractions (a float converts to one exactly): sums do not drift, so reserved
returns to exactly 0 when nothing is in flight and a rounding error can never carry spend past the cap.
"""

from __future__ import annotations

import heapq
import itertools
import math
from collections.abc import Callable
from dataclasses import dataclass, field
from fractions import Fraction

import anyio

from runner.common.episode_age import EPISODE_AGE
from runner.common.money import usd
from simulators.model_api import Purpose

__all__ = ["EPISODE_AGE", "Budget", "BudgetExhausted", "Reservation"]



class BudgetExhausted(Exception):
    """A call's worst case would pass the run's cap, so the call was not sent. The run stops cleanly
    and can be resumed with a higher cap."""

    def __init__(self, needed: float, spent: float, reserved: float, cap: float) -> None:
        self.needed = needed
        self.spent = spent
        self.reserved = reserved
        self.cap = cap
        super().__init__(f"budget cap {usd(cap)} reached: spent ${spent:.4f} + in flight ${reserved:.4f} + this "
                         f"call's worst case ${needed:.4f} would pass it; resume with a higher cap")


@dataclass(frozen=True)
class Reservation:
    id: int
    amount: float
    purpose: Purpose
    age: int = 0
    """The episode it was reserved for (`EPISODE_AGE`)."""


@dataclass(order=True)
class _Waiter:
    age: int
    order: int
    exact: Fraction = field(compare=False)
    amount: float = field(compare=False)
    purpose: Purpose = field(compare=False)
    decided: anyio.Event = field(compare=False, default_factory=anyio.Event)
    reservation: Reservation | None = field(compare=False, default=None)
    refusal: BudgetExhausted | None = field(compare=False, default=None)
    gone: bool = field(compare=False, default=False)


class Budget:
    def __init__(self, cap_usd: float, spent: float = 0.0) -> None:
        """`spent`: what the run already spent (a resumed run starts from its journal's total)."""
        self._cap = _exact(cap_usd, "cap_usd")
        self._spent = _exact(spent, "spent")
        self._reserved = Fraction(0)
        self._open: dict[int, Reservation] = {}
        self._ids = itertools.count()
        self._by_purpose: dict[str, Fraction] = {}
        self.refused = False
        """Set by the first refusal."""
        self.waited = False
        """Set when a call first had to wait for room: the cap is near, so no new episode should start."""
        self._waiting: list[_Waiter] = []
        self._order = itertools.count()
        self._episode_spend: dict[int, float] = {}
        """Per episode (`EPISODE_AGE`), what its settled calls cost: an estimate's input, so floats (the
        cap itself is kept exact)."""
        self.on_wait: list[Callable[[], None]] = []
        """Called each time a call starts to wait (a batch collector then sends what it holds at once:
        the room it holds comes back only when its batch is answered)."""
        self._gap_sum = 0.0
        self._settled = 0
        self.overruns = 0
        """Calls that cost more than they reserved: the worst case was no upper bound for them (a stale
        price, a provider-reported cost above the table's, more attempts than allowed for)."""

    @property
    def cap(self) -> float:
        return float(self._cap)

    @property
    def spent(self) -> float:
        return float(self._spent)

    @property
    def reserved(self) -> float:
        return float(self._reserved)

    @property
    def in_flight(self) -> int:
        return len(self._open)

    def spent_by_purpose(self) -> dict[str, float]:
        """Spend settled in this process, by purpose (agent, judge, method, probe)."""
        return {purpose: float(amount) for purpose, amount in self._by_purpose.items()}

    @property
    def waiting(self) -> int:
        """Calls waiting for room."""
        return sum(1 for waiter in self._waiting if not waiter.gone)

    @property
    def mean_gap(self) -> float:
        """What a settled call held beyond what it cost, on average: the room each call in flight takes
        beyond its cost (an estimate's input, so a float)."""
        return self._gap_sum / self._settled if self._settled else 0.0

    def episode_spend(self, age: int) -> float:
        """What the episode `age` spent so far (settled calls), forgotten by `forget_episode`; age 0:
        every call of no episode (a method's, a probe's), over the run."""
        return self._episode_spend.get(age, 0.0)

    def forget_episode(self, age: int) -> float:
        return self._episode_spend.pop(age, 0.0)

    def reserve(self, amount: float, purpose: Purpose = "agent") -> Reservation:
        """Hold `amount` for a call about to be sent, or raise BudgetExhausted at once: then do not send it."""
        exact = _exact(amount, "amount")
        if self._waiting_ahead(EPISODE_AGE.get()) or not self._fits(exact):
            raise self._refusal(amount)
        return self._hold(amount, exact, purpose, EPISODE_AGE.get())

    async def reserve_when_room(self, amount: float, purpose: Purpose = "agent") -> Reservation:
        """Hold `amount` for a call about to be sent, waiting for room while calls in flight may give it
        back; BudgetExhausted when nothing in flight can (then do not send it)."""
        exact, age = _exact(amount, "amount"), EPISODE_AGE.get()
        if not self._waiting_ahead(age) and self._fits(exact):
            return self._hold(amount, exact, purpose, age)
        waiter = _Waiter(age, next(self._order), exact, amount, purpose)
        heapq.heappush(self._waiting, waiter)
        self.waited = True
        for listener in self.on_wait:
            listener()
        self._serve_waiting()
        try:
            await waiter.decided.wait()
        except BaseException:
            waiter.gone = True  # cancelled: its place is given up, and what it was given, given back
            if waiter.reservation is not None:
                self.release(waiter.reservation)
            self._serve_waiting()
            raise
        if waiter.refusal is not None:
            raise waiter.refusal
        assert waiter.reservation is not None
        return waiter.reservation

    def _waiting_ahead(self, age: int) -> bool:
        return any(not waiter.gone and waiter.age <= age for waiter in self._waiting)

    def _fits(self, exact: Fraction) -> bool:
        return self._spent + self._reserved + exact <= self._cap

    def _hold(self, amount: float, exact: Fraction, purpose: Purpose, age: int) -> Reservation:
        reservation = Reservation(next(self._ids), amount, purpose, age)
        self._open[reservation.id] = reservation
        self._reserved += exact
        return reservation

    def _refusal(self, amount: float) -> BudgetExhausted:
        self.refused = True
        return BudgetExhausted(amount, self.spent, self.reserved, self.cap)

    def _serve_waiting(self) -> None:
        """Decide for the oldest waiting calls, in order: room, or a refusal once nothing is in flight."""
        while self._waiting:
            head = self._waiting[0]
            if head.gone:
                heapq.heappop(self._waiting)
            elif self._fits(head.exact):
                heapq.heappop(self._waiting)
                head.reservation = self._hold(head.amount, head.exact, head.purpose, head.age)
                head.decided.set()
            elif not self._open:
                heapq.heappop(self._waiting)
                head.refusal = self._refusal(head.amount)
                head.decided.set()
            else:
                return

    def extend(self, reservation: Reservation, amount: float) -> Reservation:
        """Hold `amount` more for a call already holding `reservation` (its next attempt), or raise
        BudgetExhausted (the attempt is not sent; the call keeps what it held)."""
        if reservation.id not in self._open:
            raise ValueError(f"reservation {reservation.id} was already settled or released")
        grown = Reservation(reservation.id, reservation.amount + _checked_float(amount), reservation.purpose,
                            reservation.age)
        # The held amount is the float the reservation carries (what `_close` gives back), exactly.
        delta = _exact(grown.amount, "amount") - _exact(reservation.amount, "amount")
        self._check(amount, delta)
        self._open[reservation.id] = grown
        self._reserved += delta
        return grown

    def _check(self, amount: float, exact: Fraction) -> None:
        """Refuse a retry's next attempt that would pass the cap (a retry does not wait: its call
        holds room already, and waiting could leave it holding that room for nothing)."""
        if not self._fits(exact):
            raise self._refusal(amount)

    def settle(self, reservation: Reservation, actual_cost: float) -> None:
        """The call ended: release its reservation and add what it actually cost. An actual above the
        reservation is still added in full (it was paid) and counted in `overruns`."""
        actual = _exact(actual_cost, "actual_cost")
        self._close(reservation)
        if actual > _exact(reservation.amount, "amount"):
            self.overruns += 1
        self._spent += actual
        self._gap_sum += max(0.0, reservation.amount - float(actual))
        self._settled += 1
        self._by_purpose[reservation.purpose] = self._by_purpose.get(reservation.purpose, Fraction(0)) + actual
        self._episode_spend[reservation.age] = self._episode_spend.get(reservation.age, 0.0) + float(actual)
        self._serve_waiting()

    def release(self, reservation: Reservation) -> None:
        """The call was never sent: give its reservation back."""
        self._close(reservation)
        self._serve_waiting()

    def _close(self, reservation: Reservation) -> None:
        # Closing twice would count a call's money twice; that is a bug in the caller, not a state to absorb.
        if self._open.pop(reservation.id, None) is None:
            raise ValueError(f"reservation {reservation.id} was already settled or released")
        self._reserved -= _exact(reservation.amount, "amount")


def _exact(value: float, name: str) -> Fraction:
    if not math.isfinite(value) or value < 0:
        raise ValueError(f"{name} must be a finite amount >= 0, got {value}")
    return Fraction(value)


def _checked_float(value: float) -> float:
    _exact(value, "amount")
    return value
