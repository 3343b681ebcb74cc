"""bench/eta_error.py on a tiny run: the table it prints has one row per estimator, its header's columns,
and ratios read as an ETA over the time the run really had left."""

from __future__ import annotations

from pathlib import Path

import anyio

from bench.eta_error import ESTIMATORS, POINTS, Measured, RunSpec, Sample, measure, table


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
