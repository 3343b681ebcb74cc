"""The documented policy and each tier's hidden policy, window by window.

The documents are stale in both directions: they forbid things the store now allows (clearance
returns, gift-card payment switches, shipping to Alaska and Hawaii ...) and are silent on restrictions
it now applies (gift-card-paid cancellations, electronics exchanges, Florida exchanges ...).

- L1, acquisition: every window moves the store into a state not seen before; some windows bring
  attribute values never seen in any earlier task (beauty, then outdoor products; orders on hold).
- L2, revision: rules change scope (gift -> split payments, Florida -> Texas, electronics -> home),
  widen, narrow, relax beyond the documents, and change the code they cite.
- L3, non-monotonic: L2's moves plus reversals to the documented rule, removals, and re-entry of a
  state an earlier window had.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from simulators.domains.retail.vocabulary import Rule, make_rule

__all__ = ["DOCUMENTED", "TierPlan", "active_policy", "plan_for"]

_NOT_PENDING = ("processed", "delivered", "cancelled", "return requested", "exchange requested")
_NOT_DELIVERED = ("pending", "processed", "cancelled", "return requested", "exchange requested")

DOCUMENTED: dict[str, Rule] = {rule.rule_id: rule for rule in (
    make_rule("cancel", "status", _NOT_PENDING),
    make_rule("modify_items", "status", _NOT_PENDING),
    make_rule("modify_address", "status", _NOT_PENDING),
    make_rule("modify_payment", "status", _NOT_PENDING),
    make_rule("return", "status", _NOT_DELIVERED),
    make_rule("exchange", "status", _NOT_DELIVERED),
    make_rule("return", "item_class", ["clearance"]),
    make_rule("exchange", "item_class", ["clearance"]),
    make_rule("return", "refund_to", ["other_method"]),
    make_rule("modify_address", "new_state", ["AK", "HI"]),
    make_rule("modify_payment", "pay_with", ["gift_card"]),
)}

Change = Mapping[str, Rule | None]
"""rule id -> its new form, or None to return to the documented rule (or to no rule)."""

_SNO, _INV, _DNA = "service_not_offered", "invalid_status", "destination_not_allowed"


@dataclass(frozen=True)
class TierPlan:
    tier: str
    changes: tuple[Change, ...]
    """One entry per window, applied on top of the previous window's policy."""
    introduced: Mapping[tuple[str, str], int]
    """(attribute, value) -> first window whose tasks may show it; absent values show from window 0."""


def _r(op: str, attribute: str, deny: list[str], reason: str | None = None) -> tuple[str, Rule]:
    rule = make_rule(op, attribute, deny, reason)
    return rule.rule_id, rule


def _back(rule_id: str) -> tuple[str, None]:
    return rule_id, None


_L1 = TierPlan("L1", (
    dict([_r("cancel", "payment", ["gift_card"], _SNO), _r("return", "item_class", [])]),
    dict([_r("exchange", "category", ["electronics"], _SNO), _r("modify_items", "payment", ["split"], _INV)]),
    dict([_r("return", "category", ["beauty"], _SNO), _r("modify_payment", "pay_with", [])]),
    dict([_r("cancel", "status", [*_NOT_PENDING, "on hold"]), _r("exchange", "ship_state", ["FL"])]),
    dict([_r("exchange", "category", ["electronics", "outdoor"], _SNO),
          _r("return", "refund_to", ["original_method", "other_method"])]),
    dict([_r("cancel", "payment", ["gift_card", "paypal"], _SNO), _r("modify_address", "new_state", [])]),
), {("category", "beauty"): 2, ("status", "on hold"): 3, ("category", "outdoor"): 4})

_L2 = TierPlan("L2", (
    dict([_r("cancel", "payment", ["gift_card"], _SNO), _r("exchange", "category", ["electronics"], _SNO),
          _r("return", "item_class", [])]),
    dict([_r("return", "refund_to", ["original_method", "other_method"]), _r("exchange", "ship_state", ["FL"])]),
    dict([_r("cancel", "payment", ["split"], _SNO), _r("modify_items", "payment", ["split"], _INV)]),
    dict([_r("exchange", "category", ["electronics", "home"], _SNO), _r("modify_payment", "pay_with", [])]),
    dict([_r("exchange", "ship_state", ["TX"]), _r("return", "refund_to", [])]),
    dict([_r("exchange", "category", ["home"], _SNO), _r("return", "membership", ["bronze"], _SNO)]),
    dict([_r("cancel", "payment", ["gift_card", "split"], _SNO), _r("exchange", "ship_state", ["TX"], _SNO)]),
), {})

_L3 = TierPlan("L3", (
    dict([_r("cancel", "payment", ["gift_card"], _SNO), _r("exchange", "category", ["electronics"], _SNO),
          _r("return", "item_class", [])]),
    dict([_r("return", "refund_to", ["original_method", "other_method"]), _r("exchange", "ship_state", ["FL"])]),
    dict([_r("cancel", "payment", ["split"], _SNO), _back("exchange.category"),
          _r("modify_items", "payment", ["split"], _INV)]),
    dict([_back("return.item_class"), _r("exchange", "ship_state", ["TX"])]),
    dict([_r("cancel", "payment", ["gift_card"], _SNO), _r("exchange", "category", ["electronics"], _SNO),
          _back("modify_items.payment")]),
    dict([_back("return.refund_to"), _r("return", "item_class", []), _r("exchange", "ship_state", ["FL"])]),
    dict([_back("cancel.payment"), _r("exchange", "category", ["electronics", "home"], _SNO),
          _r("modify_payment", "pay_with", [])]),
    dict([_r("return", "refund_to", ["original_method", "other_method"]), _back("exchange.ship_state"),
          _r("cancel", "payment", ["split"], _SNO)]),
), {})

_PLANS = {"retail_l1": _L1, "retail_l2": _L2, "retail_l3": _L3}


def plan_for(scenario: str) -> TierPlan:
    try:
        return _PLANS[scenario]
    except KeyError:
        raise ValueError(f"unknown retail scenario '{scenario}'; known: {sorted(_PLANS)}") from None


def active_policy(plan: TierPlan, window: int) -> dict[str, Rule]:
    """The complete policy in force during a window: the documents overlaid with every change so far."""
    policy = dict(DOCUMENTED)
    for change in plan.changes[:window + 1]:
        for rule_id, rule in change.items():
            if rule is not None:
                policy[rule_id] = rule
            elif rule_id in DOCUMENTED:
                policy[rule_id] = DOCUMENTED[rule_id]
            else:
                policy.pop(rule_id, None)
    return policy
