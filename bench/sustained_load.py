"""Sustained load: how many calls in flight and calls a second the runner holds on this machine, and
what it adds to each call's latency.

    python -m bench.sustained_load                              # 64, 256, 1024 in flight, 3 rounds
    python -m bench.sustained_load --levels 64 256 --rounds 1 --measure 5

The mock provider runs in a process of its own and answers each request as late as the request asks
(`delay_s=...` at the start of its message, uniform in 1-2 s here, as a reasoning model's replies
vary). K callers each send one call after another through the whole client stack a sweep uses (the
journal records every call, the gate, the price, the OpenAI-compatible client, the connection pool);
callers start spread over the first second (or the warm-up), so they do not move in lock step. After a warm-up, for
`measure` seconds: calls completed per second, calls in flight on average (Little's law: the calls'
time inside the window / its length), and the latency the runner added to each call (observed minus
the delay the mock was asked for), p50 and p99; the runner process's CPU use over the window (100% is
one core: the event loop is one thread) and how long its event loop waited for a core
(`runq_wait_pct`, from /proc/self/schedstat: runnable, but other processes had the cores). The load
average is read before each level, since other work on the machine shows in these figures. Rows are
printed as they come; the medians of the rounds at the end.
"""

from __future__ import annotations

import argparse
import json
import random
import resource
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import anyio

from bench.machine import load_average
from bench.mock_server import ASKED_DELAY, mock_process
from bench.rounds import medians_by
from runner.config.settings import SweepConfig
from runner.display.progress import RunProgress
from runner.journal import Journal, open_journal
from runner.models.registry import build_models, close_models, model_prices
from runner.models.stack import ClientStack
from runner.providers.priority import TEST
from simulators.dataset import load_dataset
from simulators.model_api import ModelRequest
from simulators.protocol import Message

__all__ = ["main"]

PRICE = {"input": 1.0, "cached_input": 0.25, "cache_write": 1.25, "output": 4.0}
SCENARIO = "banking_l1"


@dataclass(frozen=True)
class Shape:
    delay_min_s: float = 1.0
    delay_max_s: float = 2.0
    warmup_s: float = 4.0
    measure_s: float = 10.0


def _cpu_s() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def runq_wait_s() -> float | None:
    """Seconds the main thread (the event loop) has spent runnable but waiting for a core (Linux)."""
    try:
        return int(Path("/proc/self/schedstat").read_text().split()[1]) / 1e9
    except (OSError, IndexError, ValueError):
        return None


def _base_request(suite: Path) -> ModelRequest:
    scenario = load_dataset(suite, only=(SCENARIO,)).scenarios[SCENARIO]
    task = scenario.test[0]
    return ModelRequest(system=scenario.environment.system_prompt, messages=(Message("user", task.instruction),),
                        tools=scenario.environment.tools, domain=task.domain)


async def _level(journal: Journal, base_url: str, base: ModelRequest, in_flight: int, shape: Shape,
                 tag: str) -> dict[str, Any]:
    endpoint = {"kind": "openai-compatible", "model": "mock", "base_url": f"{base_url}/v1",
                "max_concurrency": in_flight, "stream": True}
    config = SweepConfig(models=("mock",), endpoints={"mock": endpoint}, prices={"mock": PRICE},
                         concurrency=in_flight, model_concurrency=in_flight).validate("bench")
    models = build_models(config)
    stack = ClientStack(run_id="bench", journal=journal, progress=RunProgress("bench", str(journal.path)),
                        models=models, prices=model_prices(config, models), budget=None, concurrency=in_flight,
                        model_concurrency=in_flight, replayable=())
    rng = random.Random(in_flight)
    calls: list[tuple[float, float, float]] = []
    instruction = base.messages[0].content
    started = time.perf_counter()
    window = (started + shape.warmup_s, started + shape.warmup_s + shape.measure_s)

    async def caller(k: int) -> None:
        await anyio.sleep(rng.random() * min(1.0, shape.warmup_s))  # spread the starts (over a second)
        sent = 0
        while time.perf_counter() < window[1]:
            delay = rng.uniform(shape.delay_min_s, shape.delay_max_s)
            request = replace(base, messages=(Message("user", f"{ASKED_DELAY}{delay:.4f} {instruction}"),))
            client = stack.client("mock", f"{tag}|{k}|{sent}", "bench|stream", "agent", TEST)
            began = time.perf_counter()
            await client.respond(request)
            calls.append((began, time.perf_counter(), delay))
            sent += 1

    cpu_at: list[tuple[float, float | None]] = []

    async def cpu_meter() -> None:
        for edge in window:
            await anyio.sleep(max(0.0, edge - time.perf_counter()))
            cpu_at.append((_cpu_s(), runq_wait_s()))

    load = load_average()
    try:
        async with anyio.create_task_group() as group:
            group.start_soon(cpu_meter)
            for k in range(in_flight):
                group.start_soon(caller, k)
    finally:
        await close_models(models)
    return _row(in_flight, calls, window, cpu_at, load)


