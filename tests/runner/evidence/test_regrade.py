"""Re-grading from the record alone: replayed tool calls, and an LLM judge's journaled verdict."""

from __future__ import annotations

from pathlib import Path

from runner.evidence.regrade import regrade
from simulators.dataset import load_dataset
from simulators.registry import get_domain
from tests.support import run_task


async def test_an_llm_judged_pitch_is_rescored_from_its_recorded_labels(built_suite: Path) -> None:
    scenario = load_dataset(built_suite, only=("pitch_l1",)).scenarios["pitch_l1"]
    domain = get_domain("pitch")
    task = scenario.test[0]
    result = await run_task(scenario, domain, task, "oracle", with_bulletin=True)
    details = dict(result.grade.details)
    assert result.grade.reward > 0 and details["labels"]

    same = await regrade(domain, scenario.environment, task, result.record, result.grade.reward, "llm:judge-model",
                         details)
    assert same.matches and same.judge == "recorded:llm:judge-model"

    contradicted = {**details, "labels": {attribute: "contradicted" for attribute in details["labels"]}}
    other = await regrade(domain, scenario.environment, task, result.record, result.grade.reward, "llm:judge-model",
                          contradicted)
    assert not other.matches and other.regraded < result.grade.reward


async def test_a_replayed_retail_episode_grades_as_it_did(built_suite: Path) -> None:
    scenario = load_dataset(built_suite, only=("retail_l1",)).scenarios["retail_l1"]
    domain = get_domain("retail")
    for task in scenario.test[:6]:
        result = await run_task(scenario, domain, task, "oracle", with_bulletin=True)
        again = await regrade(domain, scenario.environment, task, result.record, result.grade.reward,
                              result.grade.judge, result.grade.details)
        assert again.matches and again.judge == "replay"
        flipped = await regrade(domain, scenario.environment, task, result.record, 1.0 - result.grade.reward,
                                result.grade.judge, result.grade.details)
        assert not flipped.matches
