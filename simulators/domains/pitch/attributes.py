"""The product attribute space: dimensions, their values, and the rule ids that weight them.

Identifiers are the public export's (`price` / `low`, `buzz` / `under_the_radar` ...), so its task
lines (`evaluator.metadata.product`) read directly. A product carries one value per dimension of its
tier: L1 sheets have five dimensions (every fact fits the word budget), L2/L3 sheets all ten (they do
not, so the writer must choose).
"""

from __future__ import annotations

__all__ = [
    "ATTRIBUTES",
    "FULL_DIMS",
    "L1_DIMS",
    "TIER_DIMS",
    "all_pairs",
    "parse_rule_id",
    "rule_id",
]

ATTRIBUTES: dict[str, tuple[str, ...]] = {
    "launch": ("just_launched", "classic"),
    "popularity": ("many_users", "niche"),
    "price": ("low", "mid", "high"),
    "design": ("unique", "classic"),
    "eco": ("eco", "regular"),
    "features": ("full", "minimal"),
    "buzz": ("viral", "under_the_radar"),
    "warranty": ("long_warranty", "final_sale"),
    "origin": ("handcrafted", "mass_produced"),
    "availability": ("limited", "everywhere"),
}
"""Dimension -> its values, in the canonical order sheets list them."""

L1_DIMS: tuple[str, ...] = ("popularity", "price", "eco", "features", "buzz")
FULL_DIMS: tuple[str, ...] = tuple(ATTRIBUTES)
TIER_DIMS: dict[str, tuple[str, ...]] = {"L1": L1_DIMS, "L2": FULL_DIMS, "L3": FULL_DIMS}


def rule_id(attribute: str, value: str) -> str:
    """The policy-block rule id weighting one attribute value, e.g. `price.low`."""
    return f"{attribute}.{value}"


def parse_rule_id(rule: str) -> tuple[str, str] | None:
    """(attribute, value) for a well-formed pitch rule id, else None (other rules are ignored)."""
    attribute, _, value = rule.partition(".")
    if value in ATTRIBUTES.get(attribute, ()):
        return attribute, value
    return None


def all_pairs(dims: tuple[str, ...] = FULL_DIMS) -> list[tuple[str, str]]:
    return [(dim, value) for dim in dims for value in ATTRIBUTES[dim]]
