"""The checks and the money flow behind the export's write tools (`reference_tools`): argument reading,
eligibility (window, clearance, destination, cover), variant swaps and catalog lookups, refunds split
across payment methods. Each check raises `ToolError` with the reference's own text before anything is
written.
"""

from __future__ import annotations

import datetime
from collections.abc import Mapping

from simulators.domains.retail.state import EpisodeState
from simulators.domains.retail.store_config import StoreConfig
from simulators.domains.retail.vocabulary import TODAY
from simulators.errors import ToolError
from simulators.protocol import JSON
from simulators.pycompat import unhashable_error

__all__ = ["age_in_days", "catalog_line", "catalog_product", "destination_allowed", "first_item",
           "item_ids_argument", "key_argument", "membership_tier", "new_item_ids_argument", "order_payments",
           "orderable", "original_method", "payment_method", "refund_parts", "require_cover",
           "require_eligible", "require_in_order", "settle", "swap_difference"]


def key_argument(args: Mapping[str, JSON], name: str) -> str:
    """An argument the reference looks up as a dict key, where a list or an object fails as in Python."""
    problem = unhashable_error(args[name])
    if problem is not None:
        raise ToolError(problem)
    return str(args[name])


def membership_tier(user: Mapping[str, JSON]) -> str:
    return str(user.get("membership", "bronze"))


def payment_method(user: Mapping[str, JSON], method: str) -> Mapping[str, JSON]:
    """A payment method on the account; a missing one fails as the reference's lookup does."""
    found: Mapping[str, JSON] | None = user["payment_methods"].get(method)
    if found is None:
        raise ToolError(repr(method))
    return found


def item_ids_argument(args: Mapping[str, JSON]) -> list[str]:
    values = args.get("item_ids")
    if not values:
        raise ToolError("item_ids must not be empty")
    if not isinstance(values, list):
        raise ToolError("item_ids must be a list of item ids")
    return [str(value) for value in values]


def new_item_ids_argument(args: Mapping[str, JSON]) -> list[str]:
    values = args["new_item_ids"]
    if not isinstance(values, list):
        raise ToolError("new_item_ids must be a list of item ids")
    return [str(value) for value in values]


def original_method(order: Mapping[str, JSON]) -> str:
    return str(order["payment_history"][0]["payment_method_id"])


def first_item(order: Mapping[str, JSON], item_id: str) -> Mapping[str, JSON]:
    found: Mapping[str, JSON] = next(item for item in order["items"] if item["item_id"] == item_id)
    return found


def require_in_order(order: Mapping[str, JSON], item_ids: list[str]) -> None:
    """Each id at most as many times as the order holds it."""
    held = [str(item["item_id"]) for item in order["items"]]
    if any(item_ids.count(item_id) > held.count(item_id) for item_id in item_ids):
        raise ToolError("some item not found")


def age_in_days(order: Mapping[str, JSON]) -> int | None:
    delivered = order.get("delivered_at")
    if delivered is None:
        return None
    return (datetime.date.fromisoformat(TODAY) - datetime.date.fromisoformat(str(delivered))).days


def require_eligible(config: StoreConfig, state: EpisodeState, order: Mapping[str, JSON], item_ids: list[str],
                      verb: str) -> None:
    """Final sale and the category window, item by item; the return tool may be permissive on either."""
    age = age_in_days(order)
    returning = verb == "returned"
    for item_id in item_ids:
        product = state.product_of_item(item_id)
        if product is None:
            raise ToolError("some item not found")
        if product["variants"][item_id].get("clearance") and not (returning and config.clearance_returnable):
            raise ToolError(f"item {item_id} is a clearance item (final sale) and cannot be {verb}")
        category = product["category"]
        window = config.return_window_days[category]
        if (age is None or age > window) and not (returning and config.window_returnable):
            # verb[:-1]: the reference names the window "returne" / "exchange" this way; kept verbatim
            raise ToolError(f"the {category} {verb[:-1]} window ({window} days after delivery) has passed "
                            "for this order")


def destination_allowed(config: StoreConfig, user: Mapping[str, JSON], order: Mapping[str, JSON],
                         method: str) -> bool:
    """A gift card always; the order's original method for the tiers allowed it."""
    card = user["payment_methods"].get(method)
    if card is None:
        return False
    if card["source"] == "gift_card":
        return True
    return membership_tier(user) in config.refund_original_tiers and method == original_method(order)


