"""The public export's write tools, with the checks, messages and money flow of the reference's.

An export world (one without `_mechanics`) runs its scenario's `StoreConfig` (see `store_config`):
- `cancel_pending_order`: a pending order, a listed reason, and an order total (payments net of
  refunds) within the membership tier's cap; every method's outstanding amount is refunded, gift cards
  at once.
- `return_delivered_order_items`: a delivered order, a listed reason, items in the order (as a
  multiset), not clearance and inside the category window unless the scenario's tool is permissive
  there, and a refund destination the tier may use (a gift card always; the order's first payment
  method for the tiers listed). The refund is the items' price less the tier's restocking fee, recorded
  as `return_refund_amount`; with proportional split refunds, a refund to a card of an order paid with
  several methods goes back to each method in proportion to what it paid (the last takes the rounding
  remainder).
- `exchange_delivered_order_items`: a delivered order, a payment method on file, the same window and
  clearance checks (never relaxed for exchanges), then available non-clearance variants of the same
  products; an upcharge is charged (a gift card must cover it), a refund needs an allowed destination.
- `modify_pending_order_items`: a pending order, the original payment method or a gift card, the same
  variant checks; the items are swapped in place and, when the scenario records modifications, the
  swaps are appended to `modification_history` in sorted order.
- `place_order`: the reference's gift card and fallback rules, for any customer.
Unlike the built-in tools, these accept any order the episode sees and any customer: the reference's
tools check existence, not ownership.

Every check runs before anything is written, so a refused call leaves the episode's state as it was.
Error texts are the reference's, word for word (the world prefixes `Error: `), since agents learn from
them; that includes the reference's "returne window" for a return past its window.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from functools import partial

from simulators.domains.retail import reads
from simulators.domains.retail.facts import net_paid
from simulators.domains.retail.reference_checks import (
    catalog_line,
    destination_allowed,
    first_item,
    item_ids_argument,
    key_argument,
    membership_tier,
    new_item_ids_argument,
    order_payments,
    orderable,
    original_method,
    payment_method,
    refund_parts,
    require_cover,
    require_eligible,
    require_in_order,
    settle,
    swap_difference,
)
from simulators.domains.retail.state import EpisodeState
from simulators.domains.retail.store_config import StoreConfig
from simulators.domains.retail.vocabulary import TODAY
from simulators.errors import ToolError
from simulators.protocol import JSON
from simulators.pycompat import signature_error, unhashable_error

__all__ = ["SIGNATURES", "Handler", "argument_error", "reference_handlers"]

Handler = Callable[[EpisodeState, Mapping[str, JSON]], JSON]

SIGNATURES: dict[str, tuple[str, tuple[str, ...], tuple[str, ...]]] = {
    "find_user_id_by_name_zip": ("FindUserIdByNameZip.invoke", ("first_name", "last_name", "zip"), ()),
    "get_user_details": ("GetUserDetails.invoke", ("user_id",), ()),
    "get_order_details": ("GetOrderDetails.invoke", ("order_id",), ()),
    "get_product_details": ("GetProductDetails.invoke", ("product_id",), ()),
    "cancel_pending_order": ("make_cancel_tool.<locals>.CancelPendingOrderCfg.invoke", ("order_id", "reason"), ()),
    "return_delivered_order_items": ("make_return_tool.<locals>.ReturnDeliveredOrderItemsCfg.invoke",
                                     ("order_id", "item_ids", "payment_method_id", "reason"), ()),
    "exchange_delivered_order_items": ("make_exchange_tool.<locals>.ExchangeDeliveredOrderItemsCfg.invoke",
                                       ("order_id", "item_ids", "new_item_ids", "payment_method_id"), ()),
    "modify_pending_order_items": ("make_modify_tool.<locals>.ModifyPendingOrderItemsCfg.invoke",
                                   ("order_id", "item_ids", "new_item_ids", "payment_method_id"), ()),
    "place_order": ("PlaceOrder.invoke", ("user_id", "item_ids", "payment_method_id"),
                    ("fallback_payment_method_id",)),
}
"""tool -> (the qualified name of the reference's method, required and optional keyword parameters): a
call that does not bind is answered with Python's TypeError text, which names that method."""

_KEYS = ("order_id", "user_id", "product_id")
"""Arguments the reference first uses as a dict key: a list or an object there is Python's
`unhashable type` error."""


def argument_error(tool: str, arguments: Mapping[str, JSON]) -> str | None:
    """The reference's error for arguments its tool cannot even be called with, or None."""
    qualname, required, optional = SIGNATURES[tool]
    problem = signature_error(qualname, required, optional, arguments)
    if problem is None and "item_ids" in arguments and not arguments["item_ids"]:
        return None  # an empty item list is refused by the tool first, before any lookup
    for name in _KEYS:
        if problem is None and name in arguments:
            problem = unhashable_error(arguments[name])
    return problem


def reference_handlers(config: StoreConfig) -> dict[str, Handler]:
    """The tools a scenario with this configuration offers, by name (the stage decides which exist)."""
    handlers: dict[str, Handler] = {
        "find_user_id_by_name_zip": reads.find_user_id_by_name_zip,
        "get_user_details": reads.get_user_details,
        "get_order_details": reads.get_order_details,
        "get_product_details": reads.get_product_details,
        "cancel_pending_order": partial(cancel_pending_order, config),
        "place_order": place_order,
    }
    if config.modify_offered:
        handlers["modify_pending_order_items"] = partial(modify_pending_order_items, config)
    if config.returns_offered:
        handlers["return_delivered_order_items"] = partial(return_delivered_order_items, config)
    if config.exchanges_offered:
        handlers["exchange_delivered_order_items"] = partial(exchange_delivered_order_items, config)
    return handlers


# ------------------------------------------------------------------------------------------- tools

def cancel_pending_order(config: StoreConfig, state: EpisodeState, args: Mapping[str, JSON]) -> JSON:
    order_id, reason = str(args["order_id"]), str(args["reason"])
    current = state.owned_order(order_id)
    if current["status"] != "pending":
        raise ToolError("non-pending order cannot be cancelled")
    if reason not in config.cancel_reasons:
        raise ToolError("invalid reason")
    owner = str(current["user_id"])
    user = state.user(owner)
    outstanding = net_paid(current)
    total = round(sum(outstanding.values()), 2)
    if config.cancel_max_total is not None:
        cap = config.cancel_max_total[membership_tier(user)]
        if total > cap:
            raise ToolError(f"orders with a total above ${cap:.0f} cannot be cancelled for this account "
                            f"(this order: ${total:.2f})")
    refunds = [(method, amount) for method, amount in outstanding.items() if amount > 0]
    for method, _ in refunds:
        if "gift_card" in method:  # the reference settles gift cards by id here, by record elsewhere
            payment_method(user, method)
    order = state.order_for_write(order_id)
    order["status"] = "cancelled"
    order["cancel_reason"] = reason
    for method, amount in refunds:
        order["payment_history"].append({"transaction_type": "refund", "amount": amount, "payment_method_id": method})
        if "gift_card" in method:
            card = state.user_for_write(owner)["payment_methods"][method]
            card["balance"] = round(card["balance"] + amount, 2)
    return order


def return_delivered_order_items(config: StoreConfig, state: EpisodeState, args: Mapping[str, JSON]) -> JSON:
    item_ids = item_ids_argument(args)
    order_id, reason = str(args["order_id"]), str(args["reason"])
    current = state.owned_order(order_id)
    if current["status"] != "delivered":
        raise ToolError("non-delivered order cannot be returned")
    if reason not in config.return_reasons:
        raise ToolError("invalid or missing return reason")
    owner = str(current["user_id"])
    user = state.user(owner)
    require_in_order(current, item_ids)
    require_eligible(config, state, current, item_ids, "returned")
    method = key_argument(args, "payment_method_id")
    if not destination_allowed(config, user, current, method):
        raise ToolError("refund destination not permitted for this account")
    gross = sum(first_item(current, item_id)["price"] for item_id in item_ids)
    refund = round(gross * (1.0 - config.return_fee[membership_tier(user)]), 2)
    parts = refund_parts(config, user, current, method, refund)
    for payer, _ in parts:
        payment_method(user, payer)
    order = state.order_for_write(order_id)
    order["status"] = "return requested"
    order["return_items"] = sorted(item_ids)
    order["return_reason"] = reason
    order["return_refund_amount"] = refund
    for payer, part in parts:
        settle(state, owner, order, payer, -part)
    return order


def exchange_delivered_order_items(config: StoreConfig, state: EpisodeState, args: Mapping[str, JSON]) -> JSON:
    item_ids = item_ids_argument(args)
    order_id = str(args["order_id"])
    current = state.owned_order(order_id)
    if current["status"] != "delivered":
        raise ToolError("non-delivered order cannot be exchanged")
    owner = str(current["user_id"])
    user = state.user(owner)
    method = key_argument(args, "payment_method_id")
    card = user["payment_methods"].get(method)
    if card is None:
        raise ToolError("payment method not found")
    require_eligible(config, state, current, item_ids, "exchanged")
    new_item_ids = new_item_ids_argument(args)
    difference = swap_difference(state, current, item_ids, new_item_ids)
    if difference > 0:
        if (not config.exchange_any_method and card["source"] != "gift_card"
                and method != original_method(current)):
            raise ToolError("the price difference must be paid via the original payment method or a gift card")
        require_cover(card, difference)
    elif difference < 0 and not destination_allowed(config, user, current, method):
        raise ToolError("refund destination not permitted for this account")
    order = state.order_for_write(order_id)
    if difference != 0:
        settle(state, owner, order, method, difference)
    order["status"] = "exchange requested"
    # Two independently sorted lists, as the reference stores them: no positional pairing.
    order["exchange_items"] = sorted(item_ids)
    order["exchange_new_items"] = sorted(new_item_ids)
    order["exchange_payment_method_id"] = method
    order["exchange_price_difference"] = difference
    return order


def modify_pending_order_items(config: StoreConfig, state: EpisodeState, args: Mapping[str, JSON]) -> JSON:
    item_ids = item_ids_argument(args)
    order_id = str(args["order_id"])
    current = state.owned_order(order_id)
    if current["status"] != "pending":
        raise ToolError("only pending orders can be modified")
    owner = str(current["user_id"])
    method = key_argument(args, "payment_method_id")
    card = state.user(owner)["payment_methods"].get(method)
    if card is None:
        raise ToolError("payment method not found")
    if card["source"] != "gift_card" and method != original_method(current):
        raise ToolError("the price difference must be settled via the original payment method or a gift card")
    new_item_ids = new_item_ids_argument(args)
    difference = swap_difference(state, current, item_ids, new_item_ids)
    require_cover(card, difference)
    order = state.order_for_write(order_id)
    if difference != 0:
        settle(state, owner, order, method, difference)
    swapped: set[int] = set()
    for old, new in zip(item_ids, new_item_ids, strict=True):
        index = next(i for i, item in enumerate(order["items"]) if item["item_id"] == old and i not in swapped)
        order["items"][index] = catalog_line(state.product(str(order["items"][index]["product_id"])), new)
        swapped.add(index)
    if config.record_modifications:
        # sorted, so the same swaps give the same state whatever order the caller listed them in
        history = order.setdefault("modification_history", [])
        pairs = sorted(zip(item_ids, new_item_ids, strict=True))
        history.extend({"item_id": old, "new_item_id": new} for old, new in pairs)
    return order


def place_order(state: EpisodeState, args: Mapping[str, JSON]) -> JSON:
    item_ids = item_ids_argument(args)
    user_id = str(args["user_id"])
    user = state.user(user_id)
    methods: Mapping[str, JSON] = user["payment_methods"]
    method = key_argument(args, "payment_method_id")
    if method not in methods:
        raise ToolError("payment method not found")
    given = args.get("fallback_payment_method_id") is not None
    fallback = key_argument(args, "fallback_payment_method_id") if given else None
    if fallback is not None and fallback not in methods:
        raise ToolError("fallback payment method not found")
    if fallback is not None and "gift_card" in fallback:
        raise ToolError("fallback payment method cannot be a gift card")
    items = [orderable(state, item_id) for item_id in item_ids]
    total = round(sum(item["price"] for item in items), 2)
    payments, balance_after = order_payments(methods[method], method, fallback, total)
    order: dict[str, JSON] = {
        "order_id": state.new_order_id(), "user_id": user_id, "address": dict(user["address"]), "items": items,
        "status": "pending", "placed_at": TODAY,
        "payment_history": [{"transaction_type": "payment", "amount": amount, "payment_method_id": payer}
                            for payer, amount in payments],
    }
    if balance_after is not None:
        state.user_for_write(user_id)["payment_methods"][method]["balance"] = balance_after
    state.add_order(order)
    return order
