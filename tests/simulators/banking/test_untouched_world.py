"""Every banking task's fresh world grades; what that costs per episode is a benchmark
(`python -m bench.run_benchmarks --only worlds`), not a timed test."""

from __future__ import annotations

from simulators.domains.banking import DOMAIN
from tests.simulators.banking.conftest import built


async def test_a_fresh_world_with_no_decision_never_passes() -> None:
    """Banking decisions are tool calls that write onto the case: a world nobody acted on matches no
    gold, so every task of the hardest scenario grades 0 (and grading it raises nothing)."""
    scenario = built("banking_l3")
    for task in scenario.serving + scenario.test:
        world = DOMAIN.new_world(scenario.environment, task)
        assert (await DOMAIN.grade(scenario.environment, task, world, {}, None)).reward == 0.0, task.task_id
