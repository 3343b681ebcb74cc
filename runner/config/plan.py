"""A sweep's plan: streams and their units of work, with ids that make reruns safe.

A stream is (model, method, scenario, replica). Its units are the serving tasks in stream order and
each window's test tasks, each test task once per repeat (`--repeats K`: repeats share the stream's
learned state). A replica (`--replicas K`) is a whole second stream of the same cell: its own serving
stream, method state, checkpoints and test sets, and its own sampling seed where the provider takes one,
so replicas measure how much a score depends on what one serving stream happened to teach.

A unit id says exactly which work it is, `stream|phase|task` (`|r<k>` added for repeat k >= 1), and a
stream id is `model|method|scenario` (`|replica<k>` added for replica k >= 1), so a resume finds finished
work by id and a run journaled before replicas existed keeps its ids. Pure functions: no I/O.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field

from simulators.protocol import Scenario, Task

__all__ = ["RunPart", "Stream", "Unit", "pilot_note", "plan_streams", "replica_label", "serving_blocks", "window_tasks"]


def replica_label(replica: int) -> str:
    """How a replica shows in stream and unit ids: nothing for replica 0 (today's ids), `replica<k>` else."""
    return "" if replica == 0 else f"replica{replica}"


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
    replica: int = 0
    """Which replica of its (model, method, scenario) cell, 0 .. replicas - 1."""
    replicas: int = 1
    """Replicas of the cell in the sweep (`--replicas K`)."""

    @property
    def stream_id(self) -> str:
        base = f"{self.model}|{self.method}|{self.scenario.name}"
        return base if self.replica == 0 else f"{base}|{replica_label(self.replica)}"

    @property
    def sampling_seed(self) -> int | None:
        """The seed this replica's model calls carry where the provider takes one: the replica index once
        there are replicas to tell apart; None (no seed sent, as before replicas existed) with one."""
        return self.replica if self.replicas > 1 else None

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


def pilot_note(pilot: int, scenarios: Sequence[Scenario]) -> str | None:
    """What to say of a `--pilot N` that cuts nothing: at or above every window's size it is the full
    sweep, which a user who asked for a pilot should know before it spends (issue 30: `--pilot 100000`)."""
    sizes = [len(window_tasks(tasks, window)) for s in scenarios for tasks in (s.serving, s.test)
             for window in {t.window for t in tasks}]
    if pilot <= 0 or not sizes or pilot < max(sizes):
        return None
    return (f"--pilot {pilot}: no window has more than {max(sizes)} tasks, so this pilot cuts nothing: it is the "
            "full sweep")


def plan_streams(models: Sequence[str], methods: Sequence[str], scenarios: Sequence[Scenario],
                 learns: Callable[[str], bool], pilot: int = 0, repeats: int = 1, replicas: int = 1) -> list[Stream]:
    """Every (model, method, scenario, replica), replicas of a cell side by side. A method that never
    learns gets no serving stream."""
    return [
        Stream(model, method, scenario,
               _pilot(scenario.serving, pilot) if learns(method) else (), _pilot(scenario.test, pilot), repeats,
               replica, replicas)
        for model in models for method in methods for scenario in scenarios for replica in range(replicas)
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
