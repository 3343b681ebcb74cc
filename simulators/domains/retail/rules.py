"""The policy model: categorical deny-rules, read from a policy block, applied to a request's facts.

A rule refuses one operation when one attribute of the request takes one of the listed values. The
policy is the set of rules keyed by id; a rule that is absent or has an empty `deny` list refuses
nothing. Reading is lenient on purpose: a learning method may write a damaged or partial block, and a
malformed rule is skipped rather than fatal (see `parse_policy`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from simulators.domains.retail.vocab import ATTRIBUTES, DEFAULT_CODE, OPS
from simulators.protocol import JSON

__all__ = ["Facts", "Rule", "blocking_reasons", "make_rule", "parse_policy", "policy_json"]

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
