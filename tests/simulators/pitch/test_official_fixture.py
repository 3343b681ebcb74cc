"""A hand-written fixture in the public export's layout grades from its own files: the weights come
from the prose bulletins in `windows.json`, matched to each task's own fact lines."""

from __future__ import annotations

from pathlib import Path

import pytest

from simulators.dataset import load_dataset
from simulators.domains.pitch import DOMAIN, attribute_weights
from simulators.protocol import Scenario, Task
from tests.support import run_task

ROOT = Path(__file__).parents[2] / "fixtures" / "official"

GOLD = {
    # thrift customer: low price and features liked; the talk of the town disliked, the rest neutral
    "pitch_L1_w0_adapt_prod_0901_sv": "Meet the Quarry Nine lunch box. It is low-priced, and it comes loaded with "
                                      "features that help you every single day. Pack it, carry it, and enjoy how "
                                      "much this lunch box handles for so little money spent. Take a closer look.",
    # stand-out customer: recycled materials and essentials only liked; a low price is a red line
    "pitch_L1_w1_adapt_prod_0903_sv": "The Orrery Slim card wallet uses recycled materials and is stripped down to "
                                      "the essentials only. It carries what matters and nothing more, in a form "
                                      "you will be glad to pull from your pocket every day. Take a closer look "
                                      "at it.",
    "pitch_L1_w0_adapt_prod_0904_te": "Meet the Harrow Pike rain poncho. It is loaded with features, keeping you "
                                      "covered when the weather turns and ready for whatever the day brings. Slip "
                                      "it on, head out, and let it handle the rest. We think it deserves a spot on "
                                      "your list.",
    "pitch_L1_w1_adapt_prod_0905_te": "The Velour Six desk clock has only a handful of owners, and its luxury "
                                      "pricing marks it out. It sits on your desk as a piece hardly anyone will "
                                      "recognize, chosen by you and not by the crowd. Take a closer look at it "
                                      "today.",
}
WRONG = {  # (pitch, reward)
    "pitch_L1_w0_adapt_prod_0901_sv": (GOLD["pitch_L1_w0_adapt_prod_0901_sv"] + " It is trending, too.", 0.5),
    "pitch_L1_w1_adapt_prod_0903_sv": (GOLD["pitch_L1_w1_adapt_prod_0903_sv"] + " And it is affordable.", 0.3),
    "pitch_L1_w0_adapt_prod_0904_te": (GOLD["pitch_L1_w0_adapt_prod_0904_te"] + " It is eco-friendly.", 0.5),
    "pitch_L1_w1_adapt_prod_0905_te": (GOLD["pitch_L1_w1_adapt_prod_0905_te"] + " Free shipping, too.", 0.5),
    # half the liked weight: every like weighs +1 in bulletin prose
    "pitch_L1_w0_adapt_prod_0902_sv": ("Meet the Tessel Fold camp stove, loaded with features for every trip. "
                                       "Set it up, light it, and cook a proper meal wherever the trail ends. We "
                                       "think it deserves a spot on your list. Give it a try and judge it on its "
                                       "merits.", 0.5),
}
WEIGHTS = {
    "pitch_L1_w0_adapt_prod_0901_sv": {"popularity": 0, "price": 1, "eco": 0, "features": 1, "buzz": -1},
    "pitch_L1_w0_adapt_prod_0902_sv": {"popularity": 0, "price": 1, "eco": -1, "features": 1, "buzz": 0},
    "pitch_L1_w1_adapt_prod_0903_sv": {"popularity": -1, "price": -3, "eco": 1, "features": 1, "buzz": -1},
    "pitch_L1_w0_adapt_prod_0904_te": {"popularity": 0, "price": -1, "eco": 0, "features": 1, "buzz": 0},
    "pitch_L1_w1_adapt_prod_0905_te": {"popularity": 1, "price": 1, "eco": 0, "features": 0, "buzz": -1},
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
    assert all("profile" not in t.evaluator.metadata for t in tasks_of(scenario).values())


def test_weights_come_from_the_window_bulletin(scenario: Scenario) -> None:
    for task_id, task in tasks_of(scenario).items():
        assert attribute_weights(scenario.environment, task) == WEIGHTS[task_id], task_id


async def test_gold_pitches_score_one_and_wrong_ones_lose_what_the_rubric_says(scenario: Scenario) -> None:
    tasks = tasks_of(scenario)
    for task_id, pitch in GOLD.items():
        assert 40 <= len(pitch.split()) <= 80
        assert await reward(scenario, tasks[task_id], pitch) == 1.0, task_id
    for task_id, (pitch, expected) in WRONG.items():
        assert await reward(scenario, tasks[task_id], pitch) == pytest.approx(expected), task_id


async def test_grade_details_say_where_the_weights_came_from(scenario: Scenario) -> None:
    task = tasks_of(scenario)["pitch_L1_w0_adapt_prod_0901_sv"]
    grade = await DOMAIN.grade(scenario.environment, task, DOMAIN.new_world(scenario.environment, task),
                               {"pitch": GOLD[task.task_id]}, None)
    assert grade.details["weights_from"] == "bulletin"
    assert grade.details["weights"] == WEIGHTS[task.task_id]


async def test_scripted_agent_ends_gracefully_without_docs_or_blocks(scenario: Scenario) -> None:
    for task in (*scenario.serving, *scenario.test):
        result = await run_task(scenario, DOMAIN, task, "oracle", with_bulletin=True)
        assert result.record.end_reason == "finished"
        assert result.record.finish_arguments and result.record.finish_arguments["pitch"]
        assert 0.0 <= result.grade.reward <= 1.0
