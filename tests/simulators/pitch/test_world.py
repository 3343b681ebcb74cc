"""The pitch world holds no state, refuses tool calls, and is cheap to make and grade."""

from __future__ import annotations

import pytest

from simulators.domains.pitch import DOMAIN
from simulators.errors import ToolError
from simulators.protocol import Scenario


def test_world_has_no_tools_and_no_state(pitch_scenarios: dict[str, Scenario]) -> None:
    scenario = pitch_scenarios["pitch_l1"]
    world = DOMAIN.new_world(scenario.environment, scenario.serving[0])
    with pytest.raises(ToolError, match="finish"):
        world.call("get_product", {})
    assert world.snapshot() == {}


async def test_the_gold_pitch_grades_on_a_fresh_world(pitch_scenarios: dict[str, Scenario]) -> None:
    """Every test task's fresh world grades the gold pitch above zero (what an episode's world and grade
    cost is `python -m bench.run_benchmarks --only worlds`)."""
    scenario = pitch_scenarios["pitch_l3"]
    for task in scenario.test:
        world = DOMAIN.new_world(scenario.environment, task)
        grade = await DOMAIN.grade(scenario.environment, task, world, {"pitch": str(task.evaluator.answer)}, None)
        assert grade.reward > 0, task.task_id