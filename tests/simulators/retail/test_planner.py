"""The scripted planner and the policy model it reads: lenient parsing, overlays, graceful endings."""

from __future__ import annotations

from simulators.domain import ToolExchange
from simulators.domains.retail import DOMAIN
from simulators.domains.retail.parsing import parse_instruction
from simulators.domains.retail.vocabulary import TOOL_OP, blocking_reasons, parse_policy
from simulators.domains.retail.world import RetailWorld
from simulators.errors import ToolError
from simulators.policy_block import merged_policy
from simulators.protocol import JSON, Scenario, Task


def _run(scenario: Scenario, task: Task, policy: dict[str, JSON]) -> tuple[list[ToolExchange], dict[str, JSON]]:
    """Drive the planner by hand against a fresh world; return the calls and the finish arguments."""
    world = DOMAIN.new_world(scenario.environment, task)
    assert isinstance(world, RetailWorld)
    history: list[ToolExchange] = []
    for _ in range(30):
        planned = DOMAIN.next_call(task.instruction, policy, history)
        if planned.name == "finish":
            return history, dict(planned.arguments)
        try:
            observation = world.call(planned.name, planned.arguments)
        except ToolError as exc:  # a tool refusal is an observation, as in the tool session
            observation = f"Error: {exc}"
        history.append(ToolExchange(planned.name, planned.arguments, observation))
    raise AssertionError("the planner never finished")


def test_policy_parsing_is_lenient() -> None:
    rules = parse_policy({
        "cancel.payment": {"deny": ["Gift_Card"]},  # op and attribute from the id, default code
        "return.refund_to": {"op": "return", "attribute": "refund_to", "deny": "gift_card"},  # deny not a list
        "teleport.mood": {"deny": ["grumpy"]},  # unknown operation
        "exchange.category": ["electronics"],  # not an object
    })
    assert [rule.rule_id for rule in rules] == ["cancel.payment"]
    assert blocking_reasons("cancel", {"payment": frozenset({"gift_card"})}, rules) == ["service_not_offered"]
    assert blocking_reasons("cancel", {"payment": frozenset({"paypal"})}, rules) == []


def test_a_later_block_overrides_rule_by_rule(scenarios: dict[str, Scenario]) -> None:
    scenario = scenarios["retail_l1"]
    docs = scenario.environment.docs["policy"]
    learned = '```shiftbench-policy\n{"return.item_class": {"deny": []}}\n```'
    merged = merged_policy(docs, learned)
    assert merged["return.item_class"] == {"deny": []}
    assert merged["cancel.status"] == merged_policy(docs)["cancel.status"]
    task = next(t for t in scenario.test if t.evaluator.family == "return.item_class")
    _, docs_finish = _run(scenario, task, merged_policy(docs))
    history, learned_finish = _run(scenario, task, merged)
    assert docs_finish == {"decision": "refuse", "reason": "final_sale"}
    assert learned_finish == {} and history[-1].name == "return_delivered_order_items"


def test_every_generated_message_parses_into_its_gold_operations(scenarios: dict[str, Scenario]) -> None:
    for scenario in scenarios.values():
        for task in scenario.test:
            parsed = parse_instruction(task.instruction)
            assert parsed is not None, task.instruction
            ops = [leg.op for leg in parsed.legs]
            assert len(ops) == (2 if ">" in task.evaluator.family else 1), task.instruction
            assert all(TOOL_OP[action.name] in ops for action in task.evaluator.actions), task.instruction


def test_ends_gracefully_without_a_policy_or_a_readable_request(scenarios: dict[str, Scenario]) -> None:
    scenario = scenarios["retail_l3"]
    for task in scenario.test[:40]:
        history, _ = _run(scenario, task, {})
        assert len(history) < 12
    assert DOMAIN.next_call("Hello there", {}, []).name == "finish"
    garbled = scenario.test[0].instruction.replace("#W", "order ")
    assert DOMAIN.next_call(garbled, {}, []).name == "finish"


def test_a_refused_write_ends_with_a_refusal() -> None:
    text = ('Current timestamp: 1\n\nCustomer: Ana Sol (zip 78701) writes:\n'
            '"Please cancel order #W1000001; I no longer need it."')
    write = ToolExchange("cancel_pending_order", {"order_id": "#W1000001", "reason": "no longer needed"},
                         "Error: the order is 'delivered'; this operation needs one of: pending")
    planned = DOMAIN.next_call(text, {}, [write])
    assert planned.name == "finish" and planned.arguments == {"decision": "refuse", "reason": "invalid_status"}
