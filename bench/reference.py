"""Benchmark 5: the reference runner's scheduling policy beside shiftbench's, on the makespan workload.

The reference runner (FORMAT.md) schedules like this: a pool of 8 workers; serving tasks in blocks of
12 run in parallel against the frozen method state, with a barrier after each block and the update
(`learn`) behind it; windows one after another, each window's test set after that window's serving;
scenarios and methods one after another. `ReferenceScheduler` is that policy, driving the same engine
pieces shiftbench's own scheduler drives (`Engine.attempt`: the episode runner with its re-run policy;
`Engine.build_method`; the client stack; the journal), so the two differ in scheduling only.

Workload: bench/makespan.py's (icl_full on the three L1 scenarios, the loopback mock in a process of
its own replying after 100 ms, 3 turns an episode), at block size 12 for both. Rows: the reference
(8 workers), then shiftbench with 8 call slots (the same capacity) and with 64. Each row's bound is its
own policy's floor with instant everything but the model:
- reference: per stream and window, each block takes ceil(block / 8) rounds, the test set
  ceil(tests / 8) rounds, a round 3 turns x latency; streams add up;
- shiftbench: max(longest stream's serving blocks x 3 turns x latency + one test episode,
  all calls x latency / C), as in the makespan benchmark with blocks in place of episodes.
"""

from __future__ import annotations

import math
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import anyio

from bench.harness import EngineRun
from bench.makespan import SCENARIOS, SHAPES, TURNS, Shape, run_workload, workload_streams
from bench.section import Row, Section
from runner.config.plan import Stream, Unit, serving_blocks, window_tasks
from runner.journal import Batch
from runner.providers.priority import SERVING, TEST
from runner.schedule.engine import Engine
from runner.schedule.episode import EpisodeResult
from simulators.dataset import load_dataset
from simulators.protocol import Task

__all__ = ["REFERENCE_BLOCK", "REFERENCE_WORKERS", "ReferenceScheduler", "run_reference"]

REFERENCE_WORKERS = 8
REFERENCE_BLOCK = 12

COLUMNS = ["scheduler", "slots", "block", "calls", "wall_s", "bound_s", "wall_over_bound", "serving_path_s",
           "speedup"]


@dataclass
class ReferenceScheduler:
    """The reference runner's policy over an `Engine`'s pieces: `await ReferenceScheduler().drive(engine, streams)`."""

    workers: int = REFERENCE_WORKERS
    block_size: int = REFERENCE_BLOCK

    async def drive(self, engine: Engine, streams: list[Stream]) -> None:
        pool = anyio.CapacityLimiter(self.workers)  # one worker runs one episode at a time
        for stream in streams:  # scenarios and methods one after another
            await self._stream(engine, pool, stream)

    async def _stream(self, engine: Engine, pool: anyio.CapacityLimiter, stream: Stream) -> None:
        method = engine.build_method(stream)
        for window in stream.windows():
            for block in serving_blocks(window_tasks(stream.serving, window), self.block_size):
                contexts = [method.context(task.view()) for task in block]
                units = [Unit(stream.unit_id(task), task, "serving", 0) for task in block]
                results = await self._parallel(engine, pool, stream, units, contexts, SERVING)  # the barrier
                await method.learn([result.record for result in results])
                await self._journal(engine, stream, units, results)
            tests = [unit for task in window_tasks(stream.test, window) for unit in stream.test_units(task)]
            if tests:  # after the window's serving, before the next window's
                contexts = [method.context(unit.task.view()) for unit in tests]
                await self._journal(engine, stream, tests,
                                    await self._parallel(engine, pool, stream, tests, contexts, TEST))

    async def _parallel(self, engine: Engine, pool: anyio.CapacityLimiter, stream: Stream, units: list[Unit],
                        contexts: list[str], priority: int) -> list[EpisodeResult]:
        results: list[EpisodeResult | None] = [None] * len(units)

        async def one(i: int) -> None:
            async with pool:
                results[i] = await engine.attempt(stream, units[i].task, contexts[i], priority, units[i].unit_id)

        async with anyio.create_task_group() as group:
            for i in range(len(units)):
                group.start_soon(one, i)
        finished = [r for r in results if r is not None]
        if len(finished) < len(units):
            raise RuntimeError("an episode was refused (no budget is set here): the benchmark is broken")
        return finished

    @staticmethod
    async def _journal(engine: Engine, stream: Stream, units: list[Unit], results: list[EpisodeResult]) -> None:
        """The finished episodes in one transaction (the reference appends them to its output file)."""
        batch = Batch()
        for unit, result in zip(units, results, strict=True):
            engine.episode_rows(batch, stream, unit.task, result, unit.unit_id)
        await engine.journal.commit(batch)


