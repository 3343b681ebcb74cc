"""`--batch tests`: when should test sets start? Each window's as its window ends (`start = "window"`), or all
of them once every serving stream has finished (`start = "after_serving"`)? Measured as batch rounds (the
provider batches a sweep submits; each costs a batch latency of wall time) and wall time, against the mock
provider in its own process with a batch latency of a few seconds and live replies of `--live-latency`.

    python -m bench.batch_rounds                                    # blind, oracle, tabular; 2 scenarios
    python -m bench.batch_rounds --pilot 4 --batch-latency 3 --scenarios retail_l1,banking_l1

A live sweep (`--batch off`) of the same work runs first, for its wall time and its rewards: every
batched sweep must have the same per-episode rewards.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from pathlib import Path

import anyio

from bench.mock_batch_state import BatchSettings
from bench.mock_server import mock_process
from runner.config.settings import SweepConfig
from runner.journal import read_only
from runner.schedule.sweep import start_sweep

LIVE = {"input": 2.0, "cached_input": 0.5, "cache_write": 2.5, "output": 8.0}
BATCH = {"input": 1.0, "cached_input": 0.25, "cache_write": 1.25, "output": 4.0}
Episode = tuple[str, str, str, int, int]
"""A test episode: method, scenario, task, window, repetition."""


def config(url: str, suite: Path, args: argparse.Namespace, start: str | None) -> SweepConfig:
    model = f"openai-compatible:mock@{url}/v1"
    settings = {"wait_s": args.wait, "poll_s": 0.5, "poll_max_s": 1.0, "start": start or "window"}
    return SweepConfig(models=(model,), methods=tuple(args.methods.split(",")),
                       scenarios=tuple(args.scenarios.split(",")), dataset=str(suite), pilot=args.pilot,
                       block_size=args.block_size, prices={model: {**LIVE, "batch": BATCH}},
                       batch="off" if start is None else "tests", batch_settings=settings)


async def figures(journal: Path, run_id: str) -> tuple[dict[Episode, float], int, int, float]:
    """(test rewards by method, scenario, task, window and repetition; batches; items batched; spend)."""
    async with read_only(journal) as reader:
        rewards = {(o.method, o.scenario, o.task_id, o.window, o.repetition): o.reward
                   for o in await reader.test_outcomes(run_id)}
        batches = await reader.provider_batches(run_id)
        spend = (await reader.spend(run_id)).total
    return rewards, len(batches), sum(b.items for b in batches), spend


async def measure(args: argparse.Namespace) -> None:
    suite = Path(args.suite) if args.suite else _built_suite()
    os.environ.setdefault("OPENAI_COMPATIBLE_API_KEY", "sk-bench")
    print(f"load {os.getloadavg()[0]:.2f}; batch latency {args.batch_latency:g} s, live replies "
          f"{args.live_latency:g} s, wait_s {args.wait:g}, pilot {args.pilot}, methods {args.methods}, "
          f"scenarios {args.scenarios}")
    print(f"{'setting':<16}{'wall s':>9}{'batches':>9}{'items':>8}{'spend $':>10}  rewards")
    reference: dict[Episode, float] | None = None
    async with mock_process(args.live_latency, args.turns, batch=BatchSettings(latency_s=args.batch_latency)) as url:
        with tempfile.TemporaryDirectory() as folder:
            for start in (None, "window", "after_serving"):
                journal = Path(folder) / f"{start or 'live'}.sqlite"
                began = time.perf_counter()
                outcome = await start_sweep(config(url, suite, args, start), journal, "none", lambda line: None)
                wall = time.perf_counter() - began
                rewards, batches, items, spend = await figures(journal, outcome.run_id)
                reference = rewards if reference is None else reference
                same = "same" if rewards == reference else "DIFFERENT"
                print(f"{start or 'live':<16}{wall:>9.1f}{batches:>9}{items:>8}{spend:>10.4f}  {same} "
                      f"({outcome.status}, {len(rewards)} test episodes)")


def _built_suite() -> Path:
    from simulators.suite import build_suite

    root = Path(tempfile.mkdtemp(prefix="batch-rounds-")) / "seed-0"
    build_suite(root, seed=0)
    return root


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--suite", help="a built suite (default: build seed 0 into a temporary folder)")
    parser.add_argument("--scenarios", default="retail_l1,banking_l1")
    parser.add_argument("--methods", default="blind,oracle,tabular")
    parser.add_argument("--pilot", type=int, default=3)
    parser.add_argument("--block-size", type=int, default=1)
    parser.add_argument("--turns", type=int, default=3, help="model calls per episode (the mock's tool loop)")
    parser.add_argument("--batch-latency", type=float, default=3.0)
    parser.add_argument("--live-latency", type=float, default=0.05)
    parser.add_argument("--wait", type=float, default=1.0, help="[batch] wait_s")
    anyio.run(measure, parser.parse_args())


if __name__ == "__main__":
    main()
