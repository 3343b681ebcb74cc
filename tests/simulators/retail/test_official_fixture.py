"""Hand-written retail_l1, retail_l2 and retail_l3 in the public export's layout load, run through the
world (the reference's tools for each scenario) and grade: gold answers score 1.0 and wrong ones 0."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from simulators.dataset import load_dataset
from simulators.domains.retail import DOMAIN
from simulators.errors import ToolError
from simulators.protocol import Action, Scenario, Task, ToolCall
from simulators.session import ToolSession
from tests.support import run_task

from .helpers import gold_finish, grade, world_after

ROOT = Path(__file__).parents[2] / "fixtures" / "official"


@pytest.fixture(scope="module")
def official() -> Scenario:
    return load_dataset(ROOT, only=["retail_l1"]).scenarios["retail_l1"]


def _task(scenario: Scenario, task_id: str) -> Task:
    return next(t for t in (*scenario.serving, *scenario.test) if t.task_id == task_id)


async def test_gold_answers_score_one(official: Scenario) -> None:
    assert len(official.serving) == 6 and len(official.test) == 4
    for task in (*official.serving, *official.test):
        result = await grade(official, task, task.evaluator.actions, gold_finish(task))
        assert result.reward == 1.0, (task.task_id, result.details)


async def test_wrong_answers_score_zero(official: Scenario) -> None:
    clearance_return = _task(official, "v2_8b41e06c55")
    assert (await grade(official, clearance_return, (), {"decision": "refuse", "reason": "final_sale"})).reward == 0
    to_card = Action("return_delivered_order_items", {"order_id": "#W8830162", "item_ids": ["3391046625"],
                                                      "payment_method_id": "credit_card_5531904",
                                                      "reason": "no longer needed"})
    assert (await grade(official, clearance_return, (to_card,), {})).reward == 0
    split_modify = _task(official, "v2_c2d7a9004e")
    modified = Action("modify_pending_order_items", {"order_id": "#W5519044", "item_ids": ["1184502293"],
                                                     "new_item_ids": ["2650917748"],
                                                     "payment_method_id": "credit_card_2290415"})
    assert (await grade(official, split_modify, (modified,), {})).reward == 0
    assert (await grade(official, split_modify, (), {"decision": "refuse", "reason": "final_sale"})).reward == 0
    quote = _task(official, "v2_b0e9714c62")
    assert (await grade(official, quote, (), {"answer": 45.0})).reward == 0
    assert (await grade(official, quote, (), {"answer": "$38.25"})).reward == 1


async def test_money_moves_as_recorded(official: Scenario) -> None:
    cancel = _task(official, "v2_3f09c1a7d2")
    world = world_after(official.environment, cancel, cancel.evaluator.actions)
    snapshot = world.snapshot()
    assert snapshot["orders"]["#W4102937"]["status"] == "cancelled"
    assert snapshot["users"]["leah_moreno_4821"]["payment_methods"]["gift_card_7702183"]["balance"] == 85.0
    assert official.environment.world["users"]["leah_moreno_4821"]["payment_methods"]["gift_card_7702183"][
        "balance"] == 40.0
    exchange = _task(official, "v2_51e8f3b690")
    order = world_after(official.environment, exchange, exchange.evaluator.actions).snapshot()["orders"]["#W6624810"]
    assert order["status"] == "exchange requested" and order["exchange_price_difference"] == 49.99


def test_episode_view_is_base_orders_plus_its_own(official: Scenario) -> None:
    task = _task(official, "v2_3f09c1a7d2")
    world = world_after(official.environment, task, ())
    assert '"#W0000417"' in world.call("get_order_details", {"order_id": "#W0000417"})
    with pytest.raises(ToolError):
        world.call("get_order_details", {"order_id": "#W8830162"})  # the customer's other order, not this episode's
    user = world.call("get_user_details", {"user_id": "leah_moreno_4821"})
    assert '"orders": ["#W4102937"]' in user  # the reference prints records with json.dumps spacing
    # the reference checks that an order exists in the episode's view, not whose it is
    assert '"ellis_park_0042"' in world.call("get_user_details", {"user_id": "ellis_park_0042"})
    cancelled = world.call("cancel_pending_order", {"order_id": "#W0000417", "reason": "no longer needed"})
    assert '"status": "cancelled"' in cancelled
    assert world.snapshot()["orders"]["#W0000417"]["status"] == "cancelled"


async def test_insufficient_gift_card_is_refused_by_the_world(official: Scenario) -> None:
    task = _task(official, "v2_7a13c6e8d0")
    world = world_after(official.environment, task, ())
    with pytest.raises(ToolError, match="insufficient"):
        world.call("exchange_delivered_order_items", {"order_id": "#W1477609", "item_ids": ["4418820375"],
                                                      "new_item_ids": ["6092274418"],
                                                      "payment_method_id": "gift_card_1184406"})


async def test_scripted_agent_ends_gracefully_without_a_policy_block(official: Scenario) -> None:
    for task in (*official.serving, *official.test):
        result = await run_task(official, DOMAIN, task, "docs", with_bulletin=True)
        assert result.record.end_reason == "finished", task.task_id


async def test_an_over_cap_cancel_is_refused_and_leaves_nothing_so_a_refusal_scores_one(official: Scenario) -> None:
    """The reference's cancel tool refuses a bronze order above $200 (`config_tools.make_cancel_tool`)."""
    task = _task(official, "v2_e4a05b1c39")
    world = DOMAIN.new_world(official.environment, task)
    session = ToolSession(official.environment, world)
    before = world.snapshot()
    tried = session.execute(ToolCall("1", "cancel_pending_order",
                                     json.dumps({"order_id": "#W3058821", "reason": "no longer needed"})))
    assert tried.observation == ("Error: orders with a total above $200 cannot be cancelled for this account "
                                 "(this order: $232.49)")
    assert world.snapshot() == before
    finish = session.execute(ToolCall("2", "finish", json.dumps({"decision": "refuse", "reason": "over_threshold"})))
    assert finish.finished
    result = await DOMAIN.grade(official.environment, task, world, finish.finish_arguments, None)
    assert result.reward == 1.0, result.details


