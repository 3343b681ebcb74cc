"""A stream's method as the engine needs it: built, frozen for a test set, restored after a crash.

Two kinds of method (`MethodSpec.snapshot`):
- "state": `state()` is JSON. A frozen copy is a new instance given `load(state)`; a resume loads the
  stream's latest checkpoint and replays `learn` on the blocks journaled after it; a window's frozen
  state comes from its window-end checkpoint.
- "copy" (the reference adapter): no JSON state. A frozen copy is a deep copy; a resume replays
  `learn` on every journaled block from the start, keeping a deep copy at each window end for the test
  sets still to run. Either way a learner's model calls during the replay are answered from the
  journal (one cache scope per stream), so nothing is paid twice.
Blocks are the method's own size when its spec sets one (`block_size`), else the sweep's.

The engine drives a method through a handle (`runner.workers.handle`): a user's method (`plans` gives
its `WorkerPlan`) in a worker process of its own, one per stream and one per test set thawed from a
window-end state (a "copy" method's copies live in its stream's worker); shiftbench's own methods, and
every method under `--methods-in-process`, in the runner's process. Audits (`as_of`) replay in-process.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import anyio
import orjson

from methods.base import Method, MethodSetup, MethodSpec, PublicScenario
from runner.common.errors import RunAborted
from runner.common.files import DiskFull
from runner.config.plan import Stream, serving_blocks, window_tasks
from runner.cost.budget import BudgetExhausted
from runner.journal import CheckpointKey, Journal, JournalError
from runner.models.stack import ClientStack
from runner.providers.priority import SERVING
from runner.providers.taxonomy import InfrastructureError
from runner.workers.failure import describe_exception
from runner.workers.handle import (
    InProcessMethod,
    MethodHandle,
    MethodLimits,
    MethodTimes,
    WorkerPlan,
    open_worker_method,
)
from simulators.model_api import ModelClient
from simulators.protocol import JSON, Scenario, Task
from simulators.record import EpisodeRecord

__all__ = ["RUNNER_ERRORS", "Frozen", "StreamMethods", "method_setup"]

RUNNER_ERRORS: tuple[type[BaseException], ...] = (BudgetExhausted, InfrastructureError, RunAborted, JournalError,
                                                   DiskFull)
"""The runner's own failures met inside a method's call (its model calls): they pass through as
themselves (a budget stop is a budget stop), never as the method's error."""


def method_setup(spec: MethodSpec, scenario: Scenario, client: ModelClient | None) -> MethodSetup:
    """What a method is handed when it is built: the scenario's public face, its client if it calls a
    model, the bulletins only if its spec says it sees them (Oracle)."""
    bulletins = (lambda position: scenario.window_of_position(position).oracle_bulletin) \
        if spec.sees_bulletin else None
    return MethodSetup(scenario=scenario.name, domain=scenario.domain, client=client if spec.uses_model else None,
                       bulletins=bulletins, public=PublicScenario.of(scenario))


@dataclass(frozen=True)
class Frozen:
    """A method as of one point of its stream: its JSON state, a copy of it (a handle of its own, for a
    method without JSON state), or `fresh` (no serving learned from yet: a new instance)."""

    state: JSON = None
    copy: MethodHandle | None = None
    fresh: bool = False


def _no_plan(name: str) -> WorkerPlan | None:
    return None


