"""A sweep's plan: streams and their units of work, with ids that make reruns safe.

A stream is (model, method, scenario). Its units are the serving tasks in stream order and each
window's test tasks, each test task once per repeat (`--repeats K`; serving stays one stream). A unit id
says exactly which work it is, `stream|phase|task` (`|r<k>` added for repeat k >= 1), so a resume finds
finished work by id. Pure functions: no I/O.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field

from simulators.protocol import Scenario, Task

__all__ = ["RunPart", "Stream", "Unit", "plan_streams", "serving_blocks", "window_tasks"]


@dataclass(frozen=True)
class Unit:
    unit_id: str
    task: Task
    phase: str
    seq: int
    repetition: int = 0


@dataclass(frozen=True)
class Stream:
    model: str
    method: str
    scenario: Scenario
    serving: tuple[Task, ...]
    test: tuple[Task, ...]
    repeats: int = 1

    @property
    def stream_id(self) -> str:
        return f"{self.model}|{self.method}|{self.scenario.name}"

    def unit_id(self, task: Task, repetition: int = 0) -> str:
        base = f"{self.stream_id}|{task.split}|{task.task_id}"
        return base if repetition == 0 else f"{base}|r{repetition}"

    def units(self) -> Iterator[Unit]:
        for seq, task in enumerate(self.serving):
            yield Unit(self.unit_id(task), task, "serving", seq)
        for seq, task in enumerate(self.test):
            yield from self.test_units(task, seq)

    def test_units(self, task: Task, seq: int = 0) -> Iterator[Unit]:
        """A test task's units, one per repeat."""
        for repetition in range(self.repeats):
            yield Unit(self.unit_id(task, repetition), task, "test", seq, repetition)

    def windows(self) -> list[int]:
        return sorted({t.window for t in self.serving} | {t.window for t in self.test})


@dataclass(frozen=True)
class RunPart:
    """The part of a sweep this process runs (a shard of `runner.shards`): its run id, its streams, and the
    meta rows journaled with the run in the same transaction."""

    run_id: str
    stream_ids: frozenset[str]
    meta: Mapping[str, str] = field(default_factory=dict)


def window_tasks(tasks: Sequence[Task], window: int) -> list[Task]:
    return [t for t in tasks if t.window == window]


def _pilot(tasks: Sequence[Task], per_window: int) -> tuple[Task, ...]:
    if per_window <= 0:
        return tuple(tasks)
    kept: list[Task] = []
    counts: dict[int, int] = {}
    for task in tasks:
        if counts.get(task.window, 0) < per_window:
            counts[task.window] = counts.get(task.window, 0) + 1
            kept.append(task)
    return tuple(kept)


def plan_streams(models: Sequence[str], methods: Sequence[str], scenarios: Sequence[Scenario],
                 learns: Callable[[str], bool], pilot: int = 0, repeats: int = 1) -> list[Stream]:
    """Every (model, method, scenario). A method that never learns gets no serving stream."""
    return [
        Stream(model, method, scenario,
               _pilot(scenario.serving, pilot) if learns(method) else (), _pilot(scenario.test, pilot), repeats)
        for model in models for method in methods for scenario in scenarios
    ]


def serving_blocks(tasks: Sequence[Task], block_size: int) -> list[list[Task]]:
    """Consecutive blocks of at most `block_size` serving tasks, never spanning a window boundary
    (the reference runner's blocks restart at each window)."""
    blocks: list[list[Task]] = []
    for task in tasks:
        if blocks and len(blocks[-1]) < block_size and blocks[-1][-1].window == task.window:
            blocks[-1].append(task)
        else:
            blocks.append([task])
    return blocks
