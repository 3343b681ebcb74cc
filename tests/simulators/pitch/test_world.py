"""The pitch world holds no state, refuses tool calls, and is cheap to make and grade."""

from __future__ import annotations

import time

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


async def test_new_world_plus_grade_is_fast(pitch_scenarios: dict[str, Scenario]) -> None:
    scenario = pitch_scenarios["pitch_l3"]
    tasks = scenario.test
    started = time.perf_counter()
    for task in tasks:
        world = DOMAIN.new_world(scenario.environment, task)
        await DOMAIN.grade(scenario.environment, task, world, {"pitch": str(task.evaluator.answer)}, None)
    per_episode = (time.perf_counter() - started) / len(tasks)
    assert per_episode < 0.005  # measured ~0.3 ms; loose bound for a busy machine
