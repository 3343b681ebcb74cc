"""Gold pitches score 1.0 on every built-in task; damaged ones lose what the rubric says."""

from __future__ import annotations

import pytest

from simulators.domain import JudgeRequest, JudgeVerdict
from simulators.domains.pitch import DOMAIN, judge_request
from simulators.domains.pitch.grader import attribute_weights
from simulators.domains.pitch.wording import PITCH_SENTENCES
from simulators.protocol import Scenario, Task

NAMES = ("pitch_l1", "pitch_l2", "pitch_l3")


async def reward(scenario: Scenario, task: Task, pitch: str | None) -> float:
    world = DOMAIN.new_world(scenario.environment, task)
    finish = None if pitch is None else {"pitch": pitch}
    return (await DOMAIN.grade(scenario.environment, task, world, finish, None)).reward


@pytest.mark.parametrize("name", NAMES)
async def test_gold_pitch_scores_one_on_every_task(pitch_scenarios: dict[str, Scenario], name: str) -> None:
    scenario = pitch_scenarios[name]
    for task in (*scenario.serving, *scenario.test):
        gold = task.evaluator.answer
        assert isinstance(gold, str) and 40 <= len(gold.split()) <= 80
        assert await reward(scenario, task, gold) == 1.0, task.task_id


def disliked_sentence(scenario: Scenario, task: Task, red: bool) -> str | None:
    weights = attribute_weights(scenario.environment, task)
    product = task.evaluator.metadata["product"]
    for attribute, weight in weights.items():
        if (weight <= -3) if red else (-3 < weight < 0):
            return PITCH_SENTENCES[(attribute, product[attribute])]
    return None


async def test_wrong_variants_lose_points(pitch_scenarios: dict[str, Scenario]) -> None:
    scenario = pitch_scenarios["pitch_l2"]
    checked = {"dislike": 0, "red": 0}
    for task in scenario.test:
        gold = str(task.evaluator.answer)
        assert await reward(scenario, task, None) == 0.0
        assert await reward(scenario, task, "   ") == 0.0
        assert await reward(scenario, task, gold + " It is waterproof.") == pytest.approx(0.5)
        assert await reward(scenario, task, gold + " Ships free." + " And more." * 30) == pytest.approx(0.25)
        for kind, factor in (("dislike", 0.5), ("red", 0.3)):
            sentence = disliked_sentence(scenario, task, kind == "red")
            if sentence:
                checked[kind] += 1
                assert await reward(scenario, task, f"{gold} {sentence}") == pytest.approx(factor)
    assert checked["dislike"] > 10 and checked["red"] > 10


async def test_grade_records_judge_and_breakdown(pitch_scenarios: dict[str, Scenario]) -> None:
    scenario = pitch_scenarios["pitch_l1"]
    task = scenario.test[0]
    grade = await DOMAIN.grade(scenario.environment, task, DOMAIN.new_world(scenario.environment, task),
                               {"pitch": str(task.evaluator.answer)}, None)
    assert grade.judge == "lexicon"
    assert grade.details["score"] == 100.0
    assert set(grade.details["labels"]) == set(attribute_weights(scenario.environment, task))
    assert grade.details["weights_from"] == "profile"
    assert grade.details["customer_key"] == task.evaluator.metadata["customer_key"]


async def test_a_plugged_judge_is_used_and_named(pitch_scenarios: dict[str, Scenario]) -> None:
    class AllMentioned:
        name = "fake-llm"

        async def assess(self, request: JudgeRequest) -> JudgeVerdict:
            return JudgeVerdict({item.attribute: "mentioned" for item in request.items}, (), self.name)

    scenario = pitch_scenarios["pitch_l1"]
    task = scenario.test[0]
    grade = await DOMAIN.grade(scenario.environment, task, DOMAIN.new_world(scenario.environment, task),
                               {"pitch": "anything"}, AllMentioned())
    assert grade.judge == "fake-llm"
    assert grade.reward < 1.0  # every test sheet carries something the customer dislikes


def test_judge_request_shows_the_sheet_not_the_profile(pitch_scenarios: dict[str, Scenario]) -> None:
    scenario = pitch_scenarios["pitch_l2"]
    task = scenario.test[0]
    request = judge_request(task, "a pitch")
    product = task.evaluator.metadata["product"]
    assert request.product == f"{product['name']} ({product['category']})"
    assert [item.attribute for item in request.items] == list(attribute_weights(scenario.environment, task))
    assert all(f"  - {item.fact}" in task.instruction for item in request.items)
    assert request.pitch == "a pitch"
