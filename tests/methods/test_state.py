"""Every registered method: `load(state())` gives an identical next context and identical learning,
and the state is plain, deterministic JSON without floats."""

from __future__ import annotations

import re

import orjson
import pytest

from methods.base import Method, MethodSetup, MethodSpec
from methods.registry import METHOD_REGISTRY
from simulators.model_api import ModelRequest
from simulators.protocol import JSON
from tests.methods.fakes import CannedModel, record, view

LEARNERS = ("icl_full", "rag", "rag_recency", "lessons", "playbook", "drift_rules")


def universal(request: ModelRequest) -> str:
    """One reply every model-using method can learn from, varied by the episode it is about."""
    match = re.search(r"stream position (\d+)", request.messages[0].content)
    n = match.group(1) if match else "0"
    return orjson.dumps({
        "lessons": [{"title": f"Lesson {n}", "when": "refunds", "do": f"check item {n}"}],
        "right": ["ok"], "wrong": [], "tags": [{"id": "b1", "tag": "helpful"}],
        "ops": [{"op": "add", "text": f"Bullet about case {n}"}],
        "evidence": [{"id": "r1", "verdict": "contradicts" if n in ("3", "4") else "supports"}],
        "new_rules": [{"rule": f"Rule for item {n}", "alternative": "the documents"}],
    }).decode()


def build(spec: MethodSpec) -> Method:
    client = CannedModel(universal) if spec.uses_model else None
    bulletins = (lambda position: f"bulletin at {position}") if spec.sees_bulletin else None
    return spec.build(MethodSetup("retail_l1", "retail", client=client, bulletins=bulletins))


async def teach(method: Method, positions: range) -> None:
    bodies = ["Refund order #W1 please.", "Exchange the shoes in order #W2.", "Cancel order #W3."]
    records = [record(p, bodies[p % 3], reward=(p % 2) * 1.0, observation=f"seen {p}") for p in positions]
    for start in range(0, len(records), 2):
        await method.learn(records[start:start + 2])


def floats_in(value: JSON) -> list[float]:
    if isinstance(value, float):
        return [value]
    if isinstance(value, dict):
        return [f for v in value.values() for f in floats_in(v)]
    if isinstance(value, list):
        return [f for v in value for f in floats_in(v)]
    return []


@pytest.mark.parametrize("name", sorted(METHOD_REGISTRY))
async def test_load_of_state_gives_the_same_next_context(name: str) -> None:
    spec = METHOD_REGISTRY[name]
    method = build(spec)
    await teach(method, range(1, 8))
    encoded = orjson.dumps(method.state())
    assert floats_in(orjson.loads(encoded)) == []
    restored = build(spec)
    restored.load(orjson.loads(encoded))
    tasks = [view(8, "Refund order #W9."), view(8, "Exchange shoes."), view(8, "Something unrelated.")]
    contexts = [method.context(t) for t in tasks]
    assert [restored.context(t) for t in tasks] == contexts
    assert orjson.dumps(restored.state()) == encoded
    if name in LEARNERS:
        assert contexts[0], f"{name} learned nothing to show"
    await teach(method, range(8, 12))
    await teach(restored, range(8, 12))
    assert orjson.dumps(restored.state()) == orjson.dumps(method.state())
    assert [restored.context(t) for t in tasks] == [method.context(t) for t in tasks]


@pytest.mark.parametrize("name", sorted(METHOD_REGISTRY))
def test_a_fresh_state_round_trips(name: str) -> None:
    spec = METHOD_REGISTRY[name]
    method, restored = build(spec), build(spec)
    restored.load(orjson.loads(orjson.dumps(method.state())))
    assert restored.context(view(1, "x")) == method.context(view(1, "x"))


@pytest.mark.parametrize("name", [*LEARNERS, "tabular"])
async def test_describe_reads_a_learned_state_back_and_says_nothing_of_an_empty_one(name: str) -> None:
    spec = METHOD_REGISTRY[name]
    assert spec.describe is not None, f"{name} learns, so `shiftbench state` needs its describe"
    method = build(spec)
    assert spec.describe(method.state()) == ""
    await teach(method, range(1, 8))
    text = spec.describe(method.state())
    if name == "tabular":  # these records carry no tool calls to learn a rule from
        return
    assert ("[b1]" if name == "playbook" else "t=7") in text, text  # the playbook's bullets carry no position
    assert text.count("\n") < len(orjson.dumps(method.state(), option=orjson.OPT_INDENT_2).splitlines())


def test_methods_that_learn_nothing_have_nothing_to_describe() -> None:
    assert all(spec.learns or spec.describe is None for spec in METHOD_REGISTRY.values())
