"""The decision engine: a request, the records it touches and a policy -> what must happen.

One function decides for both sides of the benchmark: the generator runs it under the active policy
to write gold actions and answers (and under the documented policy to tell hidden tasks from fully
specified ones), and the scripted planner runs it on what the tools showed it. Legs are tried in the
customer's order; the first allowed one is carried out (or quoted). When none is, the request is
refused and every code that applies is accepted, since a careful agent may cite any true cause.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from simulators.domains.retail.facts import leg_facts, method_kind, net_paid
from simulators.domains.retail.model import Leg, Records, Request
from simulators.domains.retail.vocabulary import OP_TOOL, Rule, blocking_reasons
from simulators.protocol import JSON, Action

__all__ = ["Outcome", "decide", "leg_action", "leg_blockers", "price_difference", "refund_value"]


@dataclass(frozen=True)
class Outcome:
    actions: tuple[Action, ...]
    answer: JSON
    """None (carried out), {"kind": "refuse", "reasons": [...]}, or a number (quote)."""
    cite: str | None = None
    """The refusal code an agent names: the first cause of the first leg."""


def decide(request: Request, records: Records, rules: tuple[Rule, ...]) -> Outcome:
    refusals: list[list[str]] = []
    for leg in request.legs:
        reasons = leg_blockers(leg, records, rules)
        if not reasons:
            if request.quote:
                return Outcome((), refund_value(leg, records))
            return Outcome((leg_action(leg),), None)
        refusals.append(reasons)
    if request.quote:
        return Outcome((), 0.0)
    codes = list(dict.fromkeys(code for reasons in refusals for code in reasons))
    return Outcome((), {"kind": "refuse", "reasons": codes}, refusals[0][0])


def leg_blockers(leg: Leg, records: Records, rules: tuple[Rule, ...]) -> list[str]:
    """Why a leg cannot be carried out: a missing item first, then policy, then money."""
    if not _items_present(leg, records):
        return ["not_found"]
    reasons = blocking_reasons(leg.op, leg_facts(leg, records), rules)
    if _short_of_balance(leg, records) and "insufficient_balance" not in reasons:
        reasons.append("insufficient_balance")
    return reasons


def leg_action(leg: Leg) -> Action:
    kwargs: dict[str, JSON] = {"order_id": leg.order_id}
    if leg.op == "cancel":
        kwargs["reason"] = leg.reason
    elif leg.op == "return":
        kwargs.update(item_ids=list(leg.item_ids), payment_method_id=leg.payment_method_id, reason=leg.reason)
    elif leg.op in ("exchange", "modify_items"):
        kwargs.update(item_ids=list(leg.item_ids), new_item_ids=list(leg.new_item_ids),
                      payment_method_id=leg.payment_method_id)
    elif leg.op == "modify_address":
        kwargs.update(dict(leg.address))
    else:
        kwargs["payment_method_id"] = leg.payment_method_id
    return Action(OP_TOOL[leg.op], kwargs)


def refund_value(leg: Leg, records: Records) -> float:
    """What a return of the leg's items pays back: their prices in the order."""
    prices = {str(item.get("item_id")): float(item.get("price", 0.0)) for item in records.order.get("items", [])}
    return round(sum(prices.get(item_id, 0.0) for item_id in leg.item_ids), 2)


def price_difference(leg: Leg, records: Records) -> float:
    """New variants minus current items; positive means the customer pays."""
    items = {str(item.get("item_id")): item for item in records.order.get("items", [])}
    total = 0.0
    for old, new in zip(leg.item_ids, leg.new_item_ids, strict=False):
        item = items.get(old, {})
        product = records.products.get(str(item.get("product_id")), {})
        variant = product.get("variants", {}).get(new, {})
        total += float(variant.get("price", item.get("price", 0.0))) - float(item.get("price", 0.0))
    return round(total, 2)


def _items_present(leg: Leg, records: Records) -> bool:
    have = Counter(str(item.get("item_id")) for item in records.order.get("items", []))
    return all(count <= have[item_id] for item_id, count in Counter(leg.item_ids).items())


def _short_of_balance(leg: Leg, records: Records) -> bool:
    methods = records.user.get("payment_methods", {})
    if method_kind(leg.payment_method_id, methods) != "gift_card":
        return False
    balance = float(methods.get(leg.payment_method_id, {}).get("balance", 0.0))
    if leg.op in ("exchange", "modify_items"):
        return price_difference(leg, records) > balance
    if leg.op == "modify_payment":
        return round(sum(net_paid(records.order).values()), 2) > balance
    return False
