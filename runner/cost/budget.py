"""The run-wide hard cap on spend.

Each call reserves its worst case before it is sent and settles to its actual cost after, so the money
committed (spent + reserved) never passes the cap as long as every actual cost stays within its
reservation. Every method is synchronous: concurrent asyncio tasks cannot interleave between a check
and the update that follows it.

Amounts are kept as exact fractions (a float converts to one exactly): sums do not drift, so reserved
returns to exactly 0 when nothing is in flight and a rounding error can never carry spend past the cap.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass
from fractions import Fraction

from runner.common.money import usd
from simulators.model_api import Purpose

__all__ = ["Budget", "BudgetExhausted", "Reservation"]


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
        """Set by the first refusal; every later reservation is refused too."""
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

    def reserve(self, amount: float, purpose: Purpose = "agent") -> Reservation:
        """Hold `amount` for a call about to be sent, or raise BudgetExhausted: then do not send it."""
        exact = _exact(amount, "amount")
        self._check(amount, exact)
        reservation = Reservation(next(self._ids), amount, purpose)
        self._open[reservation.id] = reservation
        self._reserved += exact
        return reservation

    def extend(self, reservation: Reservation, amount: float) -> Reservation:
        """Hold `amount` more for a call already holding `reservation` (its next attempt), or raise
        BudgetExhausted (the attempt is not sent; the call keeps what it held)."""
        if reservation.id not in self._open:
            raise ValueError(f"reservation {reservation.id} was already settled or released")
        grown = Reservation(reservation.id, reservation.amount + _checked_float(amount), reservation.purpose)
        # The held amount is the float the reservation carries (what `_close` gives back), exactly.
        delta = _exact(grown.amount, "amount") - _exact(reservation.amount, "amount")
        self._check(amount, delta)
        self._open[reservation.id] = grown
        self._reserved += delta
        return grown

    def _check(self, amount: float, exact: Fraction) -> None:
        """Refuse once the cap would be passed, and from then on refuse everything: the run is stopping,
        and a later, cheaper call slipping under the cap would only start work that cannot finish."""
        if self.refused or self._spent + self._reserved + exact > self._cap:
            self.refused = True
            raise BudgetExhausted(amount, self.spent, self.reserved, self.cap)

    def settle(self, reservation: Reservation, actual_cost: float) -> None:
        """The call ended: release its reservation and add what it actually cost. An actual above the
        reservation is still added in full (it was paid) and counted in `overruns`."""
        actual = _exact(actual_cost, "actual_cost")
        self._close(reservation)
        if actual > _exact(reservation.amount, "amount"):
            self.overruns += 1
        self._spent += actual
        self._by_purpose[reservation.purpose] = self._by_purpose.get(reservation.purpose, Fraction(0)) + actual

    def release(self, reservation: Reservation) -> None:
        """The call was never sent: give its reservation back."""
        self._close(reservation)

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
