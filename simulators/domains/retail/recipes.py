"""What a window's tasks probe: recipes, sorted into adapt, general and reopen pools.

- adapt: a value on which the active rule and the documents disagree (the request touches one rule;
  in L2/L3 also two: two attributes of one request, or a request and its fallback);
- general: the boundary next to it that did not move, the documented rules (status, final sale,
  destinations), money and missing items, and plain requests nothing refuses;
- reopen: a value an earlier window treated differently from the documents and this window treats
  as they say again.

A recipe's pool is decided by realizing it once and comparing the outcomes under both policies, so a
pool can never hold a task of the wrong kind.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass, field

from simulators.domains.retail.profiles import GENERATED_MECHANICS, Infeasible, Recipe, mechanics_kind
from simulators.domains.retail.vocabulary import (
    CANCEL_REASONS,
    CATEGORIES,
    ITEM_CLASSES,
    METHOD_KINDS,
    OP_ATTRIBUTES,
    OPS,
    PAYMENT_KINDS,
    REFUND_TARGETS,
    RETURN_REASONS,
    STATES,
    STATUSES,
    TIERS,
    Rule,
)

__all__ = ["Pools", "WindowPolicies", "build_pools", "contested_values"]

FALLBACKS = (("exchange", "return"), ("modify_items", "cancel"), ("modify_address", "cancel"))
_MAX_CONTROLS = 3
_MAX_MULTI = 16

_DOMAINS: dict[str, tuple[str, ...]] = {
    "status": STATUSES, "payment": PAYMENT_KINDS, "membership": TIERS, "category": CATEGORIES,
    "item_class": ITEM_CLASSES, "ship_state": tuple(s for s in STATES if s not in ("AK", "HI")),
    "new_state": STATES, "refund_to": REFUND_TARGETS, "pay_with": METHOD_KINDS,
}


def _domain(op: str, attribute: str) -> tuple[str, ...]:
    if attribute == "reason":
        return CANCEL_REASONS if op == "cancel" else RETURN_REASONS
    return _DOMAINS.get(attribute, ())


@dataclass(frozen=True)
class WindowPolicies:
    docs: dict[str, Rule]
    active: dict[str, Rule]
    earlier: tuple[dict[str, Rule], ...]
    unseen: frozenset[tuple[str, str]]
    multi: bool
    """Whether requests touching two rules are generated (L2, L3)."""


@dataclass
class Pools:
    adapt: list[Recipe] = field(default_factory=list)
    multi: list[Recipe] = field(default_factory=list)
    general: list[Recipe] = field(default_factory=list)
    reopen: list[Recipe] = field(default_factory=list)


def _reasons(policy: dict[str, Rule], op: str, attribute: str, value: str) -> tuple[str, ...]:
    return tuple(rule.reason for rule in policy.values()
                 if rule.op == op and rule.attribute == attribute and rule.refuses([value]))


def _differs(docs: tuple[str, ...], active: tuple[str, ...]) -> bool:
    if bool(docs) != bool(active):
        return True
    return bool(docs) and docs[0] not in active


def _mechanical(op: str, attribute: str, value: str) -> bool:
    """A status a write might be attempted on must be one the write tool accepts."""
    return attribute != "status" or value in GENERATED_MECHANICS[mechanics_kind(op)]


def contested_values(policies: WindowPolicies, active: dict[str, Rule], op: str, attribute: str) -> list[str]:
    """Values of one attribute on which `active` and the documents decide differently."""
    return [value for value in _domain(op, attribute)
            if (attribute, value) not in policies.unseen and _mechanical(op, attribute, value)
            and _differs(_reasons(policies.docs, op, attribute, value), _reasons(active, op, attribute, value))]


def _probes(policies: WindowPolicies) -> list[tuple[str, str, str]]:
    """(op, attribute, value) of every adapt probe of the window."""
    return [(op, attribute, value) for op in OPS for attribute in OP_ATTRIBUTES[op]
            for value in contested_values(policies, policies.active, op, attribute)]


def _candidates(policies: WindowPolicies, rng: random.Random) -> list[Recipe]:
    probes = _probes(policies)
    recipes = [_single(op, attribute, value, "adapt") for op, attribute, value in probes]
    recipes += [_single(op, attribute, value, "adapt", quote=True) for op, attribute, value in probes if op == "return"]
    recipes += _controls(policies, probes) + _reopened(policies) + _documented(policies)
    if policies.multi:
        recipes += _multi(probes, rng)
    return recipes


def _single(op: str, attribute: str, value: str, intent: str, family: str = "", quote: bool = False) -> Recipe:
    family = family or f"{op}.{attribute}" + (".quote" if quote else "")
    return Recipe(family, (op,), ((0, attribute, value),), quote=quote, intent=intent, rules=(f"{op}.{attribute}",))


def _controls(policies: WindowPolicies, probes: list[tuple[str, str, str]]) -> list[Recipe]:
    recipes = []
    for op, attribute in dict.fromkeys((op, attribute) for op, attribute, _ in probes):
        moved = set(contested_values(policies, policies.active, op, attribute))
        steady = [value for value in _domain(op, attribute) if value not in moved
                  and (attribute, value) not in policies.unseen and _mechanical(op, attribute, value)]
        recipes += [_single(op, attribute, value, "general", f"{op}.{attribute}.control")
                    for value in steady[:_MAX_CONTROLS]]
    return recipes


def _reopened(policies: WindowPolicies) -> list[Recipe]:
    recipes = []
    for op in OPS:
        for attribute in OP_ATTRIBUTES[op]:
            now = set(contested_values(policies, policies.active, op, attribute))
            before = {value for earlier in policies.earlier
                      for value in contested_values(policies, earlier, op, attribute)}
            recipes += [_single(op, attribute, value, "reopen", f"{op}.{attribute}.reopen")
                        for value in _domain(op, attribute) if value in before and value not in now]
    return recipes


def _documented(policies: WindowPolicies) -> list[Recipe]:
    recipes = []
    for rule in policies.docs.values():
        refused = [value for value in rule.deny if _reasons(policies.active, rule.op, rule.attribute, value)
                   and (rule.attribute, value) not in policies.unseen]
        recipes += [_single(rule.op, rule.attribute, value, "general", f"{rule.rule_id}.documented")
                    for value in refused[:2]]
    recipes += [Recipe(f"{op}.balance", (op,), special="insufficient") for op in ("exchange", "modify_items")]
    recipes.append(Recipe("return.not_found", ("return",), special="not_found"))
    recipes += [Recipe(f"{op}.plain", (op,)) for op in OPS]
    recipes.append(Recipe("return.plain.quote", ("return",), quote=True))
    return recipes


def _multi(probes: list[tuple[str, str, str]], rng: random.Random) -> list[Recipe]:
    pairs = []
    for index, (op, attribute, value) in enumerate(probes):
        for other_op, other_attribute, other_value in probes[index + 1:]:
            if other_op == op and other_attribute != attribute:
                pairs.append(Recipe(f"{op}.{attribute}+{op}.{other_attribute}", (op,),
                                    ((0, attribute, value), (0, other_attribute, other_value)), intent="adapt",
                                    rules=(f"{op}.{attribute}", f"{op}.{other_attribute}")))
    for first, second in FALLBACKS:
        for op, attribute, value in probes:
            if op != first:
                continue
            pairs.append(Recipe(f"{op}.{attribute}>{second}", (first, second), ((0, attribute, value),),
                                intent="adapt", rules=(f"{op}.{attribute}",)))
            for other_op, other_attribute, other_value in probes:
                if other_op == second:
                    pairs.append(Recipe(f"{op}.{attribute}>{other_op}.{other_attribute}", (first, second),
                                        ((0, attribute, value), (1, other_attribute, other_value)), intent="adapt",
                                        rules=(f"{op}.{attribute}", f"{other_op}.{other_attribute}")))
    rng.shuffle(pairs)
    return pairs[:_MAX_MULTI]


def build_pools(policies: WindowPolicies, rng: random.Random, slice_of: Callable[[Recipe], str]) -> Pools:
    """Sort the window's candidate recipes by the slice a realization of each gets (`slice_of`, which
    raises Infeasible for a recipe no task can realize)."""
    pools = Pools()
    for recipe in _candidates(policies, rng):
        try:
            found = slice_of(recipe)
        except Infeasible:
            continue
        if found == "adapt":
            (pools.multi if len(recipe.ops) > 1 or len(recipe.targets) > 1 else pools.adapt).append(recipe)
        elif found == "reopen":
            pools.reopen.append(recipe)
        else:
            pools.general.append(recipe)
    return pools
