"""The scripted agent through the real agent loop: oracle right everywhere, docs-only wrong exactly
where the documents are stale."""

from __future__ import annotations

from simulators.domain import ToolExchange
from simulators.domains.banking import DOMAIN
from simulators.protocol import Scenario
from tests.simulators.banking.conftest import built
from tests.support import category_scores, run_task


async def test_oracle_is_right_on_every_setting(scenario: Scenario) -> None:
    scores = await category_scores(scenario, DOMAIN, "oracle", with_bulletin=True)
    assert set(scores) == {"hidden", "fully_specified"}
    assert min(scores.values()) >= 99, scores


async def test_documents_alone_fail_hidden_tasks_only(scenario: Scenario) -> None:
    scores = await category_scores(scenario, DOMAIN, "docs", with_bulletin=False)
    assert scores["fully_specified"] >= 95 and scores["hidden"] <= 35, scores


async def test_an_episode_reads_looks_up_decides_and_finishes() -> None:
    scenario = built("banking_l2")
    task = next(t for t in scenario.test if t.evaluator.metadata["form"] == "batch")
    result = await run_task(scenario, DOMAIN, task, "oracle", with_bulletin=True)
    names = [step.action_name for step in result.record.steps]
    assert names[:2] == ["read_docs", "get_case_details"] and names[-2:] == ["decide_batch", "finish"]
    assert "get_account_details" in names and "get_payee_details" in names
    assert result.record.end_reason == "finished" and result.grade.reward == 1.0


def test_planner_finishes_gracefully_without_a_case_or_a_policy() -> None:
    assert DOMAIN.next_call("Current timestamp: 3\n\nHello.", {}, []).name == "finish"
    instruction = "Current timestamp: 3\n\nPlease decide TXN-123456."
    first = DOMAIN.next_call(instruction, {"junk": 1}, [])
    assert (first.name, first.arguments) == ("get_case_details", {"case_id": "TXN-123456"})
    failed = [ToolExchange("get_case_details", {"case_id": "TXN-123456"}, "Error: case TXN-123456 not found")]
    assert DOMAIN.next_call(instruction, {}, failed).name == "finish"


def test_planner_never_repeats_a_failed_lookup() -> None:
    instruction = "Current timestamp: 3\n\nPlease decide TXN-123456."
    case = '{"case_id": "TXN-123456", "account_id": "ACC-111111", "merchant_id": "MER-111", "amount": 5.0}'
    history = [ToolExchange("get_case_details", {"case_id": "TXN-123456"}, case),
               ToolExchange("get_account_details", {"account_id": "ACC-111111"}, "Error: account not found"),
               ToolExchange("get_merchant_details", {"merchant_id": "MER-111"}, "Error: merchant not found")]
    decided = DOMAIN.next_call(instruction, {}, history)
    assert (decided.name, decided.arguments) == ("approve_case", {"case_id": "TXN-123456"})
    after = [*history, ToolExchange(decided.name, decided.arguments, "Error: case already approved")]
    assert DOMAIN.next_call(instruction, {}, after).name == "finish"
