"""Endpoint pools: makespan and calls per replica for one replica, three, and three of which one dies mid-run.

    python -m bench.endpoint_pool                       # ~40 s on 2 cores
    python -m bench.endpoint_pool --pilot 4 --latency 0.05   # smaller and faster

Each replica is the loopback mock in a process of its own (`bench.mock_server`: `tool_loop`, 3 turns an
episode, each reply `--latency` late) behind `[endpoints.pool]` with `max_concurrency` per replica, so one
replica is the bottleneck a pool removes. A whole sweep (`start_sweep`: probe, journal, engine; blind on
banking_l1 and retail_l1, `--pilot` tasks a window) runs against 1 replica, against 3, and against 3 of
which the second exits once it has answered a sixth of the calls (a count, not a time). Ideal = calls x
latency / (per-replica limit x replicas); with one dying, every replica busy until it has answered its
share (d calls each) and the survivors busy for the rest: d x latency / limit + (calls - 3d) x latency /
(2 x limit). Wall time is the whole `start_sweep` (suite load, probe, journal included). Rewards must be
the same in every case; calls per replica come from the journal (`Reader.replica_calls`).
"""

from __future__ import annotations

import argparse
import contextlib
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import anyio

from bench.machine import load_average
from bench.mock_server import mock_process
from runner.config.settings import SweepConfig
from runner.journal import read_only
from runner.schedule.sweep import start_sweep
from simulators.suite import build_suite

__all__ = ["PoolCase", "main", "run_case"]

TURNS = 3


@dataclass(frozen=True)
class PoolCase:
    name: str
    replicas: int
    dies_after: int | None = None
    """Calls the second replica answers before its process exits."""


@dataclass(frozen=True)
class PoolResult:
    case: PoolCase
    wall_s: float
    calls: int
    per_replica: list[tuple[str, int]]
    retried: int
    """Calls answered only after more than one attempt."""
    rewards: dict[str, float]
    status: str


def _config(urls: list[str], suite: Path, pilot: int, limit: int) -> SweepConfig:
    endpoint: dict[str, object] = {"kind": "openai-compatible", "model": "mock", "max_concurrency": limit}
    endpoint.update({"base_urls": urls} if len(urls) > 1 else {"base_url": urls[0]})
    return SweepConfig(models=("pool",), methods=("blind",), scenarios=("banking_l1", "retail_l1"),
                       dataset=str(suite), pilot=pilot, endpoints={"pool": endpoint}, allow_unpriced=True,
                       concurrency=64, model_concurrency=64)


async def run_case(case: PoolCase, suite: Path, folder: Path, pilot: int, limit: int,
                   latency_s: float) -> PoolResult:
    journal = folder / f"{case.name.replace(' ', '-')}.sqlite"
    async with contextlib.AsyncExitStack() as stack:
        urls = [await stack.enter_async_context(mock_process(latency_s, TURNS, case.dies_after if i == 1 else None))
                for i in range(case.replicas)]
        started = time.perf_counter()
        outcome = await start_sweep(_config([u + "/v1" for u in urls], suite, pilot, limit), journal, "none",
                                    lambda text: None)
        wall = time.perf_counter() - started
    async with read_only(journal) as reader:
        by_replica = await reader.replica_calls(outcome.run_id)
        calls = await reader.model_call_count(outcome.run_id) - 1  # less the probe
        ends = await reader.episode_ends(outcome.run_id)
    names = {u + "/v1": f"r{i + 1}" for i, u in enumerate(urls)}
    per_replica = sorted((names.get(r.replica, r.replica), r.answered) for r in by_replica) or [("r1", calls)]
    rewards = {f"{e.scenario}/{i}": e.reward for i, e in enumerate(ends)}
    return PoolResult(case, wall, calls, per_replica, sum(r.retried for r in by_replica), rewards, outcome.status)


async def _main(pilot: int, limit: int, latency_s: float, suite: Path | None) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        if suite is None:
            suite = folder / "suite"
            build_suite(suite, seed=0)
        first = await run_case(PoolCase("1 replica", 1), suite, folder, pilot, limit, latency_s)
        cases = [PoolCase("3 replicas", 3), PoolCase("3, r2 dies", 3, dies_after=max(1, first.calls // 6))]
        results = [first] + [await run_case(c, suite, folder, pilot, limit, latency_s) for c in cases]
    print(f"endpoint pools: {first.calls} calls, {latency_s * 1000:.0f} ms a reply, max_concurrency {limit} per "
          f"replica; load average {load_average()}")
    print("| case | status | wall s | ideal s | wall / ideal | calls per replica | retried | rewards as 1 replica |")
    print("|---|---|---|---|---|---|---|---|")
    for result in results:
        ideal = _ideal(result, latency_s, limit)
        spread = ", ".join(f"{name} {n}" for name, n in result.per_replica)
        died = f" (r2 exited at its answer {result.case.dies_after})" if result.case.dies_after else ""
        same = "yes" if result.rewards == first.rewards else "NO"
        print(f"| {result.case.name} | {result.status} | {result.wall_s:.2f} | {ideal:.2f} | "
              f"{result.wall_s / ideal:.2f} | {spread}{died} | {result.retried} | {same} |")


def _ideal(result: PoolResult, latency_s: float, limit: int) -> float:
    """All replicas busy all the time; with one dying: all of them until its last answer (so about its
    count each), the survivors for the rest."""
    replicas = result.case.replicas
    if result.case.dies_after is None:
        return result.calls * latency_s / (limit * replicas)
    dead = dict(result.per_replica).get("r2", 0)
    return dead * latency_s / limit + (result.calls - replicas * dead) * latency_s / (limit * (replicas - 1))


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.endpoint_pool")
    parser.add_argument("--pilot", type=int, default=10, help="tasks a window per phase (default 10)")
    parser.add_argument("--limit", type=int, default=4, help="max_concurrency per replica (default 4)")
    parser.add_argument("--latency", type=float, default=0.1, help="seconds before each reply (default 0.1)")
    parser.add_argument("--suite", type=Path, default=None, help="a built suite (default: build seed 0)")
    args = parser.parse_args(argv)
    anyio.run(_main, args.pilot, args.limit, args.latency, args.suite, backend_options={"use_uvloop": True})


if __name__ == "__main__":
    main()
