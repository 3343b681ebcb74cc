"""Per-task outcomes of one stream, the input of every evidence figure, and how they become scores.

An `Outcome` is one finished test episode as the journal holds it, with the task's family. A task run
K times (`--repeats K`) has K outcomes; every score takes the task's mean over its repeats first, so a
task weighs the same however often it ran.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from runner.stats.bootstrap import TaskValue
from simulators.errors import ShiftbenchInputError

__all__ = ["MEASURES", "MICRO", "Outcome", "RunEvidence", "StreamRef", "TaskKey", "by_task", "parse_selector",
           "task_values"]

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
    replica: int = 0
    """The stream replica (`--replicas K`) that ran it: its own serving stream and method state."""

    @property
    def key(self) -> TaskKey:
        return self.scenario, self.task_id

    @property
    def tokens(self) -> int:
        return self.input_tokens + self.output_tokens


MICRO = 1_000_000
MEASURES: dict[str, Callable[[Outcome], float]] = {
    "cost": lambda o: o.cost_usd * MICRO,
    "tokens": lambda o: float(o.tokens),
    "turns": lambda o: float(o.turns),
}
"""Per-task measures where less is better, as counts: cost in micro-USD, so r's max(1, base) guard
means the same for each."""


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


@dataclass(frozen=True)
class RunEvidence:
    """What the evidence commands read of one run: its identity and its test outcomes per stream."""

    run_id: str
    dataset_fingerprint: str
    code_version: str
    config_hash: str
    outcomes: dict[tuple[str, str], list[Outcome]]
    """(model, method) -> finished test episodes."""

    def stream(self, name: str, what: str) -> tuple[StreamRef, list[Outcome]]:
        """`model/method` of this run (the model may hold '/': the method is after the last one)."""
        model, _, method = name.rpartition("/")
        if (model, method) not in self.outcomes:
            known = ", ".join(f"{m}/{k}" for m, k in self.outcomes) or "none finished a test task"
            raise ShiftbenchInputError(f"{what}: run {self.run_id} has no stream {name!r}; its streams: {known}")
        return StreamRef(self.run_id, model, method), self.outcomes[(model, method)]

    def only_stream(self, what: str) -> tuple[StreamRef, list[Outcome]]:
        if len(self.outcomes) != 1:
            known = ", ".join(f"{self.run_id}:{m}/{k}" for m, k in self.outcomes)
            raise ShiftbenchInputError(f"{what}: run {self.run_id} has {len(self.outcomes)} streams; name one "
                                       f"as RUN_ID:model/method ({known})")
        (model, method), outcomes = next(iter(self.outcomes.items()))
        return StreamRef(self.run_id, model, method), outcomes


def parse_selector(text: str) -> tuple[str, str]:
    """`RUN_ID` or `RUN_ID:model/method` -> (run id, stream name or '')."""
    run_id, _, stream = text.partition(":")
    if not run_id or (stream and "/" not in stream):
        raise ShiftbenchInputError(f"{text!r}: name a run as RUN_ID or RUN_ID:model/method "
                                   "(e.g. r20260101-120000-ab12:scripted/tabular)")
    return run_id, stream
