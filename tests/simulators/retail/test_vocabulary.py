"""The retail vocabulary is one public module: its condition type round-trips through its one text
form, and the tabular learner reads the vocabulary's names and rule reader instead of its own."""

from __future__ import annotations

from methods.tabular import retail as tabular
from methods.tabular import retail_evidence
from simulators.domains.retail import vocabulary
from simulators.domains.retail.vocabulary import Condition, parse_policy


def test_a_condition_has_one_text_form() -> None:
    condition = Condition.of("return", "category", "Home Decor|Outdoor")
    assert condition.value == "home decor|outdoor"
    assert condition.key == "return|category|home decor|outdoor"
    assert Condition.from_key(condition.key) == condition  # a value may itself hold the separator


def test_the_tabular_learner_speaks_the_vocabulary() -> None:
    assert retail_evidence.ATTRIBUTES is vocabulary.ATTRIBUTES and retail_evidence.TOOL_OP is vocabulary.TOOL_OP
    assert retail_evidence.POLICY_CODES is vocabulary.POLICY_CODES
    assert set(vocabulary.POLICY_CODES) | set(vocabulary.WORLD_CODES) == set(vocabulary.REFUSAL_CODES)
    block = {"return.category": {"deny": ["Home"], "reason": "window_expired"}, "cancel.payment": {"deny": "x"},
             "teleport.status": {"deny": ["pending"]}}
    adapter = tabular.RetailAdapter()
    adapter.load({"documented": block})
    assert [(rule.op, rule.attribute, rule.denied, rule.reason) for rule in parse_policy(block)] == [
        ("return", "category", frozenset({"home"}), "window_expired")]
    assert adapter.denied(Condition.of("return", "category", "home").key)
    assert not adapter.denied(Condition.of("cancel", "payment", "x").key)  # a malformed rule refuses nothing
