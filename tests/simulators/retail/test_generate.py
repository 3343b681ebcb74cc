"""The built-in retail scenarios: deterministic, exact sizes, well-formed windows, texts and tasks."""

from __future__ import annotations

import re
from collections import Counter

import pytest

from simulators.dataset import task_row
from simulators.domains.retail import DOMAIN
from simulators.domains.retail.generator import COUNTS
from simulators.domains.retail.timeline import DOCUMENTED, active_policy, plan_for
from simulators.domains.retail.vocabulary import parse_policy
from simulators.policy_block import merged_policy, parse_policy_blocks
from simulators.protocol import Scenario

from .conftest import SCENARIOS


def _rows(scenario: Scenario) -> list[dict[str, object]]:
    return [task_row(task) for task in (*scenario.serving, *scenario.test)]


def test_same_seed_same_scenario_other_seed_differs(scenarios: dict[str, Scenario]) -> None:
    again = DOMAIN.generate("retail_l1", 0)
    first = scenarios["retail_l1"]
    assert _rows(again) == _rows(first)
    assert again.environment == first.environment
    other = DOMAIN.generate("retail_l1", 1)
    assert _rows(other) != _rows(first)
    assert other.environment.world != first.environment.world


@pytest.mark.parametrize("name", SCENARIOS)
def test_exact_counts_and_windows(scenarios: dict[str, Scenario], name: str) -> None:
    scenario = scenarios[name]
    windows, serving, test = COUNTS[name]
    assert (len(scenario.environment.windows), len(scenario.serving), len(scenario.test)) == (windows, serving, test)
    assert [w.window for w in scenario.environment.windows] == list(range(windows))
    assert scenario.tier == f"L{name[-1]}"
    assert all(task.tier == scenario.tier and task.domain == "retail" for task in (*scenario.serving, *scenario.test))


@pytest.mark.parametrize("name", SCENARIOS)
def test_every_test_window_has_both_categories(scenarios: dict[str, Scenario], name: str) -> None:
    scenario = scenarios[name]
    for window in scenario.environment.windows:
        found = Counter(task.category for task in scenario.test if task.window == window.window)
        assert found["hidden"] > 0 and found["fully_specified"] > 0, (name, window.window, found)


@pytest.mark.parametrize("name", SCENARIOS)
def test_positions_timestamps_and_categories(scenarios: dict[str, Scenario], name: str) -> None:
    scenario = scenarios[name]
    windows = scenario.environment.windows
    assert [task.timestamp for task in scenario.serving] == list(range(1, len(scenario.serving) + 1))
    for task in scenario.serving:
        assert scenario.window_of_position(task.timestamp).window == task.window
    for window, following in zip(windows, (*windows[1:], None), strict=True):
        last = following.first_position - 1 if following else len(scenario.serving)
        assert {t.timestamp for t in scenario.test if t.window == window.window} == {last}
    for task in (*scenario.serving, *scenario.test):
        assert task.instruction.startswith(f"Current timestamp: {task.timestamp}\n\n")
        assert task.category == ("hidden" if task.evaluator.slice == "adapt" else "fully_specified")
        assert re.fullmatch(r"rt_[0-9a-f]{10}", task.task_id)
    assert len({t.task_id for t in (*scenario.serving, *scenario.test)}) == len(scenario.serving) + len(scenario.test)


@pytest.mark.parametrize("name", SCENARIOS)
def test_bulletins_hold_the_complete_active_policy(scenarios: dict[str, Scenario], name: str) -> None:
    scenario = scenarios[name]
    for window in scenario.environment.windows:
        blocks = parse_policy_blocks(window.oracle_bulletin)
        assert len(blocks) == 1
        expected = active_policy(plan_for(name), window.window)
        assert set(blocks[0]) == set(expected) >= set(DOCUMENTED)
        assert set(parse_policy(blocks[0])) == set(expected.values())
        assert merged_policy(scenario.environment.docs["policy"], window.oracle_bulletin) == blocks[0]


@pytest.mark.parametrize("name", SCENARIOS)
def test_documents_are_stale_in_both_directions(scenarios: dict[str, Scenario], name: str) -> None:
    scenario = scenarios[name]
    documented = merged_policy(scenario.environment.docs["policy"])
    assert set(documented) == set(DOCUMENTED)
    assert scenario.environment.docs["policy"].rstrip().endswith("```")
    hidden = [task for task in scenario.test if task.category == "hidden"]
    refused = Counter(isinstance(task.evaluator.answer, dict) for task in hidden)
    assert refused[True] > 0 and refused[False] > 0  # reality forbids some documented things and allows others


@pytest.mark.parametrize("name", SCENARIOS)
def test_identifiers_follow_the_export_style(scenarios: dict[str, Scenario], name: str) -> None:
    world = scenarios[name].environment.world
    assert all(re.fullmatch(r"#W\d{7}", order_id) for order_id in world["orders"])
    assert all(re.fullmatch(r"[a-z]+_[a-z]+_\d{4}", user_id) for user_id in world["users"])
    for user in world["users"].values():
        for method_id in user["payment_methods"]:
            assert re.fullmatch(r"(gift_card|credit_card|paypal)_\d{7}", method_id)
    for product_id, product in world["products"].items():
        assert re.fullmatch(r"\d{10}", product_id)
        assert all(re.fullmatch(r"\d{10}", item_id) for item_id in product["variants"])


def test_l2_and_l3_have_two_rule_requests_and_l3_reopens(scenarios: dict[str, Scenario]) -> None:
    for name in ("retail_l2", "retail_l3"):
        families = {task.evaluator.family for task in scenarios[name].test if task.category == "hidden"}
        assert any("+" in family or ">" in family for family in families), name
    assert any(task.evaluator.slice == "reopen" for task in scenarios["retail_l3"].test)
    assert all("+" not in t.evaluator.family and ">" not in t.evaluator.family for t in scenarios["retail_l1"].test)


def test_l1_values_appear_only_once_introduced(scenarios: dict[str, Scenario]) -> None:
    scenario = scenarios["retail_l1"]
    world = scenario.environment.world
    category_of = {item_id: product["category"] for product in world["products"].values()
                   for item_id in product["variants"]}
    first_seen: dict[str, int] = {}
    for task in (*scenario.serving, *scenario.test):
        order = world["orders"][task.evaluator.metadata["order_id"]]
        for item in order["items"]:
            category = category_of[item["item_id"]]
            first_seen[category] = min(first_seen.get(category, 99), task.window)
        first_seen[order["status"]] = min(first_seen.get(order["status"], 99), task.window)
    assert first_seen["beauty"] == 2 and first_seen["on hold"] == 3 and first_seen["outdoor"] == 4
