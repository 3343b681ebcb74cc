"""Task profiles: the attribute values one generated task is built around.

A recipe fixes the values of the attributes a task is meant to probe (its targets); every other
attribute is drawn from the values that neither the documented nor the active policy refuses, so
that only the targets can decide the outcome. Values a tier has not introduced yet never appear.
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from dataclasses import dataclass, field

from simulators.domains.retail.vocabulary import (
    CANCEL_REASONS,
    CATEGORIES,
    ITEM_CLASSES,
    ITEM_LEVEL,
    METHOD_KINDS,
    ORDER_LEVEL,
    PAYMENT_KINDS,
    REFUND_TARGETS,
    RETURN_REASONS,
    STATES,
    TIERS,
    Rule,
)

__all__ = ["GENERATED_MECHANICS", "Infeasible", "LegProfile", "Profile", "Recipe", "SamplingContext",
           "mechanics_kind", "sample_profile"]

GENERATED_MECHANICS: dict[str, tuple[str, ...]] = {
    "cancel": ("pending", "processed", "on hold"),
    "modify": ("pending", "processed", "on hold"),
    "return": ("delivered",),
    "exchange": ("delivered",),
}
"""Statuses the built-in worlds' write tools accept (declared in world.json as `_mechanics`)."""

ITEM_OPS = ("return", "exchange", "modify_items")
SHIP_STATES = tuple(state for state in STATES if state not in ("AK", "HI"))


class Infeasible(Exception):
    """No task can realize this recipe in this window."""


@dataclass(frozen=True)
class Recipe:
    family: str
    ops: tuple[str, ...]
    targets: tuple[tuple[int, str, str], ...] = ()
    """(leg index, attribute, value). Order and item attributes belong to the shared order."""
    quote: bool = False
    special: str = ""
    """'insufficient' (gift card short of an upcharge) or 'not_found' (item not in the order)."""
    intent: str = "general"
    rules: tuple[str, ...] = ()


@dataclass
class LegProfile:
    op: str
    reason: str = ""
    refund_to: str = ""
    pay_with: str = ""
    new_state: str = ""


@dataclass
class Profile:
    status: str
    payment: str
    membership: str
    ship_state: str
    items: list[tuple[str, str]]
    """(category, item_class) of every order item; the first `requested` are the requested ones."""
    requested: int
    legs: list[LegProfile] = field(default_factory=list)
    special: str = ""
    quote: bool = False


@dataclass(frozen=True)
class SamplingContext:
    docs: tuple[Rule, ...]
    active: tuple[Rule, ...]
    unseen: frozenset[tuple[str, str]]
    """(attribute, value) pairs not introduced yet."""

    def allowed(self, ops: tuple[str, ...], attribute: str, value: str) -> bool:
        if (attribute, value) in self.unseen:
            return False
        return not any(rule.op in ops and rule.attribute == attribute and rule.refuses([value])
                       for rule in (*self.docs, *self.active))

    def pick(self, rng: random.Random, ops: tuple[str, ...], attribute: str, values: tuple[str, ...]) -> str:
        choices = [value for value in values if self.allowed(ops, attribute, value)]
        if not choices:
            raise Infeasible(f"no neutral value of {attribute} for {ops}")
        return rng.choice(choices)


def sample_profile(recipe: Recipe, context: SamplingContext, rng: random.Random) -> Profile:
    ops, targets = recipe.ops, _targets(recipe)
    status = targets.get((0, "status")) or context.pick(rng, ops, "status", _mechanical_statuses(ops))
    payment = targets.get((0, "payment")) or context.pick(rng, ops, "payment", _payments(recipe))
    profile = Profile(
        status=status, payment=payment,
        membership=targets.get((0, "membership")) or context.pick(rng, ops, "membership", TIERS),
        ship_state=targets.get((0, "ship_state")) or context.pick(rng, ops, "ship_state", SHIP_STATES),
        items=[], requested=1, special=recipe.special, quote=recipe.quote,
    )
    _sample_items(profile, recipe, targets, context, rng)
    profile.legs = [_sample_leg(index, op, profile, targets, context, rng) for index, op in enumerate(ops)]
    _check(profile, recipe)
    return profile


