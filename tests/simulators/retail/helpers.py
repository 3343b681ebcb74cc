"""Small helpers shared by the retail tests."""

from __future__ import annotations

from collections.abc import Mapping

from simulators.domain import Grade
from simulators.domains.retail import DOMAIN
from simulators.domains.retail.world import RetailWorld
from simulators.protocol import JSON, Action, Scenario, ScenarioEnvironment, Task


def gold_finish(task: Task) -> dict[str, JSON]:
    """The finish arguments of an agent that got the task right."""
    answer = task.evaluator.answer
    if answer is None:
        return {}
    if isinstance(answer, dict) and answer.get("kind") == "refuse":
        return {"decision": "refuse", "reason": answer["reasons"][0]}
    if isinstance(answer, dict) and answer.get("kind") == "value":
        return {"answer": answer["expect"]}
    return {"answer": answer}


def world_after(environment: ScenarioEnvironment, task: Task, actions: tuple[Action, ...]) -> RetailWorld:
    world = DOMAIN.new_world(environment, task)
    assert isinstance(world, RetailWorld)
    for action in actions:
        world.call(action.name, action.kwargs)
    return world


async def grade(scenario_or_env: Scenario | ScenarioEnvironment, task: Task, actions: tuple[Action, ...],
                finish: Mapping[str, JSON] | None) -> Grade:
    environment = scenario_or_env.environment if isinstance(scenario_or_env, Scenario) else scenario_or_env
    return await DOMAIN.grade(environment, task, world_after(environment, task, actions), finish, None)
