"""The typed rows of `runner.analysis.results` as pandas data frames: one column per field, in the
rows' order, with the run's id first, times as UTC timestamps. Imported only when a `*_df` method runs
(it needs the `pandas` extra)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict
from typing import Any

import pandas

from runner.views.runs import RunSummary

__all__ = ["rows_frame", "runs_frame"]

_TIMES = ("created_at", "finished_at")
_RUN_COLUMNS = ("run_id", "created_at", "status", "stop_reason", "done", "total", "spend_usd", "budget_usd",
                "models", "methods", "scenarios", "labels")
"""A run's summary without its nested figures (cache, replicas, retries: `Results.runs()` has them)."""


def rows_frame(run_id: str, rows: Sequence[tuple[Any, ...]], columns: Sequence[str]) -> pandas.DataFrame:
    frame = pandas.DataFrame.from_records(list(rows), columns=list(columns))
    if "run_id" not in frame.columns:  # a model call's row names its run already
        frame.insert(0, "run_id", run_id)
    return _times(frame)


def runs_frame(runs: Sequence[RunSummary]) -> pandas.DataFrame:
    records = [{key: value for key, value in asdict(run).items() if key in _RUN_COLUMNS} for run in runs]
    return _times(pandas.DataFrame.from_records(records, columns=list(_RUN_COLUMNS)))


def _times(frame: pandas.DataFrame) -> pandas.DataFrame:
    for column in _TIMES:
        if column in frame.columns:
            frame[column] = pandas.to_datetime(frame[column], unit="s", utc=True)
    return frame
