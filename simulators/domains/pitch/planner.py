"""The scripted pitch writer.

It reads the product sheet off the instruction, weighs each fact with the policy it was given
(`<attribute>.<value>` -> weight rules: the documented block, overlaid by any block in its system
prompt), states every positively weighted fact and nothing else, and finishes. With no pitch rules at
all (the public export ships no policy block) it falls back to stating the sheet as far as the word
budget allows, so the episode still ends with a pitch.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from simulators.domain import PlannedCall, ToolExchange
from simulators.domains.pitch.attributes import parse_rule_id, rule_id
from simulators.domains.pitch.composer import compose_pitch, liked_items
from simulators.domains.pitch.sheet import parse_sheet
from simulators.protocol import JSON

__all__ = ["next_call", "policy_weights"]


def policy_weights(policy: Mapping[str, JSON]) -> dict[str, float]:
    """The pitch rules of a merged policy: a number, or an object with a numeric `weight`. Rules of
    other shapes or ids are ignored, as a person skims past notes that are not about pitching."""
    weights: dict[str, float] = {}
    for rule, value in policy.items():
        if parse_rule_id(rule) is None:
            continue
        if isinstance(value, Mapping):
            value = value.get("weight")
        if isinstance(value, int | float) and not isinstance(value, bool):
            weights[rule] = float(value)
    return weights


def next_call(instruction: str, policy: Mapping[str, JSON], history: Sequence[ToolExchange]) -> PlannedCall:
    sheet = parse_sheet(instruction)
    weights = policy_weights(policy)
    if weights:
        items = liked_items(sheet, weights)
        thought = (f"Stating the {len(items)} sheet fact(s) the policy weights positively, leaving out "
                   f"the other {len(sheet.items) - len(items)}.")
    else:
        items = liked_items(sheet, {rule_id(i.attribute, i.value): 1.0 for i in sheet.items})
        thought = "No pitch rules known: stating the sheet's facts as far as the word budget allows."
    return PlannedCall("finish", {"pitch": compose_pitch(sheet, items)}, thought)
