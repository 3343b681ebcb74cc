"""Value types shared by the generator, the decision engine and the planner.

A customer request is one or two legs (an operation on one order, the second leg being what to do
when the first one is not allowed) and may be a quote ("how much would I get back") instead of an
action. `Records` are the world records a decision needs: the customer, the order, the products of
the order's items, exactly as the read tools return them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from simulators.protocol import JSON

__all__ = ["Leg", "Records", "Request"]


@dataclass(frozen=True)
class Leg:
    op: str
    order_id: str
    item_ids: tuple[str, ...] = ()
    """Items the leg is about (return, exchange, modify_items): current item ids of the order."""
    new_item_ids: tuple[str, ...] = ()
    """Replacement variants, aligned with `item_ids` (exchange, modify_items)."""
    payment_method_id: str = ""
    """Refund destination (return), payer of the difference (exchange, modify_items), or the new
    method (modify_payment)."""
    reason: str = ""
    address: Mapping[str, str] = field(default_factory=dict)
    """The new shipping address (modify_address)."""


@dataclass(frozen=True)
class Request:
    legs: tuple[Leg, ...]
    quote: bool = False
    """A question about the refund of the first allowed leg: answered with a number, nothing written."""


@dataclass(frozen=True)
class Records:
    user: Mapping[str, JSON]
    order: Mapping[str, JSON]
    products: Mapping[str, Mapping[str, JSON]]
    """product_id -> product, for the products of the order's items and of requested variants."""
