"""bench/eta_error.py on a tiny run: the table it prints has one row per estimator, its header's columns,
and ratios read as an ETA over the time the run really had left."""

from __future__ import annotations

from pathlib import Path

import anyio

from bench.eta_error import ESTIMATORS, POINTS, Measured, RunSpec, Sample, measure, table
from bench.harness import run_streams
from methods.registry import get_method_spec
from runner.config.plan import Stream, plan_streams
from runner.config.settings import SweepConfig
from runner.display.progress import StreamProgress
from runner.schedule.engine import Engine
from simulators.dataset import load_dataset


def test_a_tiny_run_gives_one_row_per_estimator(built_suite: Path) -> None:
    spec = RunSpec("tiny", ("banking_l1",), ("tabular",), pilot=2)
    [run] = anyio.run(measure, [spec], built_suite, 0.05)
    assert run.units == 2 * (4 * 2)  # 4 windows x (2 serving + 2 test)
    lines = table([run], ESTIMATORS)
    header = lines[0].strip("|").split("|")
    assert len(header) == 4 + len(POINTS) + 1
    rows = lines[2:]
    assert [row.split("|")[4].strip() for row in rows] == list(ESTIMATORS)
    assert all(len(row.strip("|").split("|")) == len(header) for row in rows)


def test_a_ratio_is_the_eta_over_the_time_really_left() -> None:
    run = Measured(RunSpec("r", ("banking_l1",), ("tabular",)), units=10, wall_s=100.0)
    sample = Sample(at_s=40.0, done=4, eta_s={"after": 90.0, "before": None})
    assert run.ratio(sample, "after") == 90.0 / 60.0
    assert run.ratio(sample, "before") is None


def test_the_engine_reports_each_episode_as_the_eta_reads_it(built_suite: Path, tmp_path: Path) -> None:
    """The ETA tells a serving episode's end from a test episode's by the engine's order of reports (the
    count raised, then the end): through the real engine, every episode is timed as its own phase."""
    config = SweepConfig(models=("scripted",), methods=("tabular",), scenarios=("banking_l1",),
                         dataset=str(built_suite), pilot=2).validate("test")
    dataset = load_dataset(built_suite, only=config.scenarios)
    streams = plan_streams(config.models, config.methods, [dataset.scenarios["banking_l1"]],
                           learns=lambda name: get_method_spec(name).learns, pilot=2, replicas=1)
    seen: dict[str, StreamProgress] = {}

    async def drive(engine: Engine, planned: list[Stream]) -> None:
        await engine.run(planned)
        seen.update(engine.progress.streams)

    async def main() -> None:
        await run_streams(config, dataset, streams, tmp_path / "j.sqlite", drive=drive)

    anyio.run(main)
    [live] = seen.values()
    assert (live.serving_timed, live.test_timed) == (live.serving_done, live.test_done) == (8, 8)
    assert len(live.serving_finished_at) == 8
    assert live.serving_turns > 0 and live.test_turns > 0
    assert live.turns_started == live.serving_turns + live.test_turns  # every call in a finished episode