def test_a_silver_return_refunds_ninety_percent_and_records_it(official: Scenario) -> None:
    task = _task(official, "v2_8b41e06c55")  # a silver customer returns an $80.00 item to a gift card
    snapshot = world_after(official.environment, task, task.evaluator.actions).snapshot()
    order = snapshot["orders"]["#W8830162"]
    assert order["return_refund_amount"] == 72.0 and order["payment_history"][-1] == {
        "transaction_type": "refund", "amount": 72.0, "payment_method_id": "gift_card_7702183"}
    assert snapshot["users"]["leah_moreno_4821"]["payment_methods"]["gift_card_7702183"]["balance"] == 112.0


@pytest.mark.parametrize("name", ["retail_l1", "retail_l2", "retail_l3"])
async def test_every_gold_answer_of_every_export_scenario_scores_one(name: str) -> None:
    scenario = load_dataset(ROOT, only=[name]).scenarios[name]
    for task in (*scenario.serving, *scenario.test):
        result = await grade(scenario, task, task.evaluator.actions, gold_finish(task))
        assert result.reward == 1.0, (task.task_id, result.details)
        finished = await run_task(scenario, DOMAIN, task, "docs", with_bulletin=True)
        assert finished.record.end_reason == "finished", task.task_id


async def test_l2_and_l3_tools_enforce_what_l1_leaves_to_the_rules() -> None:
    """L2 splits a card refund of a split-paid order and records modifications; its return tool enforces
    final sale and the window, L3's only the window (`l2|l3/timeline.py`, `mechanical_config`)."""
    both = load_dataset(ROOT, only=["retail_l2", "retail_l3"]).scenarios
    l2, l3 = both["retail_l2"], both["retail_l3"]
    split = _task(l2, "l2_a41c0e9b27")
    order = world_after(l2.environment, split, split.evaluator.actions).snapshot()["orders"]["#W3318207"]
    assert order["return_refund_amount"] == 184.29  # (129.99 + 64.00) x 0.95, gold tier
    assert [(e["amount"], e["payment_method_id"]) for e in order["payment_history"][2:]] == [
        (142.5, "credit_card_6612093"), (41.79, "gift_card_6612095")]
    modified = _task(l2, "l2_b52d1fa038")
    order = world_after(l2.environment, modified, modified.evaluator.actions).snapshot()["orders"]["#W3318208"]
    assert order["modification_history"] == [{"item_id": "4410298761", "new_item_id": "4410298762"}] * 2
    clearance = {"order_id": "#W5561302", "item_ids": ["4410298763"], "payment_method_id": "gift_card_8834217",
                 "reason": "wrong item"}
    with pytest.raises(ToolError, match="final sale"):
        world_after(l2.environment, _task(l2, "l2_e85042d36b"), ()).call("return_delivered_order_items", clearance)
    late = {"order_id": "#W6602716", "item_ids": ["5520193347"], "payment_method_id": "gift_card_7723105",
            "reason": "defective"}
    with pytest.raises(ToolError, match="window"):
        world_after(l3.environment, _task(l3, "l3_2b3c4d5e6f"), ()).call("return_delivered_order_items", late)
    placed = _task(l3, "l3_6f708192a3")
    snapshot = world_after(l3.environment, placed, placed.evaluator.actions).snapshot()
    assert [(e["amount"], e["payment_method_id"]) for e in snapshot["orders"]["#W9000002"]["payment_history"]] == [
        (12.0, "gift_card_7723105"), (84.5, "credit_card_7723104")]