def _blocks(tasks: tuple[Task, ...], window: int, size: int) -> list[list[Task]]:
    return serving_blocks(window_tasks(tasks, window), size)


def reference_bound(streams: list[Stream], latency_s: float, workers: int, block: int) -> float:
    rounds = 0
    for stream in streams:
        for window in stream.windows():
            rounds += sum(math.ceil(len(b) / workers) for b in _blocks(stream.serving, window, block))
            rounds += math.ceil(len(window_tasks(stream.test, window)) * stream.repeats / workers)
    return rounds * TURNS * latency_s


def shiftbench_bound(streams: list[Stream], latency_s: float, slots: int, block: int, calls: int) -> float:
    chain = max(sum(len(_blocks(s.serving, w, block)) for w in s.windows()) for s in streams)
    return max((chain + 1) * TURNS * latency_s, calls * latency_s / slots)


def _row(name: str, slots: int, run: EngineRun, bound: float, reference_wall: float) -> Row:
    return {"scheduler": name, "slots": slots, "block": REFERENCE_BLOCK, "episodes": run.episodes,
            "calls": run.journaled_calls, "wall_s": round(run.wall_s, 2), "bound_s": round(bound, 2),
            "wall_over_bound": round(run.wall_s / bound, 3),
            "serving_path_s": round(max(s.serving_done_s for s in run.streams), 2),
            "speedup": round(reference_wall / run.wall_s, 2),
            "serving_commit_ms": run.journal["waits"].get("checkpoint", {}).get("mean_ms", 0.0)}


async def run_reference(suite: Path, mode: str) -> Section:
    shape: Shape = SHAPES[mode]
    section = Section(
        "reference scheduler vs shiftbench",
        f"the makespan workload ({shape.serving_per_window} serving + {shape.test_per_window} test tasks a window, "
        f"icl_full on 3 L1 scenarios, mock replies after {shape.latency_s * 1000:.0f} ms, {TURNS} turns an "
        f"episode) at block size {REFERENCE_BLOCK}: the reference runner's policy ({REFERENCE_WORKERS} workers, "
        "a barrier after each block, windows, test sets and scenarios one after another) vs shiftbench's "
        "scheduler, same engine, clients, journal and mock; speedup = reference wall / this wall; "
        "bound = each policy's own floor (see bench/reference.py).", COLUMNS)
    started = time.perf_counter()
    scheduler = ReferenceScheduler()
    streams = workload_streams(load_dataset(suite, only=SCENARIOS), "mock", shape)
    with tempfile.TemporaryDirectory(prefix="shiftbench-reference-") as tmp:
        reference = await run_workload(shape, suite, Path(tmp) / "reference.sqlite", REFERENCE_WORKERS,
                                       REFERENCE_WORKERS, REFERENCE_BLOCK, drive=scheduler.drive)
        bound = reference_bound(streams, shape.latency_s, REFERENCE_WORKERS, REFERENCE_BLOCK)
        section.rows.append(_row("reference policy", REFERENCE_WORKERS, reference, bound, reference.wall_s))
        for slots in (REFERENCE_WORKERS, 64):
            run = await run_workload(shape, suite, Path(tmp) / f"shiftbench-{slots}.sqlite", slots, slots,
                                     REFERENCE_BLOCK)
            bound = shiftbench_bound(streams, shape.latency_s, slots, REFERENCE_BLOCK, run.journaled_calls)
            section.rows.append(_row(f"shiftbench, C={slots}", slots, run, bound, reference.wall_s))
    section.seconds = time.perf_counter() - started
    return section
