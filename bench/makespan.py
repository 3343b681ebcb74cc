"""Benchmark 2: makespan of a learning sweep when every model reply takes `latency` seconds.

The model is the loopback mock provider (`tool_loop`: two tool calls, then finish, so 3 turns an
episode) in a process of its own, behind the real provider client and the full client stack. The sweep is icl_full on
banking_l1, pitch_l1 and retail_l1 with S serving and T test tasks per window (T > S, so test work
outweighs serving work and can crowd it out).

Ideal: a stream's serving episodes run strictly one after another, so the longest stream's serving
turns x latency is the critical path; the last window's test set can only start after it (one more
episode, 3 turns). With C calls in flight, all calls x latency / C is the other bound:
    ideal = max(critical path + 3 x latency, calls x latency / C).
Rows: concurrency 1 / 8 / 64; then two variants at a scarce 8:
- no priority: every call at test priority (a ClientStack that ignores priority), so serving calls
  queue behind test calls, showing what the priority gate buys;
- endpoint limit 8 under a gate of 64: the provider endpoint's own limiter (max_concurrency, which
  AIMD also lowers after 429s) is the scarce one, and it wakes its waiters without priority.
"""

from __future__ import annotations

import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from bench.harness import Drive, EngineRun, StackFactory, engine_run, run_streams, wait_ms
from bench.mock_server import mock_process
from bench.section import Row, Section
from bench.timeline import forced_idle_bound, slot_idle
from runner.config.plan import Stream, window_tasks
from runner.config.settings import SweepConfig
from runner.models.stack import ClientStack
from runner.providers.priority import TEST, ServingClaim
from simulators.dataset import Dataset, load_dataset
from simulators.model_api import ModelClient, Purpose
from simulators.protocol import Task

__all__ = ["SCENARIOS", "SHAPES", "TURNS", "Shape", "run_makespan", "run_workload", "workload_streams"]

SCENARIOS = ("banking_l1", "pitch_l1", "retail_l1")
TURNS = 3
PRICE = {"input": 1.0, "cached_input": 0.25, "cache_write": 1.25, "output": 4.0}


@dataclass(frozen=True)
class Shape:
    latency_s: float
    serving_per_window: int
    test_per_window: int


SHAPES = {"full": Shape(0.1, 3, 12), "quick": Shape(0.05, 2, 6), "smoke": Shape(0.005, 1, 2)}


@dataclass(frozen=True)
class Variant:
    name: str
    concurrency: int
    endpoint_limit: int
    priority: bool = True


VARIANTS = (Variant("C=1", 1, 1), Variant("C=8", 8, 8), Variant("C=64", 64, 64),
            Variant("C=8, no serving priority", 8, 8, priority=False),
            Variant("gate 64, endpoint limit 8", 64, 8))

COLUMNS = ["variant", "calls", "wall_s", "ideal_s", "wall_over_ideal", "bound_s", "serving_path_s", "serving_ideal_s",
           "serving_stretch", "excess_ms_per_serving_ep", "journal_ms_per_serving_ep", "idle_start_s", "idle_mid_s",
           "idle_tail_s", "hold_ms"]


class NoPriorityStack(ClientStack):
    """Every call at test priority and no slot claimed by serving streams: the gate then serves callers
    first come, first served."""

    def client(self, model: str, unit_id: str, stream_id: str, purpose: Purpose, priority: int,
               seed: int | None = None) -> ModelClient:
        return super().client(model, unit_id, stream_id, purpose, TEST, seed)

    def serving_claim(self, model: str) -> ServingClaim:
        return ServingClaim(())


def _first(tasks: tuple[Task, ...], windows: list[int], per_window: int) -> Iterator[Task]:
    for window in windows:
        yield from window_tasks(tasks, window)[:per_window]


def workload_streams(dataset: Dataset, model: str, shape: Shape) -> list[Stream]:
    """The benchmark's workload: icl_full on the three L1 scenarios, the first S serving and T test tasks
    of every window (bench/reference.py runs the same)."""
    streams = []
    for name in SCENARIOS:
        scenario = dataset.scenarios[name]
        windows = sorted({t.window for t in scenario.serving} | {t.window for t in scenario.test})
        streams.append(Stream(model, "icl_full", scenario,
                              tuple(_first(scenario.serving, windows, shape.serving_per_window)),
                              tuple(_first(scenario.test, windows, shape.test_per_window))))
    return streams


