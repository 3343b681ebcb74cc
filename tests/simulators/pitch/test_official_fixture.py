"""A hand-written fixture in the public export's layout runs unchanged through world and grader."""

from __future__ import annotations

from pathlib import Path

import pytest

from simulators.dataset import load_dataset
from simulators.domains.pitch import DOMAIN
from simulators.protocol import Scenario, Task
from tests.support import run_task

ROOT = Path(__file__).parents[2] / "fixtures" / "official"

GOLD = {
    # value customer: budget price (+2) and features (+1); trending is disliked, the rest neutral
    "pitch_L1_w0_adapt_prod_0901_sv": "Meet the Quarry Nine lunch box. It has a budget-friendly price, and it is "
                                      "feature-rich: it does a lot for you every single day. Pack it, carry it, "
                                      "and enjoy how much this lunch box handles for so little money spent. "
                                      "Take a closer look.",
    # identity customer: eco (+1) and essential functions (+1); budget price is a red line
    "pitch_L1_w1_adapt_prod_0903_sv": "The Orrery Slim card wallet is made from sustainable materials and provides "
                                      "only the essential functions, with few extras. It carries what matters and "
                                      "nothing more, in a form you will be glad to pull from your pocket every "
                                      "day. Take a closer look at it.",
    "pitch_L1_w0_adapt_prod_0904_te": "Meet the Harrow Pike rain poncho. It is feature-rich and does a lot, keeping "
                                      "you covered when the weather turns and ready for whatever the day brings. "
                                      "Slip it on, head out, and let it handle the rest. We think it deserves a "
                                      "spot on your list.",
    "pitch_L1_w1_adapt_prod_0905_te": "The Velour Six desk clock has only a small number of owners, and it comes "
                                      "at a premium price that marks it out. It sits on your desk as a piece few "
                                      "people will recognize, chosen by you and not by the crowd. Take a closer "
                                      "look at it today.",
}
WRONG = {
    "pitch_L1_w0_adapt_prod_0901_sv": GOLD["pitch_L1_w0_adapt_prod_0901_sv"] + " It is trending everywhere.",
    "pitch_L1_w1_adapt_prod_0903_sv": GOLD["pitch_L1_w1_adapt_prod_0903_sv"] + " And it is affordable.",
    "pitch_L1_w0_adapt_prod_0904_te": GOLD["pitch_L1_w0_adapt_prod_0904_te"] + " It is eco-friendly.",
    "pitch_L1_w1_adapt_prod_0905_te": GOLD["pitch_L1_w1_adapt_prod_0905_te"] + " Free shipping, too.",
}


@pytest.fixture(scope="module")
def scenario() -> Scenario:
    return load_dataset(ROOT, only=["pitch_l1"]).scenarios["pitch_l1"]


def tasks_of(scenario: Scenario) -> dict[str, Task]:
    return {t.task_id: t for t in (*scenario.serving, *scenario.test)}


async def reward(scenario: Scenario, task: Task, pitch: str) -> float:
    world = DOMAIN.new_world(scenario.environment, task)
    return (await DOMAIN.grade(scenario.environment, task, world, {"pitch": pitch}, None)).reward


def test_fixture_loads_in_the_export_layout(scenario: Scenario) -> None:
    assert scenario.domain == "pitch" and scenario.environment.docs == {}
    assert scenario.environment.tool_names() == {"finish"}
    assert (len(scenario.serving), len(scenario.test), len(scenario.environment.windows)) == (3, 2, 2)


async def test_gold_pitches_score_one_and_wrong_ones_fail(scenario: Scenario) -> None:
    tasks = tasks_of(scenario)
    for task_id, pitch in GOLD.items():
        assert 40 <= len(pitch.split()) <= 80
        assert await reward(scenario, tasks[task_id], pitch) == 1.0, task_id
    expected = {"pitch_L1_w0_adapt_prod_0901_sv": 0.5, "pitch_L1_w1_adapt_prod_0903_sv": 0.3,
                "pitch_L1_w0_adapt_prod_0904_te": 0.5, "pitch_L1_w1_adapt_prod_0905_te": 0.5}
    for task_id, pitch in WRONG.items():
        assert await reward(scenario, tasks[task_id], pitch) == pytest.approx(expected[task_id]), task_id


async def test_scripted_agent_ends_gracefully_without_docs_or_blocks(scenario: Scenario) -> None:
    for task in (*scenario.serving, *scenario.test):
        result = await run_task(scenario, DOMAIN, task, "oracle", with_bulletin=True)
        assert result.record.end_reason == "finished"
        assert result.record.finish_arguments and result.record.finish_arguments["pitch"]
        assert 0.0 <= result.grade.reward <= 1.0
