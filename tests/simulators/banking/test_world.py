"""The episode world: scope, what the agent sees, finality, and that the environment never changes."""

from __future__ import annotations

import copy

import orjson
import pytest

from simulators.domains.banking import DOMAIN
from simulators.domains.banking.world import BankingWorld
from simulators.errors import ToolError
from simulators.protocol import JSON, Evaluator, ScenarioEnvironment, Task, Window
from tests.simulators.banking.conftest import built

WORLD: dict[str, JSON] = {
    "accounts": {"ACC-100001": {"account_id": "ACC-100001", "today_total": 0.0, "standing": "good"},
                 "ACC-100002": {"account_id": "ACC-100002"}},
    "merchants": {"MER-101": {"merchant_id": "MER-101", "category": "travel", "region": "domestic"}},
    "payees": {"PAY-201": {"payee_id": "PAY-201", "added_days_ago": 5},
               "PAY-202": {"payee_id": "PAY-202", "added_days_ago": 400}},
    "transactions": {"TXN-300001": {"case_id": "TXN-300001", "kind": "card_transaction", "account_id": "ACC-100001",
                                    "merchant_id": "MER-101", "amount": 10.0, "status": "pending", "reason": None}},
    "limit_requests": {},
    "transfers": {
        "TRF-400001": {"case_id": "TRF-400001", "kind": "outbound_transfer", "account_id": "ACC-100002",
                       "legs": [{"leg": 1, "payee_id": "PAY-201", "amount": 9000.0},
                                {"leg": 2, "payee_id": "PAY-202", "amount": 8500.0}],
                       "status": "pending", "reason": None,
                       "_accept": ["new_payee_review", "reportable_amount"]},
        "TRF-400002": {"case_id": "TRF-400002", "kind": "payment_batch", "account_id": "ACC-100002",
                       "lines": [{"line": n, "payee_id": p, "amount": 50.0, "status": "pending", "reason": None}
                                 for n, p in ((1, "PAY-201"), (2, "PAY-202"))],
                       "status": "pending"},
    },
}


def world_for(case_id: str, world: dict[str, JSON] = WORLD) -> BankingWorld:
    environment = ScenarioEnvironment("", (), {}, world, (Window(0, 1, ""),))
    task = Task("t", "banking_l2", "banking", "L2", "test", 0, 1, "hidden", f"Current timestamp: 1\n\nCase {case_id}.",
                Evaluator("adapt", "f", (), None, {}))
    made = DOMAIN.new_world(environment, task)
    assert isinstance(made, BankingWorld)
    return made


def test_an_episode_sees_every_record_but_only_its_own_case() -> None:
    """engine/env.py `apply_episode_view`: the shared tables whole, the case tables scoped to the episode."""
    world = world_for("TRF-400001")
    case = orjson.loads(world.call("get_case_details", {"case_id": "TRF-400001"}))
    assert "_accept" not in case and case["legs"][0]["payee_id"] == "PAY-201"
    assert orjson.loads(world.call("get_payee_details", {"payee_id": "PAY-202"}))["added_days_ago"] == 400
    assert orjson.loads(world.call("get_account_details", {"account_id": "ACC-100001"}))["standing"] == "good"
    assert orjson.loads(world.call("get_merchant_details", {"merchant_id": "MER-101"}))["category"] == "travel"
    with pytest.raises(ToolError, match="^case not found$"):
        world.call("get_case_details", {"case_id": "TXN-300001"})


def test_scope_falls_back_to_the_evaluator_metadata() -> None:
    environment = ScenarioEnvironment("", (), {}, WORLD, (Window(0, 1, ""),))
    task = Task("t", "banking_l2", "banking", "L2", "test", 0, 1, "hidden", "Current timestamp: 1\n\nNo id here.",
                Evaluator("adapt", "f", (), None, {"case_id": "TXN-300001"}))
    assert "TXN-300001" in DOMAIN.new_world(environment, task).call("get_case_details", {"case_id": "TXN-300001"})


def test_equivalent_reasons_land_on_one_state() -> None:
    first, second = world_for("TRF-400001"), world_for("TRF-400001")
    first.call("escalate_case", {"case_id": "TRF-400001", "reason": "reportable_amount"})
    second.call("escalate_case", {"case_id": "TRF-400001", "reason": "new_payee_review"})
    assert first.snapshot() == second.snapshot()


def test_decisions_are_final() -> None:
    world = world_for("TXN-300001")
    world.call("approve_case", {"case_id": "TXN-300001"})
    with pytest.raises(ToolError, match="^case already approved — decisions are final$"):
        world.call("deny_case", {"case_id": "TXN-300001", "reason": "over_limit"})
    snapshot = world.snapshot()
    assert snapshot["cases"]["TXN-300001"]["status"] == "approved" and set(snapshot) == {"cases"}


def test_forms_and_arguments_are_checked_before_anything_is_written() -> None:
    legs, batch = world_for("TRF-400001"), world_for("TRF-400002")
    with pytest.raises(ToolError, match="execute_leg"):
        legs.call("approve_case", {"case_id": "TRF-400001"})
    with pytest.raises(ToolError, match="legs"):
        legs.call("execute_leg", {"case_id": "TRF-400001", "leg": 3})
    with pytest.raises(ToolError, match="decide_batch"):
        batch.call("deny_case", {"case_id": "TRF-400002", "reason": "restricted_payee"})
    bad_batches: list[JSON] = [
        [{"line": 1, "action": "approve"}],
        [{"line": 2, "action": "approve"}, {"line": 2, "action": "approve"}],
        [{"line": 1, "action": "approve"}, {"line": 2, "action": "deny"}],
        [{"line": 1, "action": "approve"}, {"line": 2, "action": "cancel"}],
        "all approve",
    ]
    for decisions in bad_batches:
        with pytest.raises(ToolError):
            batch.call("decide_batch", {"case_id": "TRF-400002", "decisions": decisions})
    assert legs.snapshot()["cases"]["TRF-400001"]["status"] == "pending"
    assert batch.snapshot()["cases"]["TRF-400002"]["status"] == "pending"
    batch.call("decide_batch", {"case_id": "TRF-400002", "decisions": [
        {"line": 2, "action": "escalate", "reason": "new_payee_review"}, {"line": 1, "action": "approve"}]})
    settled = batch.snapshot()["cases"]["TRF-400002"]
    assert settled["status"] == "settled"
    assert [(line["status"], line["reason"]) for line in settled["lines"]] == [
        ("approved", None), ("escalated", "new_payee_review")]


def test_episodes_never_change_the_environment() -> None:
    scenario = built("banking_l2")
    before = copy.deepcopy(scenario.environment.world)
    for task in scenario.test[:40]:
        world = DOMAIN.new_world(scenario.environment, task)
        for action in task.evaluator.actions:
            world.call(action.name, action.kwargs)
        snapshot = world.snapshot()
        snapshot["cases"].clear()  # a snapshot is a copy too
    assert scenario.environment.world == before


def test_unknown_tool_is_an_error() -> None:
    with pytest.raises(ToolError, match="not available"):
        world_for("TXN-300001").call("refund_case", {})
