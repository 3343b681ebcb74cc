"""The retail vocabulary and policy-block rule schema: the one place that names them.

The world, the policy model, the generator, the scripted agent and learning methods
(`methods/tabular/retail`) all speak these names, so a value spelled one way in a rule is spelled the
same way in the facts it is matched against, and no reader restates them:

- operations and the tools that carry them out, the attributes a rule can test (in precedence order)
  and their values, the refusal codes, which of them only the world decides;
- the rule schema (`Rule`, `parse_policy`, `blocking_reasons`): a policy block (the fenced
  `shiftbench-policy` JSON object; see the package docstring) read leniently, one rule at a time;
- a condition a rule can refuse on, `(op, attribute, value)`, as a small type (`Condition`) with its one
  text form `op|attribute|value`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from simulators.protocol import JSON

__all__ = [
    "ATTRIBUTES",
    "CANCEL_REASONS",
    "CATEGORIES",
    "Condition",
    "DEFAULT_CODE",
    "Facts",
    "ITEM_CLASSES",
    "ITEM_LEVEL",
    "METHOD_KINDS",
    "OFFICIAL_MECHANICS",
    "OPS",
    "OP_ATTRIBUTES",
    "OP_TOOL",
    "ORDER_LEVEL",
    "PAYMENT_KINDS",
    "POLICY_CODES",
    "REFUND_TARGETS",
    "REFUSAL_CODES",
    "RETURN_REASONS",
    "Rule",
    "STATES",
    "STATUSES",
    "TIERS",
    "TODAY",
    "TOOL_OP",
    "WHOLE_ORDER_OPS",
    "WORLD_CODES",
    "blocking_reasons",
    "make_rule",
    "parse_policy",
    "policy_json",
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

POLICY_CODES: tuple[str, ...] = (
    "service_not_offered", "invalid_status", "destination_not_allowed", "final_sale", "over_threshold",
    "window_expired",
)
"""Codes a policy rule cites, in the order a learner tries them when none is confirmed."""
WORLD_CODES: tuple[str, ...] = ("insufficient_balance", "not_found")
"""Codes only the world itself decides (a short gift card, an item not in the order), never a rule."""
WHOLE_ORDER_OPS: tuple[str, ...] = ("cancel", "modify_address", "modify_payment")
"""Operations on the whole order: their item attributes cover every item of the order."""


Facts = Mapping[str, frozenset[str]]
"""attribute -> the values it takes for one request (several for item attributes of several items)."""


@dataclass(frozen=True)
class Rule:
    rule_id: str
    op: str
    attribute: str
    deny: tuple[str, ...]
    reason: str

    @property
    def denied(self) -> frozenset[str]:
        return frozenset(value.lower() for value in self.deny)

    def refuses(self, values: Iterable[str]) -> bool:
        denied = self.denied
        return any(value.lower() in denied for value in values)

    def to_json(self) -> dict[str, JSON]:
        return {"op": self.op, "attribute": self.attribute, "deny": list(self.deny), "reason": self.reason}


def make_rule(op: str, attribute: str, deny: Iterable[str], reason: str | None = None) -> Rule:
    """A rule with the conventional id `<op>.<attribute>`."""
    return Rule(f"{op}.{attribute}", op, attribute, tuple(deny), reason or DEFAULT_CODE[attribute])


def parse_policy(policy: Mapping[str, JSON]) -> tuple[Rule, ...]:
    """The well-formed rules of a merged policy block, in precedence order."""
    rules = [rule for rule_id, raw in policy.items() if (rule := _parse_rule(str(rule_id), raw)) is not None]
    return tuple(sorted(rules, key=_precedence))


def _parse_rule(rule_id: str, raw: JSON) -> Rule | None:
    if not isinstance(raw, dict):
        return None
    op, _, attribute = rule_id.partition(".")
    op = str(raw.get("op", op))
    attribute = str(raw.get("attribute", attribute))
    deny = raw.get("deny", [])
    if op not in OPS or not attribute or not isinstance(deny, list):
        return None
    reason = raw.get("reason")
    if not isinstance(reason, str) or not reason:
        reason = DEFAULT_CODE.get(attribute, "service_not_offered")
    return Rule(rule_id, op, attribute, tuple(str(value) for value in deny), reason)


def _precedence(rule: Rule) -> tuple[int, str]:
    known = ATTRIBUTES.index(rule.attribute) if rule.attribute in ATTRIBUTES else len(ATTRIBUTES)
    return known, rule.rule_id


def blocking_reasons(op: str, facts: Facts, rules: Iterable[Rule]) -> list[str]:
    """Codes of the rules that refuse `op` on these facts, first cause first, without repeats."""
    reasons: list[str] = []
    for rule in rules:
        if rule.op == op and rule.refuses(facts.get(rule.attribute, frozenset())) and rule.reason not in reasons:
            reasons.append(rule.reason)
    return reasons


def policy_json(rules: Mapping[str, Rule]) -> dict[str, JSON]:
    """A policy as the flat JSON object a policy block holds."""
    return {rule_id: rule.to_json() for rule_id, rule in sorted(rules.items())}


@dataclass(frozen=True, order=True)
class Condition:
    """One condition a rule can refuse on: operation `op` when `attribute` takes `value` (lower-cased)."""

    op: str
    attribute: str
    value: str

    @classmethod
    def of(cls, op: str, attribute: str, value: str) -> Condition:
        return cls(op, attribute, value.lower())

    @property
    def key(self) -> str:
        """The one text form, `op|attribute|value` (a JSON object key in a method's saved state)."""
        return f"{self.op}|{self.attribute}|{self.value}"

    @classmethod
    def from_key(cls, key: str) -> Condition:
        op, attribute, value = key.split("|", 2)
        return cls(op, attribute, value)
