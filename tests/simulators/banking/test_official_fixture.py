"""A hand-written dataset in the public export's layout runs unchanged through world and grader."""

from __future__ import annotations

from pathlib import Path

import pytest

from simulators.dataset import load_dataset
from simulators.domains.banking import DOMAIN
from simulators.protocol import Scenario
from tests.simulators.banking.test_grading import Call, gold, reward
from tests.support import run_task

ROOT = Path(__file__).resolve().parents[2] / "fixtures" / "official"


@pytest.fixture(scope="module")
def official() -> Scenario:
    return load_dataset(ROOT, only=["banking_l2"]).scenarios["banking_l2"]


async def test_gold_answers_grade_one(official: Scenario) -> None:
    assert len(official.serving) == 6 and len(official.test) == 2
    for task in official.serving + official.test:
        assert await reward(official, task, gold(task)) == 1.0, task.task_id


async def test_wrong_answers_grade_zero(official: Scenario) -> None:
    by_case = {t.evaluator.metadata["case_id"]: t for t in official.serving + official.test}
    wrong: dict[str, list[Call]] = {
        "TXN-455102": [("escalate_case", {"case_id": "TXN-455102", "reason": "daily_cap"})],
        "TXN-490318": [("execute_leg", {"case_id": "TXN-490318", "leg": 1})],
        "TXN-533871": [("approve_case", {"case_id": "TXN-533871"})],
        "LIM-462590": [("escalate_case", {"case_id": "LIM-462590", "reason": "account_standing"})],
        "LIM-577046": [("deny_case", {"case_id": "LIM-577046", "reason": "cap_exceeded"})],
        "TRF-420881": [("escalate_case", {"case_id": "TRF-420881", "reason": "reportable_amount"})],
        "TRF-508216": [("decide_batch", {"case_id": "TRF-508216", "decisions": [
            {"line": 1, "action": "approve"}, {"line": 2, "action": "approve"},
            {"line": 3, "action": "escalate", "reason": "reportable_amount"}]})],
        "TRF-561734": [("escalate_case", {"case_id": "TRF-561734", "reason": "new_payee_review"})],
    }
    for case_id, calls in wrong.items():
        assert await reward(official, by_case[case_id], calls) == 0.0, case_id


async def test_scripted_agent_finishes_without_a_policy_block(official: Scenario) -> None:
    """The export's policy.md has no block: the planner decides by an empty policy and finishes."""
    for task in official.serving + official.test:
        result = await run_task(official, DOMAIN, task, "docs", with_bulletin=False)
        assert result.record.end_reason == "finished"
        assert result.record.steps[-1].action_name == "finish"
