"""Banking rules as the tabular learner revises them: the schema's rules over `Unit` features, matched by
the schema's own test, with numeric boundaries drawn from labelled requests (newest first, drift
skipped once enough newer labels agree) and new rules relaxed from the most specific one while they
catch no counter-example.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace

from methods.tabular.banking_units import (
    CATEGORICAL,
    CONDITION,
    FEATURE,
    OVER,
    RELAX_ORDER,
    SCHEMA,
    UNDER,
    Unit,
    less_risky,
)
from methods.tabular.common import cents, roundest_between
from simulators.domains.banking.vocabulary import Verdict, holds, read_rule
from simulators.protocol import JSON

__all__ = ["DRIFT_CONFIRM", "Rule", "adjust_bounds", "best_threshold", "catches", "fresh_negatives", "matches",
           "most_specific_rule", "outdated", "parse_rule", "relax"]



@dataclass(frozen=True)
class Rule:
    slot: str
    kind: str
    order: float
    cats: Mapping[str, frozenset[str]] = field(default_factory=dict)
    over: Mapping[str, int] = field(default_factory=dict)
    under: Mapping[str, int] = field(default_factory=dict)
    rule_id: str = ""
    """The documented rule it revises, "" for a new one."""
    enabled: bool = True
    opaque: bool = False
    """Conditions this adapter cannot evaluate: the rule is left exactly as documented."""

    def without(self, feature: str) -> Rule:
        return replace(self, cats={f: v for f, v in self.cats.items() if f != feature},
                       over={f: v for f, v in self.over.items() if f != feature},
                       under={f: v for f, v in self.under.items() if f != feature})

    def features(self) -> list[str]:
        return [*self.cats, *self.over, *self.under]

    def to_json(self) -> dict[str, JSON]:
        when: dict[str, JSON] = {}
        for feature in (*CATEGORICAL[self.kind], "amount", "total", "tenure", "payee_age"):
            if feature in self.cats:
                when[CONDITION[feature]] = sorted(self.cats[feature])
            elif feature in self.over:
                when[CONDITION[feature]] = self.over[feature] / 100
            elif feature in self.under:
                when[CONDITION[feature]] = self.under[feature] / 100
        verdict = Verdict.from_label(self.slot)
        rule: dict[str, JSON] = {"applies_to": self.kind, "order": self.order, "when": when,
                                 "action": verdict.action, "reason": verdict.reason or ""}
        if not self.enabled:
            rule["enabled"] = False
        return rule


def matches(rule: Rule, unit: Unit) -> bool:
    """The schema's own test (`vocabulary.holds`) on the unit's features; a payee age of -1 is no payee."""
    if not rule.enabled or rule.opaque or rule.kind != unit.kind:
        return False
    for feature, allowed in rule.cats.items():
        actual: JSON = [f for f in unit.flags.split("+") if f] if feature == "flags" else unit.text(feature)
        if not holds(SCHEMA[CONDITION[feature]], actual, allowed):
            return False
    for feature, bound in (*rule.over.items(), *rule.under.items()):
        value = unit.number(feature)
        if not holds(SCHEMA[CONDITION[feature]], None if feature in UNDER[unit.kind] and value < 0 else value,
                     bound):
            return False
    return True


def parse_rule(rule_id: str, raw: JSON) -> Rule | None:
    """A documented rule through the schema's reader (`vocabulary.read_rule`), its conditions split by
    shape; one this adapter cannot evaluate (disabled, unknown or unmodelled condition, malformed
    bound) is opaque: kept exactly as documented."""
    text = read_rule(rule_id, raw)
    if text is None:
        return None
    cats: dict[str, frozenset[str]] = {}
    over: dict[str, int] = {}
    under: dict[str, int] = {}
    opaque = not text.enabled
    for condition, value in text.when.items():
        feature = FEATURE.get(str(condition))
        shape = SCHEMA[CONDITION[feature]].shape if feature is not None else ""
        number = cents(value)
        if shape == "one_of" and isinstance(value, list):
            cats[str(feature)] = frozenset(str(v) for v in value)
        elif shape == "over" and number is not None:
            over[str(feature)] = number
        elif shape == "under" and number is not None:
            under[str(feature)] = number
        else:
            opaque = True
    return Rule(text.verdict.label, text.applies_to, text.order, cats, over, under, rule_id, True, opaque)


DRIFT_CONFIRM = 6
"""Consistent labels needed after the newest contradicted one before a boundary follows the newer labels
across older ones that contradict them (a drift), rather than treating the clash as structure."""


def best_threshold(positives: Sequence[tuple[int, int]], negatives: Sequence[tuple[int, int]],
                   current: int | None) -> int | None:
    """A boundary X for "fires when value > X" from (position, value) labels: positives must fire,
    negatives must not.

    Newest first, each label narrows the gap [largest negative, smallest positive); an older label that
    contradicts the newer ones is skipped (drift). When fewer than DRIFT_CONFIRM labels followed the
    newest contradicted one, the clash is more likely structure (another rule, another condition) than
    drift, and the negatives win: the boundary stays above all of them. The current boundary is kept
    when it lies in the gap, else the roundest number in it."""
    if not positives and not negatives:
        return current
    labels = sorted([(t, 1, v) for t, v in positives] + [(t, 0, v) for t, v in negatives],
                    key=lambda item: (-item[0], -item[1], item[2]))
    low: int | None = None
    high: int | None = None
    newest_skip: int | None = None
    kept_after = 0
    for t, positive, value in labels:
        if positive:
            if low is not None and value <= low:
                newest_skip = t if newest_skip is None else newest_skip
                continue
            high = value if high is None else min(high, value)
        else:
            if high is not None and value >= high:
                newest_skip = t if newest_skip is None else newest_skip
                continue
            low = value if low is None else max(low, value)
        if newest_skip is None:
            kept_after += 1
    if newest_skip is not None and kept_after < DRIFT_CONFIRM:
        low = max((v for _, v in negatives), default=None)
        high = min((v for _, v in positives if low is None or v > low), default=None)
    if current is not None and (low is None or current >= low) and (high is None or current < high):
        return current
    if low is None:
        assert high is not None
        return roundest_between(max(0, high - max(high // 5, 1)), high)
    if high is None:
        return roundest_between(low, low + max(low // 5, 100))
    return roundest_between(low, high)


STRUCTURE_MIN = 3
"""Counter-examples needed before a positive is read as structure (another rule) rather than drift."""


def _structural(rule: Rule, feature: str, positive: Unit, negatives: Sequence[Unit]) -> bool:
    """A positive below several negatives on `feature`, and below all of them on a tenure or payee-age
    scale the rule does not test, belongs to another rule (a new-account cap, say), not to this boundary."""
    if feature not in rule.over:
        return False
    clashing = [n for n in negatives if n.number(feature) >= positive.number(feature)]
    if len(clashing) < STRUCTURE_MIN:
        return False
    for scale in UNDER[rule.kind]:
        if scale in rule.under or positive.number(scale) < 0:
            continue
        if all(positive.number(scale) < n.number(scale) for n in clashing):
            return True
    return False


def _threshold(rule: Rule, feature: str, positives: Sequence[Unit], negatives: Sequence[Unit],
               keep: bool = True) -> Rule:
    """Move one boundary of the rule to where the labels in its scope put it; `keep` prefers the current
    boundary (a documented one) while it still separates them."""
    rest = rule.without(feature)
    in_scope = [u for u in negatives if matches(rest, u)]
    pos = [(u.t, u.number(feature)) for u in positives
           if matches(rest, u) and not _structural(rule, feature, u, in_scope)]
    neg = [(u.t, u.number(feature)) for u in in_scope]
    if feature in UNDER[rule.kind]:
        current = rule.under.get(feature) if keep else None
        # "value < T" is "-value > -T": reuse the "over" search on negated values.
        found = best_threshold([(t, -v) for t, v in pos if v >= 0], [(t, -v) for t, v in neg if v >= 0],
                               -current if current is not None else None)
        if found is None:
            return rule
        return replace(rule, under={**rule.under, feature: -found})
    found = best_threshold(pos, neg, rule.over.get(feature) if keep else None)
    if found is None:
        return rule
    return replace(rule, over={**rule.over, feature: found})


def adjust_bounds(rule: Rule, positives: Sequence[Unit], negatives: Sequence[Unit]) -> Rule:
    for _ in range(2):
        for feature in sorted([*rule.over, *rule.under]):
            rule = _threshold(rule, feature, positives, negatives)
    return rule


def most_specific_rule(seed: Unit, slot: str, order: float) -> Rule:
    kind = seed.kind
    cats = {f: frozenset({seed.text(f)}) for f in CATEGORICAL[kind] if f != "flags" and seed.text(f)}
    if "flags" in CATEGORICAL[kind] and seed.flags:
        cats["flags"] = frozenset(seed.flags.split("+"))
    over = {f: seed.number(f) - 1 for f in OVER[kind]}
    under = {f: seed.number(f) + 1 for f in UNDER[kind] if seed.number(f) >= 0}
    return Rule(slot, kind, order, cats, over, under)


def fresh_negatives(positives: Sequence[Unit], negatives: Sequence[Unit]) -> list[Unit]:
    """Negatives no newer positive contradicts outright (same categorical features, no riskier on any
    scale): an approval from before a rule came into force is not a counter-example to it."""
    return [n for n in negatives
            if not any(p.t > n.t and p.signature() == n.signature() and less_risky(p, n) for p in positives)]


def catches(rule: Rule, negatives: Sequence[Unit]) -> bool:
    return any(matches(rule, n) for n in negatives)


def outdated(rule: Rule, seed: Unit, negatives: Sequence[Unit]) -> bool:
    """A newer negative within the rule's categorical scope, no less risky than the seed on the rule's
    scales, says the seed's decision no longer holds (the rule it stood for was lifted)."""
    scope = replace(rule, over={}, under={})
    return any(n.t > seed.t and matches(scope, n)
               and all(n.number(f) >= seed.number(f) for f in rule.over)
               and all(0 <= n.number(f) <= seed.number(f) for f in rule.under) for n in negatives)


def relax(rule: Rule, positives: Sequence[Unit], negatives: Sequence[Unit], keep: bool = False) -> Rule:
    """Drop or loosen the conditions of a most specific rule while it catches no negative; `keep` keeps
    every categorical condition (a rule built on a guess stays within the guessed request's cell)."""
    for feature in RELAX_ORDER:
        if feature not in rule.features():
            continue
        trial = rule.without(feature)
        # The amount is what every rule weighs: with no counter-example below it, its boundary still
        # sits just under the smallest positive (where a policy would round it), not at zero.
        droppable = feature != "amount" and not (keep and feature in rule.cats)
        if droppable and not catches(trial, negatives):
            rule = trial
        elif feature in rule.over or feature in rule.under:
            rule = _threshold(rule, feature, positives, negatives, keep=False)
    return rule


