"""A sweep live and with `--batch tests`, on each mock batch API, priced at the providers' published live and
batch prices: total cost live against batched, batch rounds, wall time with a mock batch latency of a few
seconds, and whether every episode earned the same reward both ways.

For each dialect (the mock's OpenAI Batch API behind an OpenAI endpoint priced as `openai:gpt-5-mini`, and
its Message Batches behind an Anthropic endpoint priced as `anthropic:claude-sonnet-4-5`), the same sweep
runs twice on a fresh mock: live, then with `--batch tests`. The mock answers as the offline scripted agent
would (`bench.sweep_cost.scripted_responder`) and bills prompts as the provider's cache would, so the
episodes take the built-in suite's real turns and the costs carry realistic cache hit rates; its batch
APIs answer each item as the live endpoint would, each batch ending `--latency` seconds after its
creation. Every figure comes from the run's own report (`runner.report`): spend live and batched, what
batching saved, batches, rounds and items per outcome.

    python -m bench.batch_sweep [--methods blind,oracle,tabular] [--scenarios ...] [--pilot N]
                                [--latency 3] [--suite DIR] [--json FILE]

`--pilot N` (N tasks of each window per phase) makes it small; without it the whole suite runs.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import anyio
import orjson

from bench.mock_batch_state import BatchSettings
from bench.mock_cache import PrefixCache
from bench.mock_provider import serve_mock
from bench.sweep_cost import scripted_responder
from runner.config.prices import Price
from runner.config.settings import SweepConfig
from runner.cost.pricing import default_prices
from runner.journal import read_only
from runner.report import build_report
from runner.schedule.sweep import start_sweep
from simulators.protocol import SCENARIOS
from simulators.suite import build_suite

__all__ = ["DIALECTS", "Measured", "main", "measure_dialect"]

DIALECTS = {"openai": ("mock-openai", "openai", "openai:gpt-5-mini"),
            "anthropic": ("mock-anthropic", "anthropic", "anthropic:claude-sonnet-4-5")}
"""Dialect -> (the sweep's model name, its endpoint kind, the published model whose prices it is billed at)."""
_KEY = "sk-loopback-batch-sweep-0000"


@dataclass(frozen=True)
class Run:
    run_id: str
    status: str
    wall_s: float
    cost_usd: float
    episodes: int
    rewards: dict[str, float]
    by_method: dict[str, float]


@dataclass(frozen=True)
class Measured:
    dialect: str
    priced_as: str
    methods: tuple[str, ...]
    episodes: int
    live_usd: float
    batched_usd: float
    """The batched run's whole spend: serving and methods live, test calls at the batch price."""
    saved_usd: float
    """The batched run's batch calls at the live price minus what they cost (its report's figure)."""
    batch_calls: int
    batches: int
    rounds: int
    items: dict[str, int]
    live_wall_s: float
    batched_wall_s: float
    turnaround_p50_s: float | None
    same_rewards: int
    """Episodes with the same reward in both runs (of `episodes`)."""
    by_method: dict[str, tuple[float, float]]
    """Method -> (live run's spend, batched run's spend)."""


def _table(price: Price) -> dict[str, Any]:
    return {name: _table(getattr(price, name)) if name == "batch" else value
            for name, value in asdict(price).items() if value is not None}


async def _run(suite: Path, journal: Path, dialect: str, methods: Sequence[str], scenarios: Sequence[str],
               pilot: int, latency_s: float, batch: str) -> tuple[Run, Any]:
    name, kind, priced_as = DIALECTS[dialect]
    async with serve_mock(scripted_responder(), cache=PrefixCache()) as mock:
        mock.batches.settings = BatchSettings(latency_s=latency_s)
        base_url = mock.base_url if kind == "anthropic" else f"{mock.base_url}/v1"
        config = SweepConfig(
            models=(name,), methods=tuple(methods), scenarios=tuple(scenarios), dataset=str(suite), pilot=pilot,
            concurrency=32, endpoints={name: {"kind": kind, "model": f"{dialect}-mock", "base_url": base_url}},
            prices={name: _table(default_prices()[priced_as])}, batch=batch,
            batch_settings={"wait_s": 1.0, "poll_s": 0.5, "poll_max_s": 2.0})
        started = time.perf_counter()
        outcome = await start_sweep(config, journal, "none", lambda _: None)
        wall = time.perf_counter() - started
    if outcome.status != "completed":
        raise SystemExit(f"batch_sweep: the {dialect} {batch} run ended {outcome.status}: {outcome.reason}")
    report = await build_report(journal, outcome.run_id)
    async with read_only(journal) as reader:
        rewards = {e.unit_id: e.reward for e in await reader.episode_figures(outcome.run_id)}
    return Run(outcome.run_id, outcome.status, wall, report.cost_usd.total, len(rewards), rewards,
               {s.method: s.cost_usd.total for s in report.streams}), report


async def measure_dialect(suite: Path, folder: Path, dialect: str, methods: Sequence[str],
                          scenarios: Sequence[str], pilot: int, latency_s: float) -> Measured:
    live, _ = await _run(suite, folder / f"{dialect}-live.sqlite", dialect, methods, scenarios, pilot, latency_s,
                         "off")
    batched, report = await _run(suite, folder / f"{dialect}-batch.sqlite", dialect, methods, scenarios, pilot,
                                 latency_s, "tests")
    figures = report.batch
    if figures is None:
        raise SystemExit(f"batch_sweep: the {dialect} --batch tests run sent nothing through a batch")
    same = sum(1 for unit, reward in live.rewards.items() if batched.rewards.get(unit) == reward)
    return Measured(dialect, DIALECTS[dialect][2], tuple(methods), live.episodes, live.cost_usd, batched.cost_usd,
                    figures.spend.saved_usd, figures.spend.batch_calls, figures.batches, figures.rounds,
                    figures.items, live.wall_s, batched.wall_s, figures.turnaround_p50_s,
                    same if batched.episodes == live.episodes else -1,
                    {m: (spent, batched.by_method.get(m, 0.0)) for m, spent in live.by_method.items()})


def render(rows: Sequence[Measured], latency_s: float) -> str:
    lines = [f"| mock batch API | priced as | episodes | live $ | batched $ | saved | batch calls | batches | rounds "
             f"| items (succeeded / failed) | wall live | wall batched (latency {latency_s:g} s) | same rewards |",
             "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for r in rows:
        failed = r.items["errored"] + r.items["expired"] + r.items["canceled"]
        share = 1 - r.batched_usd / r.live_usd if r.live_usd else 0.0
        lines.append(f"| {r.dialect} | {r.priced_as} | {r.episodes:,} | ${r.live_usd:,.2f} | ${r.batched_usd:,.2f} | "
                     f"{100 * share:.0f}% | {r.batch_calls:,} | {r.batches} | {r.rounds} | "
                     f"{r.items['succeeded']:,} / {failed} | {r.live_wall_s:.0f} s | {r.batched_wall_s:.0f} s | "
                     f"{r.same_rewards:,} of {r.episodes:,} |")
    return "\n".join(lines)


def render_methods(rows: Sequence[Measured]) -> str:
    lines = ["| mock batch API | method | live $ | batched $ | saved |", "|---|---|---:|---:|---:|"]
    for r in rows:
        for method, (live, batched) in r.by_method.items():
            share = f"{100 * (1 - batched / live):.0f}%" if live else "-"
            lines.append(f"| {r.dialect} | {method} | ${live:,.2f} | ${batched:,.2f} | {share} |")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.batch_sweep", description=__doc__.split("\n\n")[0])
    parser.add_argument("--methods", default="blind,oracle,tabular")
    parser.add_argument("--scenarios", default=",".join(SCENARIOS))
    parser.add_argument("--dialects", default="openai,anthropic")
    parser.add_argument("--pilot", type=int, default=0, help="N tasks of each window per phase (0: every task)")
    parser.add_argument("--latency", type=float, default=3.0, help="seconds from a batch's creation to its end")
    parser.add_argument("--suite", type=Path, help="a built suite (default: build one in a temporary folder)")
    parser.add_argument("--json", type=Path, help="also write the rows as JSON")
    args = parser.parse_args(argv)
    methods, scenarios = args.methods.split(","), args.scenarios.split(",")
    os.environ.setdefault("ANTHROPIC_API_KEY", _KEY)  # the loopback mock's; nothing leaves the machine
    os.environ.setdefault("OPENAI_API_KEY", _KEY)
    with tempfile.TemporaryDirectory(prefix="batch-sweep-") as tmp:
        folder = Path(tmp)
        suite = args.suite
        if suite is None:
            suite = folder / "suite"
            build_suite(suite)
        rows: list[Measured] = []
        for dialect in args.dialects.split(","):  # each dialect's figures out as soon as they are measured
            rows.append(anyio.run(measure_dialect, suite, folder, dialect, methods, scenarios, args.pilot,
                                  args.latency))
            load = os.getloadavg()[0]
            print(render(rows, args.latency) + "\n\n" + render_methods(rows), flush=True)
            print(f"\n(load average {load:.1f}; {time.strftime('%Y-%m-%d %H:%M %Z')})\n", flush=True)
            if args.json:
                args.json.write_bytes(orjson.dumps([asdict(r) for r in rows], option=orjson.OPT_INDENT_2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
