"""The dashboard's ETA against the real end of three offline runs of different sizes (issue 30, item 4).

Each run drives the real engine over the built-in suite on the in-process scripted model (as a sweep
does, through `bench.harness.run_streams`) while a sampler beside it reads the run's live progress every
`--every` seconds and asks each estimator what the dashboard would show. Once the run has ended, each
sample's ETA is divided by the time the run really had left from it: 1.0 is exact, 2.0 says twice too
long. Estimators: `before`, the ETA as it stood before this bench (the run's unit rate and each stream's
serving rate, both averaged since the process started; kept here as written so the figures can be
made again), and `after`, `runner.display.eta` as the dashboard shows it now, with its two bounds
apart (`serving`, `work`) to show which one carries it.

    python -m bench.eta_error                   # the three runs (a few minutes on 2 cores)
    python -m bench.eta_error --only small --every 2
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio

from bench.harness import run_streams
from bench.mock_server import mock_process
from methods.registry import get_method_spec
from runner.config.plan import Stream, plan_streams
from runner.config.settings import SweepConfig
from runner.display.eta import eta_parts
from runner.display.progress import RunProgress
from runner.schedule.engine import Engine
from simulators.dataset import load_dataset
from simulators.suite import build_suite

__all__ = ["ESTIMATORS", "POINTS", "RUNS", "Measured", "RunSpec", "Sample", "before_eta", "main", "measure", "table"]


@dataclass(frozen=True)
class RunSpec:
    name: str
    scenarios: tuple[str, ...]
    methods: tuple[str, ...]
    pilot: int = 0
    mock: bool = False
    """False: the in-process scripted model (every episode on the run's one CPU); True: the loopback mock
    provider in a process of its own, MOCK_LATENCY_S a reply and MOCK_CONCURRENCY calls at once (a
    provider's pace: serving waits on the model, test sets on the endpoint's limit)."""


SMALL = ("retail_l1", "banking_l1")
MEDIUM = ("retail_l2", "banking_l2", "pitch_l2")
LARGE = ("retail_l1", "retail_l2", "retail_l3", "banking_l1", "banking_l2", "banking_l3")
RUNS = (
    RunSpec("small", SMALL, ("tabular", "rag")),
    RunSpec("medium", MEDIUM, ("blind", "tabular", "rag")),
    RunSpec("large", LARGE, ("blind", "oracle", "tabular", "rag")),
    RunSpec("mock-small", SMALL, ("tabular", "rag"), pilot=30, mock=True),
    RunSpec("mock-medium", MEDIUM, ("blind", "tabular", "rag"), pilot=40, mock=True),
    RunSpec("mock-large", LARGE, ("blind", "oracle", "tabular", "rag"), pilot=40, mock=True),
)
"""The offline three are the sizes of the measurement before the fix (3,236, 7,156 and 18,388 units)."""
MOCK_LATENCY_S = 0.05
MOCK_TURNS = 3
MOCK_CONCURRENCY = 8

POINTS = (0.1, 0.25, 0.5, 0.75, 0.9)
"""Where in each run (share of its wall time) the table reads the ETA."""

ESTIMATORS = ("before", "after", "serving", "work")


@dataclass
class Sample:
    at_s: float
    """Seconds since the engine started."""
    done: int
    eta_s: dict[str, float | None]


@dataclass
class Measured:
    spec: RunSpec
    units: int
    wall_s: float
    samples: list[Sample] = field(default_factory=list)

    def ratio(self, sample: Sample, estimator: str) -> float | None:
        """The estimator's ETA at `sample` over the time the run really had left from it."""
        eta, left = sample.eta_s[estimator], self.wall_s - sample.at_s
        return None if eta is None or left <= 0 else eta / left


def before_eta(progress: RunProgress) -> float | None:
    """The ETA as the dashboard computed it before issue 30's fix, kept as it was written."""
    finished_here = progress.done - progress.resumed_units
    elapsed = progress.clock() - progress.started
    if finished_here <= 0 or elapsed <= 0:
        return None
    throughput = (progress.total - progress.done) * elapsed / finished_here
    longest = None
    for stream in progress.streams.values():
        served_here = stream.serving_done - stream.serving_resumed
        remaining = stream.serving_total - stream.serving_done
        if remaining <= 0 or served_here <= 0:
            continue
        seconds = remaining * elapsed / served_here
        longest = seconds if longest is None else max(longest, seconds)
    return max(throughput, longest or 0.0)


def _estimates(progress: RunProgress) -> dict[str, float | None]:
    parts = eta_parts(progress)
    return {"before": before_eta(progress), "after": parts.eta_s, "serving": parts.serving_s,
            "work": parts.work_s}


def _config(spec: RunSpec, suite: Path, mock_url: str | None) -> SweepConfig:
    if mock_url is None:
        return SweepConfig(models=("scripted",), methods=spec.methods, scenarios=spec.scenarios, dataset=str(suite),
                           pilot=spec.pilot).validate("bench")
    endpoint = {"kind": "openai-compatible", "model": "mock", "base_url": mock_url + "/v1",
                "max_concurrency": MOCK_CONCURRENCY}
    return SweepConfig(models=("mock",), methods=spec.methods, scenarios=spec.scenarios, dataset=str(suite),
                       pilot=spec.pilot, endpoints={"mock": endpoint}, allow_unpriced=True).validate("bench")


async def _run(spec: RunSpec, suite: Path, workdir: Path, every_s: float) -> Measured:
    if not spec.mock:
        return await _run_with(spec, _config(spec, suite, None), suite, workdir, every_s)
    async with mock_process(MOCK_LATENCY_S, MOCK_TURNS) as url:
        return await _run_with(spec, _config(spec, suite, url), suite, workdir, every_s)


async def _run_with(spec: RunSpec, config: SweepConfig, suite: Path, workdir: Path, every_s: float) -> Measured:
    dataset = load_dataset(suite, only=spec.scenarios)
    streams = plan_streams(config.models, config.methods, [dataset.scenarios[n] for n in spec.scenarios],
                           learns=lambda name: get_method_spec(name).learns, pilot=config.pilot,
                           replicas=config.replicas)
    samples: list[Sample] = []
    clock: dict[str, float] = {}

    async def drive(engine: Engine, planned: list[Stream]) -> None:
        clock["started"] = time.perf_counter()

        async def sampler() -> None:
            while True:
                await anyio.sleep(every_s)
                samples.append(Sample(time.perf_counter() - clock["started"], engine.progress.done,
                                      _estimates(engine.progress)))

        async with anyio.create_task_group() as group:
            group.start_soon(sampler)
            await engine.run(planned)
            clock["ended"] = time.perf_counter()
            group.cancel_scope.cancel()

    run = await run_streams(config, dataset, streams, workdir / f"{spec.name}.sqlite", drive=drive)
    wall = clock["ended"] - clock["started"]
    return Measured(spec, run.episodes, wall, [s for s in samples if s.at_s < wall])


async def measure(specs: Sequence[RunSpec], suite: Path, every_s: float) -> list[Measured]:
    with tempfile.TemporaryDirectory(prefix="shiftbench-eta-") as tmp:
        return [await _run(spec, suite, Path(tmp), every_s) for spec in specs]


def _at(run: Measured, share: float) -> Sample | None:
    """The last sample at or before `share` of the run's wall time."""
    before = [s for s in run.samples if s.at_s <= share * run.wall_s]
    return before[-1] if before else None


def _ratio_text(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}x"


def _range_text(run: Measured, estimator: str) -> str:
    ratios = [r for s in run.samples if POINTS[0] * run.wall_s <= s.at_s <= POINTS[-1] * run.wall_s
              and (r := run.ratio(s, estimator)) is not None]
    return f"{min(ratios):.2f}-{max(ratios):.2f}x" if ratios else "-"


def table(runs: Sequence[Measured], estimators: Sequence[str] = ("before", "after")) -> list[str]:
    """Markdown rows: per run and estimator, ETA / actual remaining at each point and over every sample."""
    head = ["run", "units", "wall", "ETA", *(f"at {int(100 * p)}%" for p in POINTS), "10-90% range"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for run in runs:
        for estimator in estimators:
            at = [_at(run, p) for p in POINTS]
            cells = [run.spec.name, f"{run.units:,}", f"{run.wall_s:.0f} s", estimator,
                     *(_ratio_text(None if s is None else run.ratio(s, estimator)) for s in at),
                     _range_text(run, estimator)]
            lines.append("| " + " | ".join(cells) + " |")
    return lines


def _as_json(run: Measured) -> dict[str, Any]:
    return {"run": run.spec.name, "scenarios": run.spec.scenarios, "methods": run.spec.methods, "units": run.units,
            "wall_s": round(run.wall_s, 2),
            "samples": [{"at_s": round(s.at_s, 2), "done": s.done,
                         **{k: None if v is None else round(v, 2) for k, v in s.eta_s.items()}}
                        for s in run.samples]}


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.eta_error", description=__doc__.split("\n")[0])
    parser.add_argument("--only", nargs="*", choices=[r.name for r in RUNS], help="runs to make (default: all)")
    parser.add_argument("--every", type=float, default=5.0, help="seconds between two samples (default 5)")
    parser.add_argument("--suite", type=Path, help="a built suite (default: build seed 0 in a temporary folder)")
    parser.add_argument("--json", type=Path, help="write every sample here")
    args = parser.parse_args(argv)
    specs = [r for r in RUNS if not args.only or r.name in args.only]
    load = [round(x, 2) for x in os.getloadavg()]
    with tempfile.TemporaryDirectory(prefix="shiftbench-eta-suite-") as tmp:
        suite = args.suite
        if suite is None:
            suite = Path(tmp) / "suite"
            build_suite(suite, seed=0)
        runs = anyio.run(measure, specs, suite, args.every)
    print(f"load before {load}, after {[round(x, 2) for x in os.getloadavg()]}")
    print("\n".join(table(runs, ESTIMATORS)))
    if args.json:
        args.json.write_text(json.dumps([_as_json(r) for r in runs], indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
