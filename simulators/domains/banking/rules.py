"""The banking policy model: the facts a rule reads from a request, and the first-match verdict.

A policy is the flat JSON object of a policy block (rule id -> rule). Its vocabulary and schema (kinds,
actions, reason codes, conditions and how each holds, the `Verdict` type) live in `vocabulary`; this
module applies them to requests. Parsing is tolerant on purpose: blocks written by learning methods may
be partial or malformed, and a rule that cannot be read is skipped rather than failing the episode.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field

from simulators.domains.banking.vocabulary import (
    ACTIONS,
    APPLIES_TO,
    APPROVE,
    REASON_CODES,
    REFERENCE_REASON_CODES,
    Verdict,
    holds,
    read_rule,
)
from simulators.domains.banking.vocabulary import (
    CONDITIONS as SCHEMA,
)
from simulators.protocol import JSON

__all__ = [
    "ACTIONS",
    "APPLIES_TO",
    "APPROVE",
    "CONDITIONS",
    "REASON_CODES",
    "REFERENCE_REASON_CODES",
    "Request",
    "Rule",
    "Verdict",
    "effective_rule",
    "first_verdict",
    "parse_rules",
]


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


def _flags(request: Request) -> JSON:
    held = request.payee.get("restrictions")
    return held if isinstance(held, list) else None


_FEATURE_OF: dict[str, Callable[[Request], JSON]] = {
    "category": lambda r: r.merchant.get("category"),
    "region": lambda r: r.merchant.get("region"),
    "verification": lambda r: r.account.get("verification"),
    "standing": lambda r: r.account.get("standing"),
    "flags": _flags,
    "payee_id": lambda r: r.payee_id,
    "amount": lambda r: r.amount,
    "total": lambda r: r.today_total + r.amount,
    "tenure": lambda r: r.account.get("tenure_years"),
    "payee_age": lambda r: r.payee_added_days_ago,
}
"""Each feature of the vocabulary, read off a request."""


def _test(name: str) -> Callable[[Request, JSON], bool]:
    condition = SCHEMA[name]
    read = _FEATURE_OF[condition.feature]
    return lambda request, bound: holds(condition, read(request), bound)


CONDITIONS: dict[str, Callable[[Request, JSON], bool]] = {name: _test(name) for name in SCHEMA}
"""Condition name -> test. A rule whose `when` names anything else is skipped: an agent should not
act on a condition it cannot evaluate."""


def _parse_rule(rule_id: str, raw: JSON) -> Rule | None:
    text = read_rule(rule_id, raw)
    if text is None or not text.enabled or text.unknown_conditions:
        return None
    return Rule(rule_id, text.applies_to, text.order, text.when, text.verdict)


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
