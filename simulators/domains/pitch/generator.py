"""Build the built-in scenarios `pitch_l1`, `pitch_l2`, `pitch_l3`.

Per window: 54 serving and 24 test products for the window's customer. A product qualifies when it
puts the writer on the spot (the customer likes something on the sheet and dislikes something else)
and when a documents-follower's pitch clearly misses (so every task is truly hidden). Test products
are held out at the level the rubric sees: their attribute combination on the dimensions the customer
cares about never occurs among that window's serving products, and a returning customer is tested
first on combinations it was not served before.

Deterministic in (scenario, seed): one `random.Random(f"{scenario}:{seed}")`, sorted candidate
lists, no set or dict iteration that depends on hashing.
"""

from __future__ import annotations

import itertools
import random
from collections.abc import Mapping
from dataclasses import dataclass, field

from simulators.domain import JudgeVerdict
from simulators.domains.pitch.attributes import ATTRIBUTES, TIER_DIMS
from simulators.domains.pitch.composer import compose_pitch, liked_items
from simulators.domains.pitch.documents import SYSTEM_PROMPT, TOOLS, policy_document, workflow_document
from simulators.domains.pitch.profiles import DOCUMENTED, Profile, profile_rules
from simulators.domains.pitch.rubric import MENTIONED, score_verdict
from simulators.domains.pitch.rules import (
    PER_WINDOW_SERVING,
    PER_WINDOW_TEST,
    SCHEDULES,
    bulletin,
    slice_of,
    window_profiles,
)
from simulators.domains.pitch.sheet import Sheet, SheetItem, render_instruction
from simulators.domains.pitch.wording import (
    CATEGORIES,
    CLOSINGS,
    LABELS,
    LEADS,
    NAME_FIRST,
    NAME_SECOND,
    SHEET_PHRASINGS,
)
from simulators.protocol import Evaluator, Scenario, ScenarioEnvironment, Task, Window

__all__ = ["DOCS_SCORE_CEILING", "generate_scenario", "tier_of"]

DOCS_SCORE_CEILING = 0.5
"""A product qualifies only if the documented-profile pitch scores at most this for the customer."""
TEST_COMBO_SHARE = 3
"""About one in this many eligible combinations is reserved for the test split."""

Combo = tuple[str, ...]


def tier_of(scenario: str) -> str:
    level = scenario.removeprefix("pitch_l")
    if scenario == level or f"L{level}" not in SCHEDULES:
        raise ValueError(f"unknown pitch scenario '{scenario}'; known: pitch_l1, pitch_l2, pitch_l3")
    return f"L{level}"


@dataclass
class _Builder:
    scenario: str
    tier: str
    rng: random.Random
    dims: tuple[str, ...]
    names: set[str] = field(default_factory=set)
    products: int = 0
    served: dict[str, set[Combo]] = field(default_factory=dict)
    """Profile key -> combinations already served to it, in earlier windows too."""


def generate_scenario(scenario: str, seed: int) -> Scenario:
    tier = tier_of(scenario)
    builder = _Builder(scenario, tier, random.Random(f"{scenario}:{seed}"), TIER_DIMS[tier])
    serving: list[Task] = []
    test: list[Task] = []
    windows: list[Window] = []
    for window, profile in enumerate(window_profiles(tier)):
        first = window * PER_WINDOW_SERVING + 1
        serve_pool, test_pool = _split(builder, profile)
        for offset in range(PER_WINDOW_SERVING):
            serving.append(_task(builder, window, profile, first + offset, "serving", serve_pool))
        last = first + PER_WINDOW_SERVING - 1
        for _ in range(PER_WINDOW_TEST):
            test.append(_task(builder, window, profile, last, "test", test_pool))
        windows.append(Window(window, first, bulletin(profile, builder.dims)))
    environment = ScenarioEnvironment(
        system_prompt=SYSTEM_PROMPT,
        tools=TOOLS,
        docs={"policy": policy_document(builder.dims), "workflow": workflow_document()},
        world={},
        windows=tuple(windows),
    )
    return Scenario(scenario, "pitch", tier, environment, tuple(serving), tuple(test))


# ------------------------------------------------------------------------------------ candidates