async def run_workload(shape: Shape, suite: Path, journal: Path, concurrency: int, endpoint_limit: int,
                       block_size: int = 1, stack: StackFactory = ClientStack, drive: Drive = engine_run) -> EngineRun:
    """The workload against the mock in its own process, through the real client and the full stack."""
    dataset = load_dataset(suite, only=SCENARIOS)
    async with mock_process(shape.latency_s, TURNS) as base_url:
        endpoint = {"kind": "openai-compatible", "model": "mock", "base_url": f"{base_url}/v1",
                    "max_concurrency": endpoint_limit, "stream": True}
        config = SweepConfig(models=("mock",), methods=("icl_full",), scenarios=SCENARIOS, dataset=str(suite),
                             concurrency=concurrency, model_concurrency=concurrency, block_size=block_size,
                             endpoints={"mock": endpoint}, prices={"mock": PRICE}).validate("bench")
        return await run_streams(config, dataset, workload_streams(dataset, "mock", shape), journal, stack=stack,
                                 drive=drive, time_models=True)


async def _one(variant: Variant, shape: Shape, suite: Path, journal: Path) -> tuple[EngineRun, int]:
    stack = ClientStack if variant.priority else NoPriorityStack
    run = await run_workload(shape, suite, journal, variant.concurrency, variant.endpoint_limit, stack=stack)
    return run, run.journaled_calls


def _row(variant: Variant, shape: Shape, run: EngineRun, calls: int) -> Row:
    latency = shape.latency_s
    serving_ideal = max(s.serving_turns for s in run.streams) * latency
    ideal = max(serving_ideal + TURNS * latency, calls * latency / variant.concurrency)
    serving_path = max(s.serving_done_s for s in run.streams)
    longest = max(run.streams, key=lambda s: s.serving_turns)
    bound = max(ideal, forced_idle_bound(calls, latency, variant.concurrency, len(run.streams),
                                         shape.serving_per_window * TURNS))
    idle = slot_idle(run.spans, variant.concurrency, run.wall_s)
    call_ms = wait_ms(run.journal, "serving_call") + wait_ms(run.journal, "read")
    journal_ms = TURNS * call_ms + wait_ms(run.journal, "checkpoint")
    return {"variant": variant.name, "concurrency": variant.concurrency, "endpoint_limit": variant.endpoint_limit,
            "serving_priority": variant.priority, "latency_s": latency, "episodes": run.episodes,
            "serving": run.serving, "test": run.test, "calls": calls, "wall_s": round(run.wall_s, 2),
            "ideal_s": round(ideal, 2), "wall_over_ideal": round(run.wall_s / ideal, 3), "bound_s": round(bound, 2),
            "wall_over_bound": round(run.wall_s / bound, 3), "idle_start_s": round(idle.start_s, 2),
            "idle_mid_s": round(idle.middle_s, 2), "idle_tail_s": round(idle.tail_s, 2),
            "hold_ms": round(idle.hold_ms, 1),
            "serving_path_s": round(serving_path, 2), "serving_ideal_s": round(serving_ideal, 2),
            "serving_stretch": round(serving_path / serving_ideal, 3),
            "excess_ms_per_serving_ep": round(1000 * (serving_path - serving_ideal) / longest.serving, 1),
            "journal_ms_per_serving_ep": round(journal_ms, 1),
            "serving_commit_ms": wait_ms(run.journal, "checkpoint"),
            "serving_call_commit_ms": wait_ms(run.journal, "serving_call"),
            "read_ms": wait_ms(run.journal, "read"), "mean_commit_ms": run.journal["mean_commit_ms"],
            "journal_waits": run.journal["waits"]}


async def run_makespan(suite: Path, mode: str) -> Section:
    shape = SHAPES[mode]
    section = Section(
        "makespan under model latency",
        f"icl_full on {', '.join(SCENARIOS)}, {shape.serving_per_window} serving + {shape.test_per_window} test "
        f"tasks a window, loopback mock replying after {shape.latency_s * 1000:.0f} ms, {TURNS} turns an episode. "
        "ideal = max(longest serving stream's turns x latency + one test episode, calls x latency / C); "
        "serving_stretch = when the last serving episode was journaled / its serial ideal; "
        "excess_ms_per_serving_ep: the serving path's excess over that ideal per serving episode of the longest "
        "stream; journal_ms_per_serving_ep: of which waiting on the journal (3 x (cache lookup + call commit) + "
        "block commit, mean waits). bound: the ideal, or more when the first window's serving leaves slots "
        "no scheduler can fill (bench/timeline.py); idle_*_s: slot-seconds left idle before the first test call, "
        "up to the last serving call, after it; hold_ms: a call's mean time in its slot.", COLUMNS)
    started = time.perf_counter()
    variants = VARIANTS if mode != "smoke" else VARIANTS[1:3]
    with tempfile.TemporaryDirectory(prefix="shiftbench-makespan-") as tmp:
        for index, variant in enumerate(variants):
            run, calls = await _one(variant, shape, suite, Path(tmp) / f"variant{index}.sqlite")
            section.rows.append(_row(variant, shape, run, calls))
    section.seconds = time.perf_counter() - started
    return section
