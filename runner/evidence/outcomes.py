"""Per-task outcomes of one stream, the input of every evidence figure, and how they become scores.

An `Outcome` is one finished test episode as the journal holds it, with the task's family. A task run
K times (`--repeats K`) has K outcomes; every score takes the task's mean over its repeats first, so a
task weighs the same however often it ran.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from runner.evidence.bootstrap import TaskValue

__all__ = ["Outcome", "StreamRef", "TaskKey", "by_task", "task_values"]

TaskKey = tuple[str, str]
"""(scenario, task_id)"""


@dataclass(frozen=True)
class StreamRef:
    """A report stream, `model/method`, of one run."""

    run_id: str
    model: str
    method: str

    @property
    def name(self) -> str:
        return f"{self.model}/{self.method}"

    def __str__(self) -> str:
        return f"{self.run_id}:{self.name}"


@dataclass(frozen=True)
class Outcome:
    model: str
    method: str
    scenario: str
    task_id: str
    family: str
    category: str
    window: int
    repeat: int
    reward: float
    turns: int
    tool_calls: int
    input_tokens: int
    output_tokens: int
    cost_usd: float
    latency_s: float

    @property
    def key(self) -> TaskKey:
        return self.scenario, self.task_id

    @property
    def tokens(self) -> int:
        return self.input_tokens + self.output_tokens


def by_task(outcomes: Iterable[Outcome]) -> dict[TaskKey, list[Outcome]]:
    """Outcomes grouped per task, repeats in order."""
    grouped: dict[TaskKey, list[Outcome]] = defaultdict(list)
    for outcome in sorted(outcomes, key=lambda o: (o.scenario, o.task_id, o.repeat)):
        grouped[outcome.key].append(outcome)
    return dict(grouped)


def task_values(outcomes: Iterable[Outcome]) -> list[TaskValue]:
    """One bootstrap value per task: its mean reward over repeats, x 100."""
    return [_value(tries) for tries in by_task(outcomes).values()]


def _value(tries: Sequence[Outcome]) -> TaskValue:
    first = tries[0]
    mean = sum(t.reward for t in tries) / len(tries)
    return TaskValue(first.scenario, first.task_id, first.family, first.category, first.window, 100 * mean)
