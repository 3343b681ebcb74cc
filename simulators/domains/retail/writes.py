"""The write tools, mechanically: what the store's systems accept, not what its policy allows.

Tools check only what a system can check (the order exists and is the customer's, its status is one
the operation works on, the items are in the order, a new variant belongs to the same product and is
in stock, the payment method is on the account, a gift card covers what it pays). Policy (which
payment forms, categories, destinations ... are served right now) is not enforced here: like a real
back office whose tools lag the rule book, the call goes through and the grade tells right from wrong.

Every handler validates everything before it changes anything, so a refused call leaves no trace.
Money is written out in full (payment and refund entries, gift card balances), so the grader's hash
checks every cent.
"""

from __future__ import annotations

from collections.abc import Mapping

from simulators.domains.retail.facts import method_kind, net_paid
from simulators.domains.retail.state import EpisodeState
from simulators.domains.retail.vocabulary import CANCEL_REASONS, RETURN_REASONS, TODAY
from simulators.errors import ToolError
from simulators.protocol import JSON

__all__ = [
    "cancel_pending_order",
    "exchange_delivered_order_items",
    "modify_pending_order_address",
    "modify_pending_order_items",
    "modify_pending_order_payment",
    "place_order",
    "return_delivered_order_items",
]

ADDRESS_FIELDS = ("address1", "address2", "city", "state", "country", "zip")


def cancel_pending_order(state: EpisodeState, args: Mapping[str, JSON]) -> JSON:
    order_id, reason = str(args["order_id"]), str(args["reason"])
    _require_status(state, state.owned_order(order_id), "cancel")
    if reason not in CANCEL_REASONS:
        raise ToolError(f"invalid reason '{reason}'; valid reasons: {', '.join(CANCEL_REASONS)}")
    order = state.order_for_write(order_id)
    for method, amount in net_paid(order).items():
        if amount > 0:
            _refund(state, order, method, amount)
    order["status"] = "cancelled"
    order["cancel_reason"] = reason
    return order


def return_delivered_order_items(state: EpisodeState, args: Mapping[str, JSON]) -> JSON:
    order_id, method, reason = str(args["order_id"]), str(args["payment_method_id"]), str(args["reason"])
    item_ids = _id_list(args, "item_ids")
    current = state.owned_order(order_id)
    _require_status(state, current, "return")
    if reason not in RETURN_REASONS:
        raise ToolError(f"invalid return reason '{reason}'; valid reasons: {', '.join(RETURN_REASONS)}")
    amount = round(sum(float(item["price"]) for item in _take_items(current, item_ids)), 2)
    _require_method(state, method)
    order = state.order_for_write(order_id)
    order.update(status="return requested", return_items=sorted(item_ids), return_reason=reason,
                 return_payment_method_id=method)
    _refund(state, order, method, amount)
    return order


def _paid_swap(state: EpisodeState, args: Mapping[str, JSON], op: str) -> tuple[dict[str, JSON], list[str],
                                                                             list[str], str, float]:
    """The checks and payment shared by exchanges and item modifications: the order (writable), the
    items swapped, the paying method and the price difference it settled."""
    order_id, method = str(args["order_id"]), str(args["payment_method_id"])
    item_ids, new_item_ids = _id_list(args, "item_ids"), _id_list(args, "new_item_ids")
    current = state.owned_order(order_id)
    _require_status(state, current, op)
    difference = _swap_difference(state, current, item_ids, new_item_ids)
    _require_method(state, method)
    _require_cover(state, method, difference)
    order = state.order_for_write(order_id)
    _settle(state, order, method, difference)
    return order, item_ids, new_item_ids, method, difference


def exchange_delivered_order_items(state: EpisodeState, args: Mapping[str, JSON]) -> JSON:
    order, item_ids, new_item_ids, method, difference = _paid_swap(state, args, "exchange")
    order.update(status="exchange requested", exchange_items=sorted(item_ids),
                 exchange_new_items=sorted(new_item_ids), exchange_payment_method_id=method,
                 exchange_price_difference=difference)
    return order