def _row(in_flight: int, calls: list[tuple[float, float, float]], window: tuple[float, float],
         cpu_at: list[tuple[float, float | None]], load: list[float] | None) -> dict[str, Any]:
    length = window[1] - window[0]
    done = [c for c in calls if window[0] <= c[1] <= window[1]]
    added = sorted(1000 * (end - began - delay) for began, end, delay in done)
    busy = sum(max(0.0, min(end, window[1]) - max(began, window[0])) for began, end, _ in calls)
    cpu = runq = None
    if len(cpu_at) == 2:
        (cpu0, wait0), (cpu1, wait1) = cpu_at
        cpu = round(100 * (cpu1 - cpu0) / length, 1)
        runq = round(100 * (wait1 - wait0) / length, 1) if wait0 is not None and wait1 is not None else None
    return {"in_flight": in_flight, "calls": len(done), "calls_per_s": round(len(done) / length, 1),
            "mean_in_flight": round(busy / length, 1),
            "added_ms_p50": round(added[len(added) // 2], 1) if added else None,
            "added_ms_p99": round(added[min(len(added) - 1, int(len(added) * 0.99))], 1) if added else None,
            "cpu_pct": cpu, "runq_wait_pct": runq, "load_1m": load[0] if load else None}


async def _run(suite: Path | None, levels: Sequence[int], rounds: int, shape: Shape) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="shiftbench-load-") as tmp:
        if suite is None:
            from simulators.suite import build_suite

            suite = Path(tmp) / "suite"
            build_suite(suite, seed=0)
        base = _base_request(suite)
        async with mock_process(shape.delay_min_s, 3, asked_delay=True) as base_url, \
                open_journal(Path(tmp) / "load.sqlite") as journal:
            for round_ in range(rounds):
                for level in levels:
                    row = {"round": round_, **await _level(journal, base_url, base, level, shape, f"r{round_}")}
                    rows.append(row)
                    print(json.dumps(row), flush=True)
    return rows


def _medians(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return medians_by(rows, "in_flight", ("calls_per_s", "mean_in_flight", "added_ms_p50", "added_ms_p99",
                                          "cpu_pct", "runq_wait_pct"))


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.sustained_load")
    parser.add_argument("--levels", type=int, nargs="+", default=[64, 256, 1024], help="calls in flight")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--measure", type=float, default=Shape.measure_s, help="seconds measured per level")
    parser.add_argument("--warmup", type=float, default=Shape.warmup_s)
    parser.add_argument("--delays", type=float, nargs=2, default=[Shape.delay_min_s, Shape.delay_max_s],
                        metavar=("MIN", "MAX"), help="the mock's reply delays, uniform in [MIN, MAX] seconds")
    parser.add_argument("--suite", type=Path, help="a built suite (default: build seed 0 into a temp folder)")
    args = parser.parse_args(argv)
    shape = Shape(delay_min_s=args.delays[0], delay_max_s=args.delays[1], measure_s=args.measure,
                  warmup_s=args.warmup)
    rows = anyio.run(_run, args.suite, args.levels, args.rounds, shape, backend_options={"use_uvloop": True})
    print(json.dumps({"medians": _medians(rows)}))


if __name__ == "__main__":
    main()
