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
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from dataclasses import dataclass

import orjson

from methods.base import Method, MethodSetup, MethodSpec, PublicScenario
from runner.common.errors import RunAborted
from runner.config.plan import Stream, serving_blocks, window_tasks
from runner.journal import CheckpointKey, Journal
from runner.models.stack import ClientStack
from runner.providers.priority import SERVING
from simulators.model_api import ModelClient
from simulators.protocol import JSON, Scenario, Task
from simulators.record import EpisodeRecord

__all__ = ["Frozen", "StreamMethods", "method_setup"]


def method_setup(spec: MethodSpec, scenario: Scenario, client: ModelClient | None) -> MethodSetup:
    """What a method is handed when it is built: the scenario's public face, its client if it calls a
    model, the bulletins only if its spec says it sees them (Oracle)."""
    bulletins = (lambda position: scenario.window_of_position(position).oracle_bulletin) \
        if spec.sees_bulletin else None
    return MethodSetup(scenario=scenario.name, domain=scenario.domain, client=client if spec.uses_model else None,
                       bulletins=bulletins, public=PublicScenario.of(scenario))


@dataclass(frozen=True)
class Frozen:
    """A method as of one point of its stream: its JSON state, or a deep copy of it."""

    state: JSON = None
    copy: Method | None = None


@dataclass
class StreamMethods:
    run_id: str
    journal: Journal
    clients: ClientStack
    specs: Callable[[str], MethodSpec]
    sweep_block_size: int

    def build(self, stream: Stream) -> Method:
        """The stream's method as a fresh instance (bulletins for Oracle, a learner's cache scope)."""
        spec = self.specs(stream.method)
        client = None
        if spec.uses_model:
            # One cache scope for the stream's learning calls: a block re-run after a crash asks the same
            # questions again and gets its paid answers back.
            client = self.clients.client(stream.model, f"{stream.stream_id}|method", stream.stream_id, "method",
                                         SERVING, stream.sampling_seed)
        return spec.build(method_setup(spec, stream.scenario, client))

    def block_size(self, stream: Stream) -> int:
        return self.specs(stream.method).block_size or self.sweep_block_size

    def blocks(self, stream: Stream, tasks: tuple[Task, ...] | list[Task]) -> list[list[Task]]:
        return serving_blocks(tasks, self.block_size(stream))

    def copies(self, stream: Stream) -> bool:
        return self.specs(stream.method).snapshot == "copy"

    def freeze(self, stream: Stream, method: Method) -> Frozen:
        return Frozen(copy=copy.deepcopy(method)) if self.copies(stream) else Frozen(state=method.state())

    def thaw(self, stream: Stream, frozen: Frozen) -> Method:
        if frozen.copy is not None:
            thawed: Method = copy.deepcopy(frozen.copy)
            return thawed
        method = self.build(stream)
        method.load(frozen.state)
        return method

    async def restore(self, stream: Stream) -> tuple[Method, dict[int, Frozen], int]:
        """(the method as of the stream's last journaled block, the window-end copies a replay from the
        start kept, the serving episodes journaled since the latest checkpoint)."""
        method = self.build(stream)
        position = 0
        if not self.copies(stream):
            stored = await self.journal.read.checkpoint(self.run_id, stream.stream_id, CheckpointKey.latest())
            if stored is not None:
                position = stored.position
                method.load(orjson.loads(stored.state))
        records = await self._journaled(stream, position)
        kept: dict[int, Frozen] = {}
        blocks = self.blocks(stream, stream.serving)
        for index, block in enumerate(blocks):
            if block[-1].timestamp <= position or block[0].task_id not in records:
                continue
            await method.learn([records[task.task_id] for task in block])
            window_end = index == len(blocks) - 1 or blocks[index + 1][0].window != block[-1].window
            if self.copies(stream) and window_end:
                kept[block[-1].window] = self.freeze(stream, method)
        return method, kept, len(records)

    async def window_state(self, stream: Stream, window: int, here: dict[int, Frozen]) -> Frozen:
        """The method as of the end of `window`'s serving: the last window at or before it that had
        serving tasks, from this process or from the journal; the initial method if none had."""
        served = [w for w in stream.windows() if w <= window and window_tasks(stream.serving, w)]
        if not served:
            return self.freeze(stream, self.build(stream))
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

    async def as_of(self, stream: Stream, task: Task) -> Method:
        """The method as it was when `task` ran (an audit's replay asks): a test task sees its window's
        frozen state; a serving task the state before its block."""
        if self.copies(stream):
            return await self._replayed_until(stream, task)
        earlier = task.window if task.split == "test" else task.window - 1
        method = self.thaw(stream, await self.window_state(stream, earlier, {}))
        if task.split == "test":
            return method
        records = await self._journaled(stream, 0)
        for block in self.blocks(stream, window_tasks(stream.serving, task.window)):
            if task in block:
                break
            await method.learn([records[t.task_id] for t in block])
        return method

    async def _replayed_until(self, stream: Stream, task: Task) -> Method:
        """A method without JSON state, replayed from the start up to `task` (its window's end for a test
        task, the block before its own for a serving task)."""
        method = self.build(stream)
        records = await self._journaled(stream, 0)
        for block in self.blocks(stream, stream.serving):
            if task in block or (task.split == "test" and block[0].window > task.window):
                break
            await method.learn([records[t.task_id] for t in block])
        return method

    async def _journaled(self, stream: Stream, after: int) -> dict[str, EpisodeRecord]:
        journaled = await self.journal.read.serving_records_after(self.run_id, stream.stream_id, after)
        return {task_id: EpisodeRecord.from_json(orjson.loads(raw)) for task_id, raw in journaled.items()}
