"""Binary grading: the final world must equal the gold replay, and the answer must be right.

The gold actions are replayed on a fresh world with the same per-episode view, and the two snapshots
are compared by `canonical_hash`. The answer check follows the protocol: a carry-out task (answer
null) passes unless the agent declared a refusal; a refusal needs a declared refusal citing one of the
accepted codes; a value answer is compared by type (numbers within 0.01). The public export's value
form `{"kind": "value", "expect": ..., "compare": int|float|str_norm|set}` is read too.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from simulators.canonical import canonical_hash
from simulators.domain import DomainWorld, Grade
from simulators.domains.retail.world import new_world
from simulators.errors import ToolError
from simulators.protocol import JSON, ScenarioEnvironment, Task

__all__ = ["check_answer", "grade_episode", "replay_gold"]

_NUMBER = re.compile(r"-?\d+(?:\.\d+)?")


def grade_episode(environment: ScenarioEnvironment, task: Task, world: DomainWorld,
                  finish_arguments: Mapping[str, JSON] | None) -> Grade:
    if finish_arguments is None:
        return Grade(0.0, "replay", {"why": "the episode ended without a valid finish"})
    try:
        gold = replay_gold(environment, task)
    except ToolError as exc:
        return Grade(0.0, "replay", {"why": f"gold replay failed (dataset error): {exc}"})
    state_ok = canonical_hash(world.snapshot()) == canonical_hash(gold)
    answer_ok, why = check_answer(task.evaluator.answer, finish_arguments)
    details: dict[str, JSON] = {"state": state_ok, "answer": answer_ok}
    if not answer_ok:
        details["why"] = why
    elif not state_ok:
        details["why"] = "the final world differs from the gold replay"
    return Grade(1.0 if state_ok and answer_ok else 0.0, "replay", details)


def replay_gold(environment: ScenarioEnvironment, task: Task) -> JSON:
    world = new_world(environment, task)
    for action in task.evaluator.actions:
        world.call(action.name, action.kwargs)
    return world.snapshot()


def check_answer(expected: JSON, finish: Mapping[str, JSON]) -> tuple[bool, str]:
    refused = str(finish.get("decision") or "").strip().lower().startswith("refus")
    if expected is None:
        return (not refused, "declared a refusal on a request that had to be carried out")
    if isinstance(expected, dict) and expected.get("kind") == "refuse":
        accepted = [str(code) for code in expected.get("reasons") or []]
        if not refused:
            return False, "the request had to be refused"
        ok = not accepted or finish.get("reason") in accepted
        return ok, f"refusal code {finish.get('reason')!r} is not one of {accepted}"
    if refused:
        return False, "declared a refusal on a question that needed an answer"
    got = finish.get("answer")
    if isinstance(expected, dict) and expected.get("kind") == "value":
        return _compare_mode(got, expected.get("expect"), str(expected.get("compare", "str_norm"))), "wrong answer"
    return _compare_typed(got, expected), "wrong answer"


def _compare_typed(got: JSON, expected: JSON) -> bool:
    if isinstance(expected, bool):
        return got is expected
    if isinstance(expected, int | float):
        number = _single_number(got)
        return number is not None and abs(number - float(expected)) < 0.01 + 1e-9
    if isinstance(expected, str):
        return _norm(got) == _norm(expected) and _norm(expected) != ""
    if isinstance(expected, list):
        return isinstance(got, list) and sorted(map(_norm, got)) == sorted(map(_norm, expected))
    return bool(canonical_hash(got) == canonical_hash(expected))


def _compare_mode(got: JSON, expected: JSON, mode: str) -> bool:
    if got is None:
        return False
    if mode in ("int", "float"):
        number, target = _single_number(got), _single_number(expected)
        if number is None or target is None:
            return False
        if mode == "int":
            return number.is_integer() and number == target
        return abs(number - target) < 0.01
    if mode == "set":
        return isinstance(got, list) and isinstance(expected, list) and \
            {_norm(x) for x in got} == {_norm(x) for x in expected}
    return _norm(got) == _norm(expected) and _norm(expected) != ""


def _single_number(value: JSON) -> float | None:
    """The one number a value holds ('$12.50' counts; '12 or 13' does not)."""
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, int | float):
        return float(value)
    found = _NUMBER.findall(str(value).replace(",", "").replace("$", ""))
    return float(found[0]) if len(found) == 1 else None


def _norm(value: JSON) -> str:
    return re.sub(r"[^a-z0-9]", "", str(value).lower())
