"""The banking vocabulary and policy-block rule schema: the one place that names them.

The rule engine (`rules`), the documents, the world and learning methods (`methods/tabular/banking`)
all speak these names, so none restates them:

- request kinds by case-id prefix, the actions and reason codes (the built-in suite's nine and each
  export tier's seven);
- what a request of each kind carries (its features), and every condition a rule's `when` may name:
  which feature it reads and its shape (`one_of` a listed value, `over` or `under` a bound), with
  `holds` deciding it, so every reader matches a rule the same way;
- a decision as a small type (`Verdict`) with its one text form, `approve` or `deny:<reason>`;
- `read_rule`: a policy-block rule checked against the schema (its parts, whether it is enabled,
  which conditions it names that the schema does not know).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal

from simulators.protocol import JSON

__all__ = [
    "ACTIONS",
    "APPLIES_TO",
    "APPROVE",
    "CONDITIONS",
    "FEATURES",
    "KIND_BY_PREFIX",
    "REASON_CODES",
    "REFERENCE_REASON_CODES",
    "Condition",
    "RuleText",
    "Verdict",
    "as_number",
    "holds",
    "read_rule",
]

KIND_BY_PREFIX: dict[str, str] = {"TXN": "card_transaction", "LIM": "limit_increase", "TRF": "outbound_transfer"}
"""Case id prefix -> the kind of request (which rules apply)."""
APPLIES_TO: tuple[str, ...] = tuple(KIND_BY_PREFIX.values())
ACTIONS: tuple[str, ...] = ("deny", "escalate")
"""What a rule may do; a request no rule catches is approved."""

REASON_CODES: tuple[str, ...] = (
    "corridor_blocked",
    "verification_required",
    "over_limit",
    "daily_cap",
    "account_standing",
    "cap_exceeded",
    "restricted_payee",
    "new_payee_review",
    "reportable_amount",
)
"""Every code a deny or escalate may cite in the built-in suite. The public export's codes are all
here, so its gold actions replay unchanged."""

REFERENCE_REASON_CODES: dict[str, tuple[str, ...]] = {
    "L1": ("corridor_blocked", "verification_required", "over_limit", "account_standing", "cap_exceeded",
           "restricted_payee", "reportable_amount"),
    "L2": ("corridor_blocked", "over_limit", "account_standing", "cap_exceeded", "reportable_amount",
           "daily_cap", "new_payee_review"),
    "L3": ("corridor_blocked", "over_limit", "daily_cap", "account_standing", "cap_exceeded",
           "new_payee_review", "reportable_amount"),
}
"""The codes each tier of the public export accepts (reference `servelearnbench/domains/banking/
l1|l2|l3/rules.py`, `REASONS`): seven per tier, and a code outside the tier's list is refused."""

Shape = Literal["one_of", "over", "under"]


@dataclass(frozen=True)
class Condition:
    name: str
    """The key in a rule's `when`."""
    feature: str
    """What of the request it reads (one of `FEATURES`)."""
    shape: Shape


CONDITIONS: dict[str, Condition] = {c.name: c for c in (
    Condition("category_in", "category", "one_of"),            # merchant category (card transactions)
    Condition("region_in", "region", "one_of"),                # merchant region: domestic | overseas
    Condition("verification_in", "verification", "one_of"),    # account verification: basic | verified
    Condition("standing_in", "standing", "one_of"),            # account standing: good | recent_chargeback
    Condition("payee_flag_in", "flags", "one_of"),             # any of the payee's restriction flags
    Condition("payee_id_in", "payee_id", "one_of"),
    Condition("amount_over", "amount", "over"),                # charge, requested limit or transfer amount
    Condition("today_total_plus_amount_over", "total", "over"),  # account today_total + amount
    Condition("tenure_years_under", "tenure", "under"),        # account tenure_years
    Condition("payee_added_days_under", "payee_age", "under"),  # days since the payee was added
)}

FEATURES: dict[str, tuple[str, ...]] = {
    "card_transaction": ("category", "region", "verification", "standing", "amount", "total", "tenure"),
    "limit_increase": ("verification", "standing", "amount", "tenure"),
    "outbound_transfer": ("verification", "standing", "flags", "payee_id", "amount", "tenure", "payee_age"),
}
"""What a request of each kind carries, so what its rules can test."""


def as_number(value: JSON) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value)


def holds(condition: Condition, actual: JSON, bound: JSON) -> bool:
    """Whether a request's value meets a condition's bound. `one_of`: the value is listed (a set of
    flags: any of them is); `over` / `under`: a number strictly past the bound. A value the request
    does not have (None) or a malformed bound never holds."""
    if condition.shape == "one_of":
        if not isinstance(bound, list | tuple | set | frozenset):
            return False
        if isinstance(actual, list | tuple | frozenset | set):
            return any(item in bound for item in actual)
        return actual in bound
    value, limit = as_number(actual), as_number(bound)
    if value is None or limit is None:
        return False
    return value > limit if condition.shape == "over" else value < limit


@dataclass(frozen=True)
class Verdict:
    """A decision: `approve`, or deny / escalate with a reason code."""

    action: str
    reason: str | None = None

    @property
    def label(self) -> str:
        """The one text form: `approve`, `deny:<reason>`, `escalate:<reason>`."""
        return self.action if self.reason is None else f"{self.action}:{self.reason}"

    @property
    def key(self) -> str:
        """The reference's `verdict_key` form, reason always written (`approve:None`)."""
        return f"{self.action}:{self.reason}"

    @classmethod
    def from_label(cls, text: str) -> Verdict:
        action, _, reason = text.partition(":")
        return cls(action, reason or None)


APPROVE = Verdict("approve")


@dataclass(frozen=True)
class RuleText:
    """A policy-block rule as written, checked against the schema."""

    rule_id: str
    applies_to: str
    order: float
    when: Mapping[str, JSON]
    verdict: Verdict
    enabled: bool
    unknown_conditions: tuple[str, ...]
    """Conditions of `when` the schema does not name: no reader can evaluate them."""


def read_rule(rule_id: str, raw: JSON) -> RuleText | None:
    """The rule, or None when it is not one (wrong kind, action, reason, order or `when` shape)."""
    if not isinstance(raw, dict):
        return None
    when, order = raw.get("when", {}), as_number(raw.get("order", 100))
    action, reason = raw.get("action"), raw.get("reason")
    if (raw.get("applies_to") not in APPLIES_TO or not isinstance(when, dict) or order is None
            or action not in ACTIONS or not isinstance(reason, str)):
        return None
    unknown = tuple(str(name) for name in when if name not in CONDITIONS)
    return RuleText(rule_id, str(raw["applies_to"]), order, when, Verdict(str(action), reason),
                    raw.get("enabled", True) is not False, unknown)
