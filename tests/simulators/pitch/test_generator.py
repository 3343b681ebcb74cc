"""The built-in scenarios: determinism, exact counts, tier structure, bulletins and documents."""

from __future__ import annotations

from pathlib import Path

import pytest

from simulators.dataset import load_dataset, task_row, write_dataset
from simulators.domains.pitch import DOMAIN
from simulators.domains.pitch.attributes import TIER_DIMS
from simulators.domains.pitch.rules import SCHEDULES
from simulators.policy_block import parse_policy_blocks
from simulators.protocol import Scenario, Task

COUNTS = {"pitch_l1": (4, 216, 96), "pitch_l2": (6, 324, 144), "pitch_l3": (7, 378, 168)}


def rows(scenario: Scenario) -> list[dict[str, object]]:
    return [task_row(t) for t in (*scenario.serving, *scenario.test)]


def test_same_seed_same_scenario_other_seed_differs(pitch_scenarios: dict[str, Scenario]) -> None:
    again = DOMAIN.generate("pitch_l1", 0)
    first = pitch_scenarios["pitch_l1"]
    assert rows(again) == rows(first)
    assert again.environment == first.environment
    assert rows(DOMAIN.generate("pitch_l1", 1)) != rows(first)


@pytest.mark.parametrize("name", sorted(COUNTS))
def test_exact_counts_and_stream_positions(pitch_scenarios: dict[str, Scenario], name: str) -> None:
    scenario = pitch_scenarios[name]
    windows, serving, test = COUNTS[name]
    env = scenario.environment
    assert (len(env.windows), len(scenario.serving), len(scenario.test)) == (windows, serving, test)
    assert [t.timestamp for t in scenario.serving] == list(range(1, serving + 1))
    for window in env.windows:
        last = max(t.timestamp for t in scenario.serving if t.window == window.window)
        assert window.first_position == min(t.timestamp for t in scenario.serving if t.window == window.window)
        assert {t.timestamp for t in scenario.test if t.window == window.window} == {last}
    all_tasks = (*scenario.serving, *scenario.test)
    assert len({t.task_id for t in all_tasks}) == len(all_tasks)
    assert len({t.evaluator.metadata["product"]["name"] for t in all_tasks}) == len(all_tasks)
    assert {t.category for t in all_tasks} == {"hidden"}
    assert all(t.instruction.startswith(f"Current timestamp: {t.timestamp}\n\n") for t in all_tasks)
    assert env.world == {} and env.tool_names() == {"read_docs", "finish"}
    assert env.tool_schema("finish") == {"type": "object", "properties": {
        "pitch": {"type": "string", "description": "Your 40-80 word pitch."}}, "required": ["pitch"]}


@pytest.mark.parametrize("name", sorted(COUNTS))
def test_bulletins_carry_the_complete_active_profile(pitch_scenarios: dict[str, Scenario], name: str) -> None:
    scenario = pitch_scenarios[name]
    dims = TIER_DIMS[scenario.tier]
    documented = parse_policy_blocks(scenario.environment.docs["policy"])
    assert len(documented) == 1
    for window in scenario.environment.windows:
        (block,) = parse_policy_blocks(window.oracle_bulletin)
        assert set(block) == set(documented[0])
        assert {rule.split(".")[0] for rule in block} == set(dims)
        assert block != documented[0]
        task = next(t for t in scenario.test if t.window == window.window)
        assert block == task.evaluator.metadata["profile"]


def test_tier_structure() -> None:
    l1, l2, l3 = SCHEDULES["L1"], SCHEDULES["L2"], SCHEDULES["L3"]
    assert len(set(l1)) == len(l1)  # acquisition: no customer returns
    assert len(set(l2)) < len(l2)  # recurrence
    assert "power_user_budget" in l2 and "power_user" in l2  # drift of one customer
    flips = [i for i, key in enumerate(l3) if key.startswith("trendsetter")]
    assert [l3[i] for i in flips] == ["trendsetter", "trendsetter_flipped", "trendsetter", "trendsetter_flipped"]
    for schedule in (l1, l2, l3):
        assert all(a != b for a, b in zip(schedule, schedule[1:], strict=False))


def test_reopen_slice_marks_returning_customers(pitch_scenarios: dict[str, Scenario]) -> None:
    scenario = pitch_scenarios["pitch_l2"]
    slices = {t.window: t.evaluator.slice for t in scenario.test}
    assert slices == {0: "adapt", 1: "adapt", 2: "adapt", 3: "reopen", 4: "adapt", 5: "reopen"}


def scored_combos(scenario: Scenario, tasks: tuple[Task, ...], window: int) -> set[tuple[str, ...]]:
    """Each task's values on the dimensions its customer cares about."""
    found = set()
    for task in tasks:
        if task.window == window:
            product, profile = task.evaluator.metadata["product"], task.evaluator.metadata["profile"]
            scored = [d for d in TIER_DIMS[scenario.tier]
                      if any(w for r, w in profile.items() if r.startswith(f"{d}."))]
            found.add(tuple(product[d] for d in scored))
    return found


@pytest.mark.parametrize("name", sorted(COUNTS))
def test_test_products_are_held_out_from_serving(pitch_scenarios: dict[str, Scenario], name: str) -> None:
    scenario = pitch_scenarios[name]
    for window in scenario.environment.windows:
        served = scored_combos(scenario, scenario.serving, window.window)
        tested = scored_combos(scenario, scenario.test, window.window)
        assert tested and not served & tested


def test_unknown_scenario_is_refused() -> None:
    with pytest.raises(ValueError, match="pitch_l1"):
        DOMAIN.generate("pitch_l9", 0)


def test_written_dataset_loads_back_identical(pitch_scenarios: dict[str, Scenario], tmp_path: Path) -> None:
    scenario = pitch_scenarios["pitch_l1"]
    write_dataset(tmp_path / "suite", [scenario])
    loaded = load_dataset(tmp_path / "suite").scenarios["pitch_l1"]
    assert rows(loaded) == rows(scenario)
    assert loaded.environment == scenario.environment