def _eligible(profile: Profile, dims: tuple[str, ...]) -> list[Combo]:
    """Every value assignment over the tier's dimensions that qualifies for this customer."""
    docs = profile_rules(DOCUMENTED, dims)
    found = []
    for values in itertools.product(*(ATTRIBUTES[d] for d in dims)):
        weights = [profile.weight(d, v) for d, v in zip(dims, values, strict=True)]
        if max(weights) <= 0 or min(weights) >= 0:
            continue
        if _score_of_mentions(profile, dims, values, docs) <= DOCS_SCORE_CEILING:
            found.append(values)
    return found


def _score_of_mentions(profile: Profile, dims: tuple[str, ...], values: Combo,
                       writer_rules: Mapping[str, int]) -> float:
    """The reward of a faithful pitch written with `writer_rules` (what the scripted writer states),
    computed from labels without rendering text."""
    sheet = Sheet("Sample Product", "sample", tuple(
        SheetItem(d, v, LABELS[(d, v)]) for d, v in zip(dims, values, strict=True)))
    stated = {item.attribute for item in liked_items(sheet, writer_rules)}
    verdict = JudgeVerdict({a: MENTIONED for a in stated}, (), "analytic")
    weights = {d: profile.weight(d, v) for d, v in zip(dims, values, strict=True)}
    return score_verdict(weights, verdict, 60).score / 100.0


def _split(builder: _Builder, profile: Profile) -> tuple[list[Combo], list[Combo]]:
    """(serving pool, test pool) of value assignments, disjoint on the customer's scored dimensions."""
    scored = [i for i, d in enumerate(builder.dims) if any(profile.weight(d, v) for v in ATTRIBUTES[d])]
    by_combo: dict[Combo, list[Combo]] = {}
    for values in _eligible(profile, builder.dims):
        by_combo.setdefault(tuple(values[i] for i in scored), []).append(values)
    combos = sorted(by_combo)
    builder.rng.shuffle(combos)
    seen = builder.served.setdefault(profile.key, set())
    combos.sort(key=lambda combo: combo in seen)  # stable: unseen combinations first, shuffled
    reserved = max(2, len(combos) // TEST_COMBO_SHARE)
    if len(combos) <= reserved:
        raise ValueError(f"{builder.scenario}: only {len(combos)} eligible combinations for {profile.key}")
    seen.update(combos[reserved:])
    test_pool = [v for combo in combos[:reserved] for v in by_combo[combo]]
    serve_pool = [v for combo in combos[reserved:] for v in by_combo[combo]]
    return serve_pool, test_pool


# ------------------------------------------------------------------------------------ tasks

def _task(builder: _Builder, window: int, profile: Profile, timestamp: int, split: str,
          pool: list[Combo]) -> Task:
    rng = builder.rng
    values = rng.choice(pool)
    builder.products += 1
    product_id = f"prod_{builder.products:04d}"
    sheet = Sheet(_name(builder), rng.choice(CATEGORIES), tuple(
        SheetItem(d, v, rng.choice(SHEET_PHRASINGS[(d, v)])) for d, v in zip(builder.dims, values, strict=True)))
    rules = profile_rules(profile, builder.dims)
    slice_name = slice_of(builder.tier, window)
    product = {"product_id": product_id, "name": sheet.name, "category": sheet.category,
               **{item.attribute: item.value for item in sheet.items}}
    evaluator = Evaluator(
        slice=slice_name,
        family=profile.family,
        actions=(),
        answer=compose_pitch(sheet, liked_items(sheet, rules)),
        metadata={"t": timestamp, "customer_key": profile.key, "product": product, "profile": rules},
    )
    phase = "sv" if split == "serving" else "te"
    return Task(
        task_id=f"pitch_{builder.tier}_w{window}_{slice_name}_{product_id}_{phase}",
        scenario=builder.scenario, domain="pitch", tier=builder.tier,
        split="serving" if split == "serving" else "test", window=window, timestamp=timestamp,
        category="hidden",
        instruction=render_instruction(timestamp, rng.choice(LEADS), sheet, rng.choice(CLOSINGS)),
        evaluator=evaluator,
    )


def _name(builder: _Builder) -> str:
    """A product name unique within the scenario, so a note about a name means one sheet."""
    base = f"{builder.rng.choice(NAME_FIRST)} {builder.rng.choice(NAME_SECOND)}"
    name, series = base, 1
    while name in builder.names:
        series += 1
        name = f"{base} {series}"
    builder.names.add(name)
    return name