def modify_pending_order_items(state: EpisodeState, args: Mapping[str, JSON]) -> JSON:
    order, item_ids, new_item_ids, _, _ = _paid_swap(state, args, "modify")
    for old, new in zip(item_ids, new_item_ids, strict=True):
        _swap_item(state, order, old, new)
    return order


def modify_pending_order_address(state: EpisodeState, args: Mapping[str, JSON]) -> JSON:
    order_id = str(args["order_id"])
    _require_status(state, state.owned_order(order_id), "modify")
    order = state.order_for_write(order_id)
    order["address"] = {name: str(args.get(name, "")) for name in ADDRESS_FIELDS}
    return order


def modify_pending_order_payment(state: EpisodeState, args: Mapping[str, JSON]) -> JSON:
    order_id, method = str(args["order_id"]), str(args["payment_method_id"])
    current = state.owned_order(order_id)
    _require_status(state, current, "modify")
    history = current.get("payment_history", [])
    if len(history) != 1:
        raise ToolError("only an order paid in a single payment can change its payment method")
    old, total = str(history[0]["payment_method_id"]), round(float(history[0]["amount"]), 2)
    if method == old:
        raise ToolError("the new payment method must differ from the current one")
    _require_method(state, method)
    _require_cover(state, method, total)
    order = state.order_for_write(order_id)
    _settle(state, order, method, total)
    _refund(state, order, old, total)
    return order


def place_order(state: EpisodeState, args: Mapping[str, JSON]) -> JSON:
    """A new order for the episode's customer (public export tool). A gift card that cannot cover the
    total is drained and the rest charged to a non-gift-card fallback, or the order is refused."""
    user_id, method = str(args["user_id"]), str(args["payment_method_id"])
    fallback = args.get("fallback_payment_method_id")
    if user_id != state.owner:
        raise ToolError("orders can only be placed for the account in this conversation")
    items = [_catalog_item(state, item_id) for item_id in _id_list(args, "item_ids")]
    methods = _methods(state, user_id)
    if method not in methods or (fallback is not None and str(fallback) not in methods):
        raise ToolError("payment method not found")
    if fallback is not None and method_kind(str(fallback), methods) == "gift_card":
        raise ToolError("the fallback payment method cannot be a gift card")
    total = round(sum(float(item["price"]) for item in items), 2)
    payments = _order_payments(methods, method, None if fallback is None else str(fallback), total)
    user = state.user_for_write(user_id)
    order_id = state.new_order_id()
    order: dict[str, JSON] = {
        "order_id": order_id, "user_id": user_id, "address": dict(user.get("address", {})), "items": items,
        "status": "pending", "placed_at": TODAY, "payment_history": [],
    }
    for payer, amount in payments:
        _charge(state, order, payer, amount)
    state.add_order(order)
    return order


# ------------------------------------------------------------------------------------------ checks

def _id_list(args: Mapping[str, JSON], name: str) -> list[str]:
    values = args.get(name)
    if not isinstance(values, list) or not values:
        raise ToolError(f"{name} must be a non-empty list of item ids")
    return [str(value) for value in values]


def _require_status(state: EpisodeState, order: Mapping[str, JSON], kind: str) -> None:
    status = str(order.get("status", ""))
    if status not in state.statuses(kind):
        raise ToolError(f"the order is '{status}'; this operation needs one of: "
                        + ", ".join(sorted(state.statuses(kind))))


def _methods(state: EpisodeState, user_id: str | None = None) -> Mapping[str, JSON]:
    methods: Mapping[str, JSON] = state.user(user_id or state.owner).get("payment_methods", {})
    return methods


def _require_method(state: EpisodeState, method: str) -> None:
    if method not in _methods(state):
        raise ToolError("payment method not found on this account")


def _require_cover(state: EpisodeState, method: str, amount: float) -> None:
    """A gift card pays only what its balance covers."""
    card = _methods(state).get(method, {})
    if amount > 0 and method_kind(method, _methods(state)) == "gift_card" and float(card["balance"]) < amount:
        raise ToolError(f"insufficient gift card balance (balance ${float(card['balance']):.2f} "
                        f"< amount ${amount:.2f})")