def _targets(recipe: Recipe) -> dict[tuple[int, str], str]:
    """Targets keyed by (leg, attribute); order and item attributes are keyed on leg 0."""
    found: dict[tuple[int, str], str] = {}
    for leg, attribute, value in recipe.targets:
        key = (0 if attribute in ORDER_LEVEL or attribute in ITEM_LEVEL else leg, attribute)
        if found.setdefault(key, value) != value:
            raise Infeasible(f"targets disagree on {attribute}")
    return found


def mechanics_kind(op: str) -> str:
    """The mechanics entry (statuses accepted) of an operation's write tool."""
    return op if op in ("cancel", "return", "exchange") else "modify"


def _mechanical_statuses(ops: tuple[str, ...]) -> tuple[str, ...]:
    shared = set.intersection(*(set(GENERATED_MECHANICS[mechanics_kind(op)]) for op in ops))
    return tuple(sorted(shared))


def _payments(recipe: Recipe) -> tuple[str, ...]:
    kinds = list(PAYMENT_KINDS)
    if "modify_payment" in recipe.ops:
        kinds.remove("split")  # only a single payment can be switched
    if any(attribute == "refund_to" and value == "original_method" for _, attribute, value in recipe.targets):
        kinds.remove("gift_card")  # a gift card is never the 'original method' destination
    return tuple(kinds)


def _sample_items(profile: Profile, recipe: Recipe, targets: Mapping[tuple[int, str], str],
                  context: SamplingContext, rng: random.Random) -> None:
    single = len(recipe.ops) > 1 or bool(recipe.special) or recipe.quote
    count = 1 if single else rng.choice((1, 1, 2))
    for index in range(count):
        category = targets.get((0, "category")) if index == 0 else None
        item_class = targets.get((0, "item_class")) if index == 0 else None
        category = category or context.pick(rng, recipe.ops, "category", CATEGORIES)
        if item_class is None:
            neutral = "clearance" if rng.random() < 0.2 and not recipe.special else "regular"
            item_class = neutral if context.allowed(recipe.ops, "item_class", neutral) else \
                context.pick(rng, recipe.ops, "item_class", ITEM_CLASSES)
        profile.items.append((category, item_class))
    item_leg = any(op in ITEM_OPS for op in recipe.ops)
    profile.requested = rng.randint(1, count) if item_leg and not single else 1


def _sample_leg(index: int, op: str, profile: Profile, targets: Mapping[tuple[int, str], str],
                context: SamplingContext, rng: random.Random) -> LegProfile:
    ops = (op,)
    leg = LegProfile(op)
    if op in ("cancel", "return"):
        reasons = CANCEL_REASONS if op == "cancel" else RETURN_REASONS
        leg.reason = targets.get((index, "reason")) or context.pick(rng, ops, "reason", reasons)
    if op == "return":
        feasible = tuple(t for t in REFUND_TARGETS if profile.payment != "gift_card" or t != "original_method")
        leg.refund_to = targets.get((index, "refund_to")) or context.pick(rng, ops, "refund_to", feasible)
    if op in ("exchange", "modify_items", "modify_payment"):
        forced = "gift_card" if profile.special == "insufficient" and index == 0 else None
        if forced and not context.allowed(ops, "pay_with", forced):
            raise Infeasible("the policy refuses gift cards here, so a short balance cannot be the cause")
        leg.pay_with = targets.get((index, "pay_with")) or forced or context.pick(rng, ops, "pay_with", METHOD_KINDS)
    if op == "modify_address":
        leg.new_state = targets.get((index, "new_state")) or context.pick(rng, ops, "new_state", STATES)
    return leg


def _check(profile: Profile, recipe: Recipe) -> None:
    if recipe.special == "insufficient" and recipe.ops[0] not in ("exchange", "modify_items"):
        raise Infeasible("an upcharge needs an exchange or a modification")
    if recipe.special == "not_found" and recipe.ops[0] != "return":
        raise Infeasible("a missing item is probed on returns")
    for leg in profile.legs:
        if leg.refund_to == "original_method" and profile.payment == "gift_card":
            raise Infeasible("a gift-card-paid order has no card to refund")
        if leg.op == "modify_payment" and profile.payment == "split":
            raise Infeasible("a split payment cannot be switched")
