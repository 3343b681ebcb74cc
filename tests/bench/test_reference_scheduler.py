"""bench/reference.py reproduces the reference runner's policy: every block, test set and stream in
strict order (a barrier after each), and at most 8 episodes at once. Checked on the order of model
calls (a log, not a clock), so it holds on a loaded machine."""

from __future__ import annotations

import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import anyio.lowlevel

from bench.harness import run_streams
from bench.makespan import SCENARIOS, Shape, workload_streams
from bench.reference import ReferenceScheduler
from runner.config.plan import Stream, serving_blocks, window_tasks
from runner.config.settings import SweepConfig
from runner.models.stack import ClientStack
from simulators.dataset import load_dataset
from simulators.model_api import ModelClient, ModelRequest, ModelResponse, Purpose

SHAPE = Shape(0.0, 13, 9)  # 13 serving tasks a window: a block of 12, then a block of 1


class _Logged:
    def __init__(self, inner: ModelClient, unit_id: str, log: list[str]) -> None:
        self._inner, self._unit, self._log = inner, unit_id, log

    @property
    def name(self) -> str:
        return self._inner.name

    async def respond(self, request: ModelRequest) -> ModelResponse:
        self._log.append(self._unit)
        await anyio.lowlevel.checkpoint()  # the scripted model never yields: other episodes interleave here
        return await self._inner.respond(request)


def _stack(log: list[str]) -> Any:
    class LoggedStack(ClientStack):
        def client(self, model: str, unit_id: str, stream_id: str, purpose: Purpose, priority: int,
                   seed: int | None = None) -> ModelClient:
            return _Logged(super().client(model, unit_id, stream_id, purpose, priority, seed), unit_id, log)
    return LoggedStack


def _groups(streams: list[Stream]) -> Iterator[set[str]]:
    """The reference's barrier-separated groups of units, in the order it must run them."""
    for stream in streams:
        for window in stream.windows():
            for block in serving_blocks(window_tasks(stream.serving, window), 12):
                yield {stream.unit_id(task) for task in block}
            yield {stream.unit_id(task) for task in window_tasks(stream.test, window)}


def _run(suite: Path, log: list[str]) -> tuple[list[Stream], int]:
    dataset = load_dataset(suite, only=SCENARIOS)
    streams = workload_streams(dataset, "scripted", SHAPE)
    config = SweepConfig(models=("scripted",), methods=("icl_full",), scenarios=SCENARIOS, dataset=str(suite),
                         concurrency=64, model_concurrency=64, block_size=12).validate("test")

    async def main() -> int:
        with tempfile.TemporaryDirectory() as tmp:
            run = await run_streams(config, dataset, streams, Path(tmp) / "j.sqlite", stack=_stack(log),
                                    drive=ReferenceScheduler().drive)
            return run.episodes
    return streams, anyio.run(main)


def test_reference_policy_runs_groups_strictly_in_order_on_eight_workers(built_suite: Path) -> None:
    log: list[str] = []
    streams, journaled = _run(built_suite, log)
    groups = [g for g in _groups(streams) if g]
    assert journaled == sum(len(g) for g in groups)  # every episode journaled
    assert any(len(g) == 12 for g in groups) and any(len(g) == 1 for g in groups)
    first = {unit: log.index(unit) for unit in set(log)}
    last = {unit: len(log) - 1 - log[::-1].index(unit) for unit in set(log)}
    for before, after in zip(groups, groups[1:], strict=False):
        assert max(last[u] for u in before) < min(first[u] for u in after)  # the barrier
    most = max(sum(1 for u in first if first[u] <= i <= last[u]) for i in range(len(log)))
    assert 1 < most <= 8  # episodes interleave, never more than the pool's 8 workers at once
