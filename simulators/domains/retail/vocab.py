"""The retail domain's fixed vocabulary: operations, rule attributes, their values, refusal codes.

Everything that the world, the policy model, the generator and the planner must agree on lives here,
so that a value spelled one way in a rule is spelled the same way in the facts it is matched against.
"""

from __future__ import annotations

__all__ = [
    "ATTRIBUTES",
    "CANCEL_REASONS",
    "CATEGORIES",
    "DEFAULT_CODE",
    "ITEM_CLASSES",
    "ITEM_LEVEL",
    "METHOD_KINDS",
    "OFFICIAL_MECHANICS",
    "OPS",
    "OP_ATTRIBUTES",
    "OP_TOOL",
    "ORDER_LEVEL",
    "PAYMENT_KINDS",
    "REFUND_TARGETS",
    "REFUSAL_CODES",
    "RETURN_REASONS",
    "STATES",
    "STATUSES",
    "TIERS",
    "TODAY",
    "TOOL_OP",
]

TODAY = "2026-07-15"
"""The store's calendar date: dates in generated records are relative to it."""

OPS: tuple[str, ...] = ("cancel", "return", "exchange", "modify_items", "modify_address", "modify_payment")

OP_TOOL: dict[str, str] = {
    "cancel": "cancel_pending_order",
    "return": "return_delivered_order_items",
    "exchange": "exchange_delivered_order_items",
    "modify_items": "modify_pending_order_items",
    "modify_address": "modify_pending_order_address",
    "modify_payment": "modify_pending_order_payment",
}
TOOL_OP: dict[str, str] = {tool: op for op, tool in OP_TOOL.items()}

ATTRIBUTES: tuple[str, ...] = (
    "status", "payment", "membership", "reason", "category", "item_class",
    "ship_state", "new_state", "refund_to", "pay_with",
)
"""Every attribute a rule can test, in precedence order: when several rules refuse one request, the
first one in this order is the reason an agent cites (any of them is accepted by the grader)."""

ORDER_LEVEL: tuple[str, ...] = ("status", "payment", "membership", "ship_state")
ITEM_LEVEL: tuple[str, ...] = ("category", "item_class")

OP_ATTRIBUTES: dict[str, tuple[str, ...]] = {
    "cancel": (*ORDER_LEVEL, *ITEM_LEVEL, "reason"),
    "return": (*ORDER_LEVEL, *ITEM_LEVEL, "reason", "refund_to"),
    "exchange": (*ORDER_LEVEL, *ITEM_LEVEL, "pay_with"),
    "modify_items": (*ORDER_LEVEL, *ITEM_LEVEL, "pay_with"),
    "modify_address": (*ORDER_LEVEL, *ITEM_LEVEL, "new_state"),
    "modify_payment": (*ORDER_LEVEL, *ITEM_LEVEL, "pay_with"),
}
"""The attributes that describe a request of each operation (the facts a rule can look at)."""

STATUSES: tuple[str, ...] = (
    "pending", "processed", "on hold", "delivered", "cancelled", "return requested", "exchange requested",
)
PAYMENT_KINDS: tuple[str, ...] = ("credit_card", "paypal", "gift_card", "split")
"""How an order was paid: one method of a kind, or `split` over several methods."""
METHOD_KINDS: tuple[str, ...] = ("credit_card", "paypal", "gift_card")
TIERS: tuple[str, ...] = ("bronze", "silver", "gold")
CATEGORIES: tuple[str, ...] = ("apparel", "electronics", "home", "beauty", "outdoor")
ITEM_CLASSES: tuple[str, ...] = ("regular", "clearance")
STATES: tuple[str, ...] = (
    "AZ", "CA", "CO", "FL", "GA", "IL", "MA", "MN", "NC", "NY", "OH", "OR", "PA", "TX", "WA", "AK", "HI",
)
REFUND_TARGETS: tuple[str, ...] = ("gift_card", "original_method", "other_method")
"""Where a return refund goes, relative to the order: any gift card on the account, the method that
paid the order first, or another card or PayPal account on file."""

CANCEL_REASONS: tuple[str, ...] = ("no longer needed", "ordered by mistake")
RETURN_REASONS: tuple[str, ...] = ("defective", "no longer needed", "wrong item")

REFUSAL_CODES: tuple[str, ...] = (
    "service_not_offered", "invalid_status", "destination_not_allowed", "insufficient_balance",
    "over_threshold", "window_expired", "final_sale", "not_found",
)

DEFAULT_CODE: dict[str, str] = {
    "status": "invalid_status",
    "payment": "service_not_offered",
    "membership": "service_not_offered",
    "reason": "service_not_offered",
    "category": "service_not_offered",
    "item_class": "final_sale",
    "ship_state": "destination_not_allowed",
    "new_state": "destination_not_allowed",
    "refund_to": "destination_not_allowed",
    "pay_with": "destination_not_allowed",
}
"""The code a rule cites when it names none."""

OFFICIAL_MECHANICS: dict[str, tuple[str, ...]] = {
    "cancel": ("pending",),
    "modify": ("pending",),
    "return": ("delivered",),
    "exchange": ("delivered",),
}
"""Order statuses each write tool accepts when world.json declares no `_mechanics` (the public
export's tools accept exactly these)."""
