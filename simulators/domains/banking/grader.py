"""Binary replay grading: the gold actions on a fresh world must leave the same state as the agent.

State: canonical hashes of the two snapshots (the episode's case, the only record that can change;
the reference hashes its whole scoped database, which differs only there). A refused call changes
nothing, so an episode is graded on where it ended, as the reference grades it. Answer:
banking answers are null (the finish tool takes no arguments), but the general rule is kept so a
dataset with refusal or value answers grades as FORMAT.md says.
"""

from __future__ import annotations

from collections.abc import Mapping

from simulators.canonical import canonical_hash
from simulators.domain import DomainWorld, Grade
from simulators.domains.banking.world import new_world
from simulators.errors import ToolError
from simulators.protocol import JSON, ScenarioEnvironment, Task

__all__ = ["answer_ok", "gold_snapshot", "grade"]


def gold_snapshot(environment: ScenarioEnvironment, task: Task) -> tuple[JSON, list[str]]:
    """The snapshot the gold actions leave, and any errors they raised (a sign of a broken task)."""
    world = new_world(environment, task)
    errors = []
    for action in task.evaluator.actions:
        try:
            world.call(action.name, action.kwargs)
        except ToolError as exc:
            errors.append(f"{action.name}: {exc}")
    return world.snapshot(), errors


def _number(value: JSON) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def answer_ok(answer: JSON, finish_arguments: Mapping[str, JSON]) -> bool:
    declared_refusal = finish_arguments.get("decision") == "refuse"
    if answer is None:
        return not declared_refusal
    if isinstance(answer, dict) and answer.get("kind") == "refuse":
        reasons = answer.get("reasons")
        return declared_refusal and isinstance(reasons, list) and finish_arguments.get("reason") in reasons
    given = finish_arguments.get("answer")
    if isinstance(answer, float) or isinstance(given, float):
        expected, actual = _number(answer), _number(given)
        return expected is not None and actual is not None and abs(expected - actual) <= 0.01
    return type(given) is type(answer) and bool(given == answer)


def grade(environment: ScenarioEnvironment, task: Task, world: DomainWorld,
          finish_arguments: Mapping[str, JSON] | None) -> Grade:
    if finish_arguments is None:
        return Grade(0.0, "replay", {"why": "the episode ended without a valid finish"})
    gold, errors = gold_snapshot(environment, task)
    state_ok = canonical_hash(world.snapshot()) == canonical_hash(gold)
    answered = answer_ok(task.evaluator.answer, finish_arguments)
    details: dict[str, JSON] = {"state_match": state_ok, "answer_ok": answered}
    if errors:
        details["gold_errors"] = errors
    return Grade(1.0 if state_ok and answered else 0.0, "replay", details)
