"""The banking policy model: rules, the facts a rule reads, and the first-match verdict.

A policy is the flat JSON object of a policy block (rule id -> rule; schema in the package
docstring). Parsing is tolerant on purpose: blocks written by learning methods may be partial or
malformed, and a rule that cannot be read is skipped rather than failing the episode.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field

from simulators.protocol import JSON

__all__ = [
    "ACTIONS",
    "APPLIES_TO",
    "CONDITIONS",
    "REASON_CODES",
    "REFERENCE_REASON_CODES",
    "Request",
    "Rule",
    "Verdict",
    "APPROVE",
    "effective_rule",
    "first_verdict",
    "parse_rules",
]

APPLIES_TO: tuple[str, ...] = ("card_transaction", "limit_increase", "outbound_transfer")
ACTIONS: tuple[str, ...] = ("deny", "escalate")
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


@dataclass(frozen=True)
class Verdict:
    action: str
    """`approve`, `deny` or `escalate`."""
    reason: str | None = None


APPROVE = Verdict("approve")


@dataclass(frozen=True)
class Request:
    """One decidable request: a single case, one ranked alternative, or one batch line."""

    applies_to: str
    amount: float
    account: Mapping[str, JSON] = field(default_factory=dict)
    merchant: Mapping[str, JSON] = field(default_factory=dict)
    payee: Mapping[str, JSON] = field(default_factory=dict)
    payee_id: str | None = None
    today_total: float = 0.0
    payee_added_days_ago: float | None = None


@dataclass(frozen=True)
class Rule:
    rule_id: str
    applies_to: str
    order: float
    when: Mapping[str, JSON]
    verdict: Verdict


def _as_number(value: JSON) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value)


def _in_list(value: JSON, options: JSON) -> bool:
    return isinstance(options, list) and value in options


def _over(actual: float | None, limit: JSON) -> bool:
    bound = _as_number(limit)
    return actual is not None and bound is not None and actual > bound


def _under(actual: JSON, limit: JSON) -> bool:
    value, bound = _as_number(actual), _as_number(limit)
    return value is not None and bound is not None and value < bound


def _flagged(request: Request, flags: JSON) -> bool:
    held = request.payee.get("restrictions")
    return isinstance(flags, list) and isinstance(held, list) and any(f in flags for f in held)


CONDITIONS: dict[str, Callable[[Request, JSON], bool]] = {
    "category_in": lambda r, v: _in_list(r.merchant.get("category"), v),
    "region_in": lambda r, v: _in_list(r.merchant.get("region"), v),
    "verification_in": lambda r, v: _in_list(r.account.get("verification"), v),
    "standing_in": lambda r, v: _in_list(r.account.get("standing"), v),
    "tenure_years_under": lambda r, v: _under(r.account.get("tenure_years"), v),
    "payee_added_days_under": lambda r, v: _under(r.payee_added_days_ago, v),
    "payee_flag_in": _flagged,
    "payee_id_in": lambda r, v: _in_list(r.payee_id, v),
    "amount_over": lambda r, v: _over(r.amount, v),
    "today_total_plus_amount_over": lambda r, v: _over(r.today_total + r.amount, v),
}
"""Condition name -> test. A rule whose `when` names anything else is skipped: an agent should not
act on a condition it cannot evaluate."""


def _parse_rule(rule_id: str, raw: JSON) -> Rule | None:
    if not isinstance(raw, dict) or raw.get("enabled", True) is False:
        return None
    when = raw.get("when", {})
    order = _as_number(raw.get("order", 100))
    action, reason = raw.get("action"), raw.get("reason")
    if (raw.get("applies_to") not in APPLIES_TO or not isinstance(when, dict) or order is None
            or action not in ACTIONS or not isinstance(reason, str)):
        return None
    if any(name not in CONDITIONS for name in when):
        return None
    return Rule(rule_id, str(raw["applies_to"]), order, when, Verdict(str(action), reason))


def parse_rules(policy: Mapping[str, JSON]) -> tuple[Rule, ...]:
    """The enabled, well-formed rules of a policy, in checking order (order, then rule id)."""
    rules = (_parse_rule(str(rule_id), raw) for rule_id, raw in policy.items())
    return tuple(sorted((r for r in rules if r is not None), key=lambda r: (r.order, r.rule_id)))


def first_verdict(rules: Iterable[Rule], request: Request) -> Verdict:
    """The first matching rule decides; a request no rule catches is approved."""
    for rule in rules:
        if rule.applies_to != request.applies_to:
            continue
        if all(CONDITIONS[name](request, value) for name, value in rule.when.items()):
            return rule.verdict
    return APPROVE


def effective_rule(policy: Mapping[str, JSON], rule_id: str) -> JSON:
    """A rule as it acts: None when absent or disabled, else the rule without its `enabled` flag.
    Two policies treat a rule alike exactly when this is equal for both."""
    raw = policy.get(rule_id)
    if not isinstance(raw, dict) or raw.get("enabled", True) is False:
        return None
    return {k: v for k, v in raw.items() if k != "enabled"}
