"""The built-in banking scenarios: determinism, exact counts, window and task structure."""

from __future__ import annotations

import re
from collections import Counter

import pytest

from simulators.dataset import task_row
from simulators.domains.banking import DOMAIN
from simulators.policy_block import parse_policy_blocks
from simulators.protocol import Scenario
from tests.simulators.banking.conftest import SCENARIOS, built

COUNTS = {"banking_l1": (4, 336, 178), "banking_l2": (5, 500, 387), "banking_l3": (6, 600, 551)}


def _rows(scenario: Scenario) -> list[dict[str, object]]:
    return [task_row(t) for t in scenario.serving + scenario.test]


@pytest.mark.parametrize("name", SCENARIOS)
def test_same_seed_same_scenario_other_seed_differs(name: str) -> None:
    first, again, other = built(name), DOMAIN.generate(name, 0), built(name, 1)
    assert _rows(first) == _rows(again)
    assert first.environment == again.environment
    assert _rows(first) != _rows(other)
    assert first.environment.world != other.environment.world


def test_exact_counts(scenario: Scenario) -> None:
    windows, serving, test = COUNTS[scenario.name]
    assert (len(scenario.environment.windows), len(scenario.serving), len(scenario.test)) == (windows, serving, test)
    assert scenario.tier == f"L{scenario.name[-1]}" and scenario.domain == "banking"


def test_windows_and_timestamps(scenario: Scenario) -> None:
    windows = scenario.environment.windows
    assert [t.timestamp for t in scenario.serving] == list(range(1, len(scenario.serving) + 1))
    for task in scenario.serving:
        assert scenario.window_of_position(task.timestamp).window == task.window
    for window in windows:
        serving = [t for t in scenario.serving if t.window == window.window]
        assert serving[0].timestamp == window.first_position
        last = serving[-1].timestamp
        assert {t.timestamp for t in scenario.test if t.window == window.window} == {last}


def test_every_test_window_has_both_categories(scenario: Scenario) -> None:
    per_window = Counter((t.window, t.category) for t in scenario.test)
    for window in scenario.environment.windows:
        assert per_window[(window.window, "hidden")] >= 5
        assert per_window[(window.window, "fully_specified")] >= 5


def test_task_lines(scenario: Scenario) -> None:
    ids = [t.task_id for t in scenario.serving + scenario.test]
    assert len(set(ids)) == len(ids)
    for task in scenario.serving + scenario.test:
        assert re.fullmatch(rf"bank{scenario.name[-1]}_[0-9a-f]{{10}}", task.task_id)
        assert task.instruction.startswith(f"Current timestamp: {task.timestamp}\n\n")
        expected = "hidden" if task.evaluator.slice == "adapt" else "fully_specified"
        assert task.category == expected and task.evaluator.slice in ("adapt", "general", "reopen")
        assert task.evaluator.answer is None and len(task.evaluator.actions) == 1
        assert task.evaluator.metadata["case_id"] in task.instruction


def test_l3_has_reopened_rules() -> None:
    assert Counter(t.evaluator.slice for t in built("banking_l3").test)["reopen"] > 0


def test_multi_part_forms_only_from_l2(scenario: Scenario) -> None:
    forms = Counter(t.evaluator.metadata["form"] for t in scenario.serving + scenario.test)
    if scenario.name == "banking_l1":
        assert set(forms) == {"single"}
        assert "execute_leg" not in scenario.environment.tool_names()
    else:
        assert forms["legs"] > 20 and forms["batch"] > 20
        assert {"execute_leg", "decide_batch"} <= scenario.environment.tool_names()


def test_documents_and_bulletins_carry_complete_blocks(scenario: Scenario) -> None:
    environment = scenario.environment
    documented = parse_policy_blocks(environment.docs["policy"])
    assert len(documented) == 1 and environment.docs["policy"].rstrip().endswith("```")
    for window in environment.windows:
        blocks = parse_policy_blocks(window.oracle_bulletin)
        assert len(blocks) == 1
        assert set(documented[0]) <= set(blocks[0])  # overlays every documented rule


def test_tools_and_world_follow_the_public_shapes(scenario: Scenario) -> None:
    environment = scenario.environment
    assert environment.tool_schema("finish") == {"type": "object", "properties": {}, "required": []}
    assert environment.tool_schema("deny_case")["required"] == ["case_id", "reason"]  # type: ignore[index]
    world = environment.world
    assert set(world) == {"accounts", "merchants", "payees", "transactions", "limit_requests", "transfers"}
    patterns = {"accounts": r"ACC-\d{6}", "merchants": r"MER-\d{3}", "payees": r"PAY-\d{3}",
                "transactions": r"TXN-\d{6}", "limit_requests": r"LIM-\d{6}", "transfers": r"TRF-\d{6}"}
    for table, pattern in patterns.items():
        assert world[table] and all(re.fullmatch(pattern, key) for key in world[table])
    assert all(case["status"] == "pending" for table in ("transactions", "limit_requests", "transfers")
               for case in world[table].values())


def test_unknown_scenario_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown banking scenario"):
        DOMAIN.generate("banking_l9", 0)
