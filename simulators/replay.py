"""Replay tool calls on a fresh world for one task, and grade where they end.

For dataset authors and for anyone asking "why did this score 0": the calls go through the same
`ToolSession` an agent's calls go through (same observations, same budget, same finish checks), then
through the domain's grader. A task's gold is its evaluator's actions followed by the finish its
answer asks for; for pitch, whose tasks carry no gold text, it is the pitch the offline composer
writes from the hidden profile (every liked fact, nothing else).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import orjson

from simulators.canonical import canonical_hash
from simulators.domain import Domain, Grade, Judge
from simulators.domains.pitch.composer import compose_pitch, liked_items
from simulators.domains.pitch.grader import task_weights
from simulators.domains.pitch.sheet import task_sheet
from simulators.errors import ShiftbenchInputError
from simulators.protocol import JSON, Scenario, Task, ToolCall
from simulators.session import ToolSession

__all__ = ["ReplayCall", "ReplayResult", "ReplayStep", "gold_calls", "parse_calls", "replay"]


@dataclass(frozen=True)
class ReplayCall:
    name: str
    arguments: Mapping[str, JSON]


@dataclass(frozen=True)
class ReplayStep:
    name: str
    arguments: Mapping[str, JSON]
    observation: str


@dataclass(frozen=True)
class ReplayResult:
    steps: tuple[ReplayStep, ...]
    state_hash: str
    grade: Grade
    finished: bool

    @property
    def errors(self) -> list[str]:
        """Observations that report an error (a gold replay should have none)."""
        return [f"{s.name}: {s.observation}" for s in self.steps
                if s.observation.startswith(("Error", "not executed"))]

    def as_json(self) -> dict[str, JSON]:
        return {
            "steps": [{"name": s.name, "arguments": dict(s.arguments), "observation": s.observation}
                      for s in self.steps],
            "state_hash": self.state_hash, "finished": self.finished,
            "grade": {"reward": self.grade.reward, "judge": self.grade.judge, "details": dict(self.grade.details)},
        }


def parse_calls(raw: bytes, source: str) -> list[ReplayCall]:
    """A JSON list of {"name", "arguments"} objects; `source` names the file or flag in errors."""
    try:
        value = orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        raise ShiftbenchInputError(f"{source}: not valid JSON ({exc}); give a JSON list of "
                                   '{"name": ..., "arguments": {...}} objects') from exc
    if not isinstance(value, list):
        raise ShiftbenchInputError(f'{source}: must be a JSON list of {{"name", "arguments"}} objects')
    calls = []
    for index, item in enumerate(value, start=1):
        arguments = item.get("arguments", {}) if isinstance(item, dict) else None
        if not isinstance(item, dict) or not isinstance(item.get("name"), str) or not isinstance(arguments, dict):
            raise ShiftbenchInputError(f'{source}: call #{index} must be {{"name": "<tool>", "arguments": {{...}}}}')
        calls.append(ReplayCall(item["name"], arguments))
    return calls


def gold_finish(scenario: Scenario, task: Task) -> dict[str, JSON]:
    """The finish arguments the task's answer asks for."""
    if scenario.domain == "pitch":
        sheet = task_sheet(task)
        weights = task_weights(scenario.environment, task, sheet)
        return {"pitch": compose_pitch(sheet, liked_items(sheet, weights))}
    answer = task.evaluator.answer
    if answer is None:
        return {}
    if isinstance(answer, dict) and answer.get("kind") == "refuse":
        reasons = answer.get("reasons") or [""]
        return {"decision": "refuse", "reason": reasons[0]}
    if isinstance(answer, dict) and answer.get("kind") == "value":
        return {"answer": answer.get("expect")}
    return {"answer": answer}


def gold_calls(scenario: Scenario, task: Task) -> list[ReplayCall]:
    actions = [ReplayCall(a.name, a.kwargs) for a in task.evaluator.actions if a.name != "finish"]
    return [*actions, ReplayCall("finish", gold_finish(scenario, task))]


async def replay(scenario: Scenario, task: Task, domain: Domain, calls: Sequence[ReplayCall],
                 judge: Judge | None = None) -> ReplayResult:
    """Run `calls` in order on a fresh world, stopping at an accepted finish, and grade the result."""
    session = ToolSession(scenario.environment, domain.new_world(scenario.environment, task))
    steps: list[ReplayStep] = []
    finish: Mapping[str, JSON] | None = None
    for number, call in enumerate(calls, start=1):
        raw = orjson.dumps(dict(call.arguments)).decode()
        outcome = session.execute(ToolCall(f"replay_{number}", call.name, raw))
        steps.append(ReplayStep(call.name, call.arguments, outcome.observation))
        if outcome.finished:
            finish = outcome.finish_arguments
            break
    grade = await domain.grade(scenario.environment, task, session.world, finish, judge)
    return ReplayResult(tuple(steps), canonical_hash(session.world.snapshot()), grade, finish is not None)