def require_cover(card: Mapping[str, JSON], amount: float) -> None:
    if card["source"] == "gift_card" and amount > 0 and card["balance"] < amount:
        raise ToolError(f"insufficient gift card balance (balance ${card['balance']:.2f} < ${amount:.2f})")


def swap_difference(state: EpisodeState, order: Mapping[str, JSON], item_ids: list[str],
                     new_item_ids: list[str]) -> float:
    """What the new variants cost more (or less) than the items they replace, after checking each pair."""
    if len(item_ids) != len(new_item_ids):
        raise ToolError("item_ids and new_item_ids must have the same length")
    held = [str(item["item_id"]) for item in order["items"]]
    difference = 0.0
    for old, new in zip(item_ids, new_item_ids, strict=True):
        if item_ids.count(old) > held.count(old):
            raise ToolError("some item not found")
        item = first_item(order, old)
        variants = catalog_product(state, str(item["product_id"])).get("variants", {})
        if new not in variants:
            raise ToolError("new item is not a variant of the same product")
        variant = variants[new]
        if not variant["available"]:
            raise ToolError("new item is not available")
        if variant.get("clearance"):
            raise ToolError("new item is a clearance item (final sale) and cannot be selected")
        difference += variant["price"] - item["price"]
    return round(difference, 2)


def catalog_product(state: EpisodeState, product_id: str) -> Mapping[str, JSON]:
    try:
        return state.product(product_id)
    except ToolError:
        return {}


def catalog_line(product: Mapping[str, JSON], item_id: str) -> dict[str, JSON]:
    variant = product["variants"][item_id]
    return {"name": product["name"], "product_id": product["product_id"], "item_id": item_id,
            "price": variant["price"], "options": variant["options"]}


def orderable(state: EpisodeState, item_id: str) -> dict[str, JSON]:
    product = state.product_of_item(item_id)
    if product is None:
        raise ToolError("item not found")
    if not product["variants"][item_id]["available"]:
        raise ToolError("item is not available")
    return catalog_line(product, item_id)


# ------------------------------------------------------------------------------------------- money

def refund_parts(config: StoreConfig, user: Mapping[str, JSON], order: Mapping[str, JSON], method: str,
                  refund: float) -> list[tuple[str, float]]:
    """Where a return refund goes: the destination, or (proportional split refunds, a card destination,
    an order paid with several methods) every paying method by its share, the last taking the remainder."""
    paid: dict[str, float] = {}
    for entry in order["payment_history"]:
        if entry["transaction_type"] == "payment":
            payer = str(entry["payment_method_id"])
            paid[payer] = round(paid.get(payer, 0.0) + entry["amount"], 2)
    if not (config.split_refund_proportional and user["payment_methods"][method]["source"] != "gift_card"
            and len(paid) > 1):
        return [(method, refund)]
    total_paid = sum(paid.values())
    parts: list[tuple[str, float]] = []
    allotted = 0.0
    for index, payer in enumerate(paid):
        last = index == len(paid) - 1
        part = round(refund - allotted, 2) if last else round(refund * paid[payer] / total_paid, 2)
        allotted = round(allotted + part, 2)
        parts.append((payer, part))
    return parts


def settle(state: EpisodeState, owner: str, order: dict[str, JSON], method: str, amount: float) -> None:
    """A signed money movement: a charge (amount > 0) or a refund, written on the order and, for a gift
    card, on its balance at once. Cover was checked before anything was written."""
    user = state.user(owner)
    if user["payment_methods"][method]["source"] == "gift_card":
        card = state.user_for_write(owner)["payment_methods"][method]
        card["balance"] = round(card["balance"] - amount, 2)
    order["payment_history"].append({"transaction_type": "payment" if amount > 0 else "refund",
                                     "amount": round(abs(amount), 2), "payment_method_id": method})


def order_payments(card: Mapping[str, JSON], method: str, fallback: str | None,
                    total: float) -> tuple[list[tuple[str, float]], float | None]:
    """A new order's payments and the paying gift card's balance after them (None: not a gift card).
    A gift card short of the total is drained and the rest charged to the fallback."""
    if card["source"] != "gift_card":
        return [(method, total)], None
    balance = card["balance"]
    if balance >= total:
        return [(method, total)], round(balance - total, 2)
    if fallback is None:
        raise ToolError(f"insufficient gift card balance (balance ${balance:.2f} < total ${total:.2f}) "
                        "and no fallback payment method")
    drained = [(method, round(balance, 2))] if balance > 0 else []
    return [*drained, (fallback, round(total - balance, 2))], 0.0
