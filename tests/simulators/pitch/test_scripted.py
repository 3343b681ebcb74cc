"""The scripted writer through the real agent loop: right with the bulletin, wrong with the docs."""

from __future__ import annotations

import pytest

from simulators.domains.pitch import DOMAIN
from simulators.protocol import Scenario
from tests.support import category_scores, run_task

NAMES = ("pitch_l1", "pitch_l2", "pitch_l3")


@pytest.mark.parametrize("name", NAMES)
async def test_oracle_scores_at_least_99(pitch_scenarios: dict[str, Scenario], name: str) -> None:
    scores = await category_scores(pitch_scenarios[name], DOMAIN, "oracle", with_bulletin=True)
    assert set(scores) == {"hidden"}
    assert scores["hidden"] >= 99


@pytest.mark.parametrize("name", NAMES)
async def test_docs_only_scores_at_most_35(pitch_scenarios: dict[str, Scenario], name: str) -> None:
    scores = await category_scores(pitch_scenarios[name], DOMAIN, "docs", with_bulletin=False)
    assert scores["hidden"] <= 35


async def test_episode_reads_the_policy_then_finishes(pitch_scenarios: dict[str, Scenario]) -> None:
    scenario = pitch_scenarios["pitch_l3"]
    result = await run_task(scenario, DOMAIN, scenario.test[0], "oracle", with_bulletin=True)
    assert [step.action_name for step in result.record.steps] == ["read_docs", "finish"]
    assert result.record.end_reason == "finished"
    assert result.record.finish_arguments == {"pitch": scenario.test[0].evaluator.answer}
