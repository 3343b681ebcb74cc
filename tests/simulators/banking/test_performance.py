"""new_world + grade must stay far below a millisecond: a full offline sweep runs ~15,000 episodes."""

from __future__ import annotations

import time

from simulators.domains.banking import DOMAIN
from tests.simulators.banking.conftest import built


async def test_new_world_and_grade_are_cheap() -> None:
    scenario = built("banking_l3")
    tasks = scenario.serving + scenario.test
    started = time.perf_counter()
    for task in tasks:
        world = DOMAIN.new_world(scenario.environment, task)
        await DOMAIN.grade(scenario.environment, task, world, {}, None)
    per_episode = (time.perf_counter() - started) / len(tasks)
    assert per_episode < 1e-3, f"{per_episode * 1e6:.0f} us per episode"
