"""Grading: gold replays score 1.0 on every task; each way of getting a task wrong scores 0."""

from __future__ import annotations

import pytest

from simulators.domains.retail.grader import check_answer
from simulators.errors import ToolError
from simulators.protocol import Action, Scenario, Task

from .conftest import SCENARIOS
from .helpers import gold_finish, grade, world_after


def _find(scenario: Scenario, wanted: str, refusal: bool | None = None) -> Task:
    for task in scenario.test:
        is_refusal = isinstance(task.evaluator.answer, dict) and task.evaluator.answer.get("kind") == "refuse"
        if task.evaluator.family.startswith(wanted) and (refusal is None or is_refusal == refusal):
            return task
    raise AssertionError(f"no task of family {wanted}")


@pytest.mark.parametrize("name", SCENARIOS)
async def test_gold_scores_one_on_every_task(scenarios: dict[str, Scenario], name: str) -> None:
    scenario = scenarios[name]
    for task in (*scenario.serving, *scenario.test):
        result = await grade(scenario, task, task.evaluator.actions, gold_finish(task))
        assert result.reward == 1.0, (task.task_id, task.evaluator.family, result.details)


async def test_a_wrong_reason_code_scores_zero(scenarios: dict[str, Scenario]) -> None:
    scenario = scenarios["retail_l1"]
    task = _find(scenario, "cancel.payment", refusal=True)
    assert (await grade(scenario, task, (), {"decision": "refuse", "reason": "invalid_status"})).reward == 0.0
    assert (await grade(scenario, task, (), gold_finish(task))).reward == 1.0


async def test_an_extra_write_scores_zero(scenarios: dict[str, Scenario]) -> None:
    scenario = scenarios["retail_l1"]
    task = _find(scenario, "modify_address.plain")
    order_id = task.evaluator.metadata["order_id"]
    cancel = Action("cancel_pending_order", {"order_id": order_id, "reason": "no longer needed"})
    extra = (*task.evaluator.actions, cancel)
    assert (await grade(scenario, task, extra, {})).reward == 0.0
    refused = _find(scenario, "cancel.payment", refusal=True)
    cancelled = (Action("cancel_pending_order", {"order_id": refused.evaluator.metadata["order_id"],
                                                 "reason": "no longer needed"}),)
    assert (await grade(scenario, refused, cancelled, gold_finish(refused))).reward == 0.0


async def test_a_write_to_another_customers_order_is_refused_and_scores_zero(scenarios: dict[str, Scenario]) -> None:
    scenario = scenarios["retail_l1"]
    task = _find(scenario, "cancel.plain")
    stranger = next(t for t in scenario.test if t.evaluator.family == "cancel.plain" and t is not task)
    world = world_after(scenario.environment, task, ())
    before = world.snapshot()
    wrong = Action("cancel_pending_order", {"order_id": stranger.evaluator.metadata["order_id"],
                                            "reason": "no longer needed"})
    with pytest.raises(ToolError):
        world.call(wrong.name, wrong.kwargs)
    assert world.snapshot() == before
    assert scenario.environment.world["orders"][stranger.evaluator.metadata["order_id"]]["status"] == "pending"
    assert (await grade(scenario, task, (), {})).reward == 0.0


async def test_refusing_a_carry_out_task_or_not_finishing_scores_zero(scenarios: dict[str, Scenario]) -> None:
    scenario = scenarios["retail_l2"]
    task = _find(scenario, "return.plain")
    refusal = {"decision": "refuse", "reason": "service_not_offered"}
    assert (await grade(scenario, task, task.evaluator.actions, refusal)).reward == 0.0
    assert (await grade(scenario, task, task.evaluator.actions, None)).reward == 0.0
    assert (await grade(scenario, task, (), {})).reward == 0.0


async def test_quotes_compare_numbers_and_never_write(scenarios: dict[str, Scenario]) -> None:
    scenario = scenarios["retail_l1"]
    task = next(t for t in scenario.test if isinstance(t.evaluator.answer, float) and t.evaluator.answer > 0)
    value = task.evaluator.answer
    assert task.evaluator.actions == ()
    assert (await grade(scenario, task, (), {"answer": value + 0.005})).reward == 1.0
    assert (await grade(scenario, task, (), {"answer": f"${value:.2f}"})).reward == 1.0
    assert (await grade(scenario, task, (), {"answer": value + 0.02})).reward == 0.0
    assert (await grade(scenario, task, (), {"decision": "refuse", "reason": "final_sale"})).reward == 0.0


def test_answer_check_reads_both_value_forms() -> None:
    official = {"kind": "value", "expect": "38.25", "compare": "float"}
    assert check_answer(official, {"answer": "$38.25"})[0]
    assert not check_answer(official, {"answer": "38.25 or 40"})[0]
    assert check_answer({"kind": "value", "expect": "3", "compare": "int"}, {"answer": 3})[0]
    assert not check_answer({"kind": "value", "expect": "3", "compare": "int"}, {"answer": 2.9})[0]
    assert check_answer({"kind": "value", "expect": ["a b"], "compare": "set"}, {"answer": ["A-B"]})[0]
    assert check_answer("gold", {"answer": "Gold"})[0] and not check_answer("gold", {"answer": "silver"})[0]
    assert check_answer(["x", "y"], {"answer": ["y", "x"]})[0]
    assert check_answer(True, {"answer": True})[0] and not check_answer(True, {"answer": "true"})[0]
    assert check_answer({"kind": "refuse", "reasons": ["not_found"]}, {"decision": "refuse", "reason": "not_found"})[0]
    assert not check_answer({"kind": "refuse", "reasons": ["not_found"]}, {"reason": "not_found"})[0]
