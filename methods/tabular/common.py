"""What every tabular adapter shares: reading a record's calls, the documented policy block, compact
integer bookkeeping, and where a numeric boundary most plausibly lies.

State is JSON without floats (money is kept in cents), so a checkpoint is byte-stable.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass

import orjson

from simulators.policy_block import merged_policy
from simulators.protocol import JSON
from simulators.record import EpisodeRecord

__all__ = [
    "NEVER",
    "Call",
    "as_int",
    "calls_of",
    "cents",
    "documented_rules",
    "json_object",
    "lookups",
    "roundest_between",
]

NEVER = -1
"""The stream position of evidence that never arrived."""


@dataclass(frozen=True)
class Call:
    """One executed tool call of an episode and what it returned."""

    name: str
    arguments: Mapping[str, JSON]
    observation: str

    @property
    def failed(self) -> bool:
        return self.observation.startswith("Error")


def json_object(text: str) -> dict[str, JSON] | None:
    try:
        value = orjson.loads(text)
    except orjson.JSONDecodeError:
        return None
    return value if isinstance(value, dict) else None


def calls_of(record: EpisodeRecord) -> list[Call]:
    calls = []
    for step in record.steps:
        if step.action_name is None:
            continue
        arguments = json_object(step.action_arguments or "{}") or {}
        calls.append(Call(step.action_name, arguments, step.observation))
    return calls


def lookups(calls: Sequence[Call], acting: Collection[str]) -> tuple[Call | None, list[tuple[Call, dict[str, JSON]]]]:
    """The first call named in `acting` (the decision or write the agent made), and every other call that
    succeeded with a JSON object, paired with that object, in order."""
    act: Call | None = None
    found: list[tuple[Call, dict[str, JSON]]] = []
    for call in calls:
        if call.name in acting:
            act = act or call
            continue
        record = None if call.failed else json_object(call.observation)
        if record is not None:
            found.append((call, record))
    return act, found


def documented_rules(calls: Sequence[Call]) -> dict[str, JSON]:
    """The policy block(s) of the documents the agent read in this episode, merged."""
    return merged_policy(*(call.observation for call in calls if call.name == "read_docs"))


def cents(value: JSON) -> int | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return int(round(float(value) * 100))


def as_int(value: JSON, default: int = 0) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else default


_GRAINS = (100_000_000, 50_000_000, 10_000_000, 5_000_000, 1_000_000, 500_000, 100_000, 50_000, 25_000,
           10_000, 5_000, 1_000, 500, 100, 50, 10, 5, 1)


def roundest_between(low: int, high: int) -> int:
    """A value v with low <= v < high, as round as possible (policies are written in round numbers),
    nearest the middle among equally round ones. `low >= high` (no gap) gives `low`."""
    if low >= high:
        return low
    middle = (low + high) / 2
    for grain in _GRAINS:
        first = -(-low // grain) * grain
        if first < high:
            last = (high - 1) // grain * grain
            nearest = int(round(middle / grain)) * grain
            return min(max(nearest, first), last)
    return low
