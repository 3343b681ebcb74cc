"""tabular end to end: the real engine, the scripted agent, a built scenario; state and context shape."""

from __future__ import annotations

from collections import defaultdict

import orjson
import pytest

from methods.base import MethodSetup
from methods.registry import METHOD_REGISTRY
from methods.tabular import HEADER, TABULAR, TabularMethod
from runner.models.scripted import ScriptedModel
from runner.schedule.episode import run_episode
from simulators.policy_block import parse_policy_blocks
from simulators.registry import get_domain
from simulators.suite import generate_scenarios
from tests.methods.fakes import record, view


async def sweep(scenario_name: str, learner: bool) -> tuple[dict[str, float], list[TabularMethod]]:
    """Serving stream learned in order, each window's test set against the state frozen at its end, as
    the runner does at block size 1. Returns mean reward x 100 per category, and a restored copy of the
    method after each window (load of state) for the identity checks."""
    scenario = generate_scenarios(0, [scenario_name])[0]
    domain = get_domain(scenario.domain)
    model = ScriptedModel("oracle", domains={scenario.domain: domain})
    method = TabularMethod(scenario.domain)
    rewards: dict[str, list[float]] = defaultdict(list)
    restored: list[TabularMethod] = []
    windows = sorted({task.window for task in scenario.serving})
    for window in windows:
        for task in (t for t in scenario.serving if t.window == window):
            if not learner:
                break
            result = await run_episode(task, scenario.environment, domain, model,
                                       method_context=method.context(task.view()))
            await method.learn([result.record])
        copy = TabularMethod(scenario.domain)
        copy.load(orjson.loads(orjson.dumps(method.state())))
        restored.append(copy)
        for task in (t for t in scenario.test if t.window == window):
            context = method.context(task.view())
            assert copy.context(task.view()) == context
            result = await run_episode(task, scenario.environment, domain, model, method_context=context)
            rewards[task.category].append(result.grade.reward)
    return {category: 100 * sum(values) / len(values) for category, values in rewards.items()}, restored


@pytest.mark.parametrize("scenario", ["banking_l1", "retail_l1", "pitch_l1"])
async def test_learned_test_scores_beat_blind_by_a_wide_margin(scenario: str) -> None:
    blind, _ = await sweep(scenario, learner=False)
    learned, restored = await sweep(scenario, learner=True)
    assert learned["hidden"] >= blind["hidden"] + 60, (learned, blind)
    if "fully_specified" in blind:
        assert learned["fully_specified"] >= blind["fully_specified"] - 3, (learned, blind)
    # Every domain, pitch included, writes its beliefs as a policy block for a real task once it learned.
    last = generate_scenarios(0, [scenario])[0].test[-1].view()
    assert any(parse_policy_blocks(m.context(last)) for m in restored[1:])


def test_registered_without_model_calls() -> None:
    assert METHOD_REGISTRY["tabular"] is TABULAR
    assert not TABULAR.uses_model and TABULAR.learns
    method = TABULAR.build(MethodSetup("banking_l1", "banking"))
    assert isinstance(method, TabularMethod) and method.context(view(1, "x", "banking")) == ""


async def test_the_context_is_one_policy_block_under_a_short_header() -> None:
    method = TabularMethod("retail")
    await method.learn([record(1, "Please cancel order #W1234567; I no longer need it.", reward=0.0)])
    assert method.context(view(2, "x")) == ""  # an unreadable episode teaches nothing
    method.adapter.load({"cells": {"cancel|payment|gift_card": [-1, 1, 1, -1, -1, "", {}, {}]}})
    context = method.context(view(2, "x"))
    assert context.startswith(HEADER)
    assert parse_policy_blocks(context) == [{"cancel.payment": {"op": "cancel", "attribute": "payment",
                                                                "deny": ["gift_card"],
                                                                "reason": "service_not_offered"}}]


async def test_an_unknown_domain_learns_nothing_and_writes_nothing() -> None:
    method = TabularMethod("weather")
    await method.learn([record(1)])
    assert method.context(view(2, "x")) == "" and method.state() == {"domain": "weather", "adapter": {}}