def _take_items(order: Mapping[str, JSON], item_ids: list[str]) -> list[Mapping[str, JSON]]:
    """The order's items named by `item_ids`, each occurrence used once."""
    pool = list(order.get("items", []))
    taken = []
    for item_id in item_ids:
        index = next((i for i, item in enumerate(pool) if item.get("item_id") == item_id), None)
        if index is None:
            raise ToolError(f"item {item_id} is not in the order")
        taken.append(pool.pop(index))
    return taken


def _swap_difference(state: EpisodeState, order: Mapping[str, JSON], item_ids: list[str],
                     new_item_ids: list[str]) -> float:
    if len(item_ids) != len(new_item_ids):
        raise ToolError("item_ids and new_item_ids must have the same length")
    difference = 0.0
    for item, new_id in zip(_take_items(order, item_ids), new_item_ids, strict=True):
        variant = state.variant(str(item["product_id"]), new_id)
        if variant is None:
            raise ToolError(f"new item {new_id} is not a variant of the same product")
        if not variant.get("available", False):
            raise ToolError(f"new item {new_id} is not available")
        if variant.get("clearance", False):
            raise ToolError(f"new item {new_id} is a clearance item and cannot be selected")
        difference += float(variant["price"]) - float(item["price"])
    return round(difference, 2)


def _catalog_item(state: EpisodeState, item_id: str) -> dict[str, JSON]:
    for product_id in state.product_ids():
        variant = state.variant(product_id, item_id)
        if variant is not None:
            if not variant.get("available", False):
                raise ToolError(f"item {item_id} is not available")
            product = state.product(product_id)
            return {"name": product["name"], "product_id": product_id, "item_id": item_id,
                    "price": variant["price"], "options": variant.get("options", {})}
    raise ToolError(f"item {item_id} not found")


def _order_payments(methods: Mapping[str, JSON], method: str, fallback: str | None,
                    total: float) -> list[tuple[str, float]]:
    if method_kind(method, methods) != "gift_card":
        return [(method, total)]
    balance = round(float(methods[method]["balance"]), 2)
    if balance >= total:
        return [(method, total)]
    if fallback is None:
        raise ToolError(f"insufficient gift card balance (balance ${balance:.2f} < total ${total:.2f}) "
                        "and no fallback payment method")
    return [(method, balance), (fallback, round(total - balance, 2))] if balance > 0 else [(fallback, total)]


# ------------------------------------------------------------------------------------------- money

def _settle(state: EpisodeState, order: dict[str, JSON], method: str, difference: float) -> None:
    if difference > 0:
        _charge(state, order, method, difference)
    elif difference < 0:
        _refund(state, order, method, -difference)


def _charge(state: EpisodeState, order: dict[str, JSON], method: str, amount: float) -> None:
    order.setdefault("payment_history", []).append(
        {"transaction_type": "payment", "amount": round(amount, 2), "payment_method_id": method})
    _move_balance(state, str(order["user_id"]), method, -amount)


def _refund(state: EpisodeState, order: dict[str, JSON], method: str, amount: float) -> None:
    order.setdefault("payment_history", []).append(
        {"transaction_type": "refund", "amount": round(amount, 2), "payment_method_id": method})
    _move_balance(state, str(order["user_id"]), method, amount)


def _move_balance(state: EpisodeState, user_id: str, method: str, amount: float) -> None:
    """Gift cards settle at once; other methods settle outside the store."""
    if method_kind(method, _methods(state, user_id)) != "gift_card":
        return
    card = state.user_for_write(user_id)["payment_methods"][method]
    card["balance"] = round(float(card["balance"]) + amount, 2)


def _swap_item(state: EpisodeState, order: dict[str, JSON], old: str, new: str) -> None:
    for index, item in enumerate(order["items"]):
        if item.get("item_id") == old:
            product_id = str(item["product_id"])
            product, variant = state.product(product_id), state.variant(product_id, new) or {}
            order["items"][index] = {"name": product["name"], "product_id": product_id, "item_id": new,
                                     "price": variant["price"], "options": variant.get("options", {})}
            return
