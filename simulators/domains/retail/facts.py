"""The facts of a request: the attribute values rules are matched against, computed from records.

The generator computes them from the records it writes and the planner from the records the read
tools return, with this one module, so the gold answer and the scripted agent can never disagree
about what a request is.
"""

from __future__ import annotations

from collections.abc import Mapping

from simulators.domains.retail.model import Leg, Records
from simulators.domains.retail.vocabulary import ITEM_LEVEL, WHOLE_ORDER_OPS, Facts
from simulators.protocol import JSON

__all__ = ["item_ids_in_scope", "leg_facts", "method_kind", "net_paid", "payment_kind", "refund_target"]



def method_kind(payment_method_id: str, methods: Mapping[str, JSON]) -> str:
    method = methods.get(payment_method_id)
    if isinstance(method, dict) and isinstance(method.get("source"), str):
        return str(method["source"])
    for kind in ("gift_card", "credit_card", "paypal"):
        if payment_method_id.startswith(kind):
            return kind
    return "other"


def net_paid(order: Mapping[str, JSON]) -> dict[str, float]:
    """Per method, payments minus refunds: what each method still has in the order."""
    net: dict[str, float] = {}
    for entry in order.get("payment_history", []):
        sign = 1.0 if entry.get("transaction_type") == "payment" else -1.0
        method = str(entry.get("payment_method_id", ""))
        net[method] = round(net.get(method, 0.0) + sign * float(entry.get("amount", 0.0)), 2)
    return net


def payment_kind(order: Mapping[str, JSON], methods: Mapping[str, JSON]) -> str:
    paying = [method for method, amount in net_paid(order).items() if amount > 0]
    if len(paying) > 1:
        return "split"
    if not paying:
        return "none"
    return method_kind(paying[0], methods)


def refund_target(destination: str, order: Mapping[str, JSON], methods: Mapping[str, JSON]) -> str:
    if method_kind(destination, methods) == "gift_card":
        return "gift_card"
    history = order.get("payment_history", [])
    first = str(history[0].get("payment_method_id", "")) if history else ""
    return "original_method" if destination == first else "other_method"


def item_ids_in_scope(leg: Leg, order: Mapping[str, JSON]) -> tuple[str, ...]:
    """The items whose category and class a rule on this leg looks at."""
    if leg.op in WHOLE_ORDER_OPS:
        return tuple(str(item.get("item_id", "")) for item in order.get("items", []))
    return leg.item_ids


def leg_facts(leg: Leg, records: Records) -> Facts:
    order, user = records.order, records.user
    methods: Mapping[str, JSON] = user.get("payment_methods", {})
    address: Mapping[str, JSON] = order.get("address", {})
    facts: dict[str, frozenset[str]] = {
        "status": frozenset({str(order.get("status", ""))}),
        "payment": frozenset({payment_kind(order, methods)}),
        "membership": frozenset({str(user.get("membership", ""))}),
        "ship_state": frozenset({str(address.get("state", ""))}),
    }
    facts.update(_item_facts(item_ids_in_scope(leg, order), records))
    if leg.op in ("cancel", "return"):
        facts["reason"] = frozenset({leg.reason})
    if leg.op == "return":
        facts["refund_to"] = frozenset({refund_target(leg.payment_method_id, order, methods)})
    if leg.op in ("exchange", "modify_items", "modify_payment"):
        facts["pay_with"] = frozenset({method_kind(leg.payment_method_id, methods)})
    if leg.op == "modify_address":
        facts["new_state"] = frozenset({leg.address.get("state", "")})
    return facts


def _item_facts(item_ids: tuple[str, ...], records: Records) -> dict[str, frozenset[str]]:
    product_of = {str(item.get("item_id")): str(item.get("product_id")) for item in records.order.get("items", [])}
    categories: set[str] = set()
    classes: set[str] = set()
    for item_id in item_ids:
        product = records.products.get(product_of.get(item_id, ""), {})
        categories.add(str(product.get("category", "unknown")))
        variant = product.get("variants", {}).get(item_id, {})
        classes.add("clearance" if variant.get("clearance") else "regular")
    return dict(zip(ITEM_LEVEL, (frozenset(categories), frozenset(classes)), strict=True))