@dataclass
class StreamMethods:
    run_id: str
    journal: Journal
    clients: ClientStack
    specs: Callable[[str], MethodSpec]
    sweep_block_size: int
    plans: Callable[[str], WorkerPlan | None] = _no_plan
    """A method's worker plan; None: it runs in the runner's process."""
    limits: MethodLimits = field(default_factory=MethodLimits)
    times: dict[str, MethodTimes] = field(default_factory=dict)
    """Per stream, the seconds of its method's calls in this process (every instance of it)."""

    def _client(self, stream: Stream, spec: MethodSpec) -> ModelClient | None:
        if not spec.uses_model:
            return None
        # One cache scope for the stream's learning calls: a block re-run after a crash asks the same
        # questions again and gets its paid answers back.
        return self.clients.client(stream.model, f"{stream.stream_id}|method", stream.stream_id, "method", SERVING,
                                   stream.sampling_seed)

    def build(self, stream: Stream) -> Method:
        """The stream's method as a fresh instance in this process (bulletins for Oracle, a learner's
        cache scope): what an audit's replay and bench/reference.py drive."""
        spec = self.specs(stream.method)
        return spec.build(method_setup(spec, stream.scenario, self._client(stream, spec)))

    async def open(self, stream: Stream) -> MethodHandle:
        """The stream's method as a fresh instance where it runs: its worker, or this process."""
        plan = self.plans(stream.method)
        if plan is None:
            try:
                built = self.build(stream)
            except RUNNER_ERRORS:
                raise
            except Exception as exc:  # the method's own builder
                raise describe_exception("build", exc) from None
            times = self.stream_times(stream)
            times.boundary = "in-process"
            return InProcessMethod(built, self.limits, RUNNER_ERRORS, times=times)
        spec = self.specs(stream.method)
        guest = await open_worker_method(plan, stream.scenario.name, stream.scenario.domain,
                                         PublicScenario.of(stream.scenario), self._client(stream, spec), self.limits,
                                         self.stream_times(stream))
        guest.times.boundary = guest.boundary
        return guest

    def stream_times(self, stream: Stream) -> MethodTimes:
        return self.times.setdefault(stream.stream_id, MethodTimes())

    def block_size(self, stream: Stream) -> int:
        return self.specs(stream.method).block_size or self.sweep_block_size

    def blocks(self, stream: Stream, tasks: tuple[Task, ...] | list[Task]) -> list[list[Task]]:
        return serving_blocks(tasks, self.block_size(stream))

    def copies(self, stream: Stream) -> bool:
        return self.specs(stream.method).snapshot == "copy"

    async def freeze(self, stream: Stream, method: MethodHandle) -> Frozen:
        return Frozen(copy=await method.copy()) if self.copies(stream) else Frozen(state=await method.state())

    async def thaw(self, stream: Stream, frozen: Frozen) -> MethodHandle:
        """A new instance as of `frozen`: the caller closes it."""
        if frozen.copy is not None:
            return await frozen.copy.copy()
        method = await self.open(stream)
        if frozen.fresh:
            return method
        try:
            await method.load(frozen.state)
        except BaseException:
            await method.close()
            raise
        return method

    async def restore(self, stream: Stream) -> tuple[MethodHandle, dict[int, Frozen], int]:
        """(the method as of the stream's last journaled block, the window-end copies a replay from the
        start kept, the serving episodes journaled since the latest checkpoint). The caller closes the
        method and the copies."""
        method = await self.open(stream)
        kept: dict[int, Frozen] = {}
        try:
            position = 0
            if not self.copies(stream):
                stored = await self.journal.read.checkpoint(self.run_id, stream.stream_id, CheckpointKey.latest())
                if stored is not None:
                    position = stored.position
                    await method.load(orjson.loads(stored.state))
            records = await self._journaled(stream, position)
            blocks = self.blocks(stream, stream.serving)
            for index, block in enumerate(blocks):
                if block[-1].timestamp <= position or block[0].task_id not in records:
                    continue
                await method.learn([records[task.task_id] for task in block])
                window_end = index == len(blocks) - 1 or blocks[index + 1][0].window != block[-1].window
                if self.copies(stream) and window_end:
                    kept[block[-1].window] = await self.freeze(stream, method)
        except BaseException:
            await close_all(method, kept)
            raise
        return method, kept, len(records)

    async def window_state(self, stream: Stream, window: int, here: dict[int, Frozen]) -> Frozen:
        """The method as of the end of `window`'s serving: the last window at or before it that had
        serving tasks, from this process or from the journal; the initial method if none had."""
        served = [w for w in stream.windows() if w <= window and window_tasks(stream.serving, w)]
        if not served:
            return Frozen(fresh=True)
        last = served[-1]
        if last in here:
            return here[last]
        stored = None
        if not self.copies(stream):
            stored = await self.journal.read.checkpoint(self.run_id, stream.stream_id, CheckpointKey.window_end(last))
        if stored is None:
            raise RunAborted(f"{stream.stream_id}: journal has no checkpoint for window {last}; "
                             "the journal is damaged, start a new run")
        return Frozen(state=orjson.loads(stored.state))

    async def as_of(self, stream: Stream, task: Task) -> MethodHandle:
        """The method as it was when `task` ran (an audit's replay asks), where it runs (a user's in a
        worker, under the run's boundary and limits): a test task sees its window's frozen state; a
        serving task the state before its block. The caller closes it."""
        method = await self.open(stream)
        try:
            if self.copies(stream):
                await self._replay_until(stream, task, method)
                return method
            earlier = task.window if task.split == "test" else task.window - 1
            frozen = await self.window_state(stream, earlier, {})
            if not frozen.fresh:
                await method.load(frozen.state)
            if task.split == "serving":
                records = await self._journaled(stream, 0)
                for block in self.blocks(stream, window_tasks(stream.serving, task.window)):
                    if task in block:
                        break
                    await method.learn([records[t.task_id] for t in block])
        except BaseException:
            await method.close()
            raise
        return method

    async def _replay_until(self, stream: Stream, task: Task, method: MethodHandle) -> None:
        """A method without JSON state, replayed from the start up to `task` (its window's end for a test
        task, the block before its own for a serving task)."""
        records = await self._journaled(stream, 0)
        for block in self.blocks(stream, stream.serving):
            if task in block or (task.split == "test" and block[0].window > task.window):
                break
            await method.learn([records[t.task_id] for t in block])

    async def _journaled(self, stream: Stream, after: int) -> dict[str, EpisodeRecord]:
        journaled = await self.journal.read.serving_records_after(self.run_id, stream.stream_id, after)
        return {task_id: EpisodeRecord.from_json(orjson.loads(raw)) for task_id, raw in journaled.items()}


async def close_all(method: MethodHandle | None, frozen: dict[int, Frozen]) -> None:
    """Close a stream's copies, then its method (whose worker holds them), whatever is cancelling."""
    with anyio.CancelScope(shield=True):
        for kept in frozen.values():
            if kept.copy is not None:
                await kept.copy.close()
        if method is not None:
            await method.close()
