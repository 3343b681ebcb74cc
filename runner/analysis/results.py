"""`Results`: a journal's runs, episodes, per-setting scores and model calls as typed rows (and, through
`runner.analysis.frames`, as data frames). Each read opens the journal read-only, as `shiftbench report`
does, so a run being written can be read beside it.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple, TypeVar

from runner.common.optional import load_extra
from runner.journal import ModelCallRow, read_only
from runner.journal.analysis_queries import EpisodeFigures
from runner.report import Report, build_report
from runner.report.model import Pair
from runner.views.runs import RunSummary, list_runs
from simulators.errors import ShiftbenchInputError

if TYPE_CHECKING:
    import pandas

__all__ = ["Results", "Score"]

T = TypeVar("T")
METRICS = ("hidden", "fully_specified")


class Score(NamedTuple):
    """One stream's score on one setting (scenario) for one task category, with its 95% interval."""

    model: str
    method: str
    scenario: str
    metric: str
    """`hidden` (the setting's H) or `fully_specified` (its F)."""
    score: float | None
    """Percent of the full reward; None when no test task of that category finished."""
    ci_low: float | None
    ci_high: float | None
    interval_note: str
    """Why there is no interval where the report says so (e.g. "no interval (1 family)"); "" otherwise."""
    tasks: int
    """Finished test tasks of the setting."""
    planned: int
    complete: bool


class Results:
    """The runs of one journal file. `run_id` None means the newest run in the journal."""

    def __init__(self, journal: Path | str) -> None:
        self.journal = Path(journal).expanduser()
        if not self.journal.is_file():
            raise ShiftbenchInputError(f"{self.journal}: no journal there; give the file `shiftbench run` wrote "
                                       "(default .shiftbench/journal.sqlite)")

    # ------------------------------------------------------------------------------------- typed rows

    def runs(self) -> list[RunSummary]:
        return _run(list_runs, self.journal)

    def report(self, run_id: str | None = None) -> Report:
        """The run's whole report (what `shiftbench report --json` seals), as the typed model."""
        return _run(build_report, self.journal, self._run_id(run_id))

    def scores(self, run_id: str | None = None) -> list[Score]:
        report = self.report(run_id)
        return [_score(stream.model, stream.method, name, metric, setting)
                for stream in report.streams for name, setting in stream.settings.items() for metric in METRICS]

    def episodes(self, run_id: str | None = None) -> list[EpisodeFigures]:
        return _run(_episodes, self.journal, self._run_id(run_id))

    def model_calls(self, run_id: str | None = None) -> list[ModelCallRow]:
        return _run(_model_calls, self.journal, self._run_id(run_id))

    # ------------------------------------------------------------------------------------- data frames

    def runs_df(self) -> pandas.DataFrame:
        _need_pandas("runs_df")
        from runner.analysis.frames import runs_frame

        return runs_frame(self.runs())

    def scores_df(self, run_id: str | None = None) -> pandas.DataFrame:
        _need_pandas("scores_df")
        from runner.analysis.frames import rows_frame

        run_id = self._run_id(run_id)
        return rows_frame(run_id, self.scores(run_id), Score._fields)

    def episodes_df(self, run_id: str | None = None) -> pandas.DataFrame:
        _need_pandas("episodes_df")
        from runner.analysis.frames import rows_frame

        run_id = self._run_id(run_id)
        return rows_frame(run_id, self.episodes(run_id), EpisodeFigures._fields)

    def model_calls_df(self, run_id: str | None = None) -> pandas.DataFrame:
        _need_pandas("model_calls_df")
        from runner.analysis.frames import rows_frame

        run_id = self._run_id(run_id)
        return rows_frame(run_id, self.model_calls(run_id), ModelCallRow._fields)

    def _run_id(self, run_id: str | None) -> str:
        if run_id is not None:
            return run_id
        runs = self.runs()
        if not runs:
            raise ShiftbenchInputError(f"{self.journal}: the journal holds no run yet")
        return max(runs, key=lambda run: run.created_at).run_id


def _score(model: str, method: str, scenario: str, metric: str, setting: Any) -> Score:
    value: float | None = getattr(setting, metric)
    low, high, note = _interval(getattr(setting, f"{metric}_ci"))
    return Score(model, method, scenario, metric, value, low, high, note, setting.n, setting.planned,
                 setting.complete)


def _interval(pair: Pair) -> tuple[float | None, float | None, str]:
    if isinstance(pair, str):
        return None, None, pair
    if pair is None:
        return None, None, ""
    return float(pair[0]), float(pair[1]), ""


async def _episodes(journal: Path, run_id: str) -> list[EpisodeFigures]:
    async with read_only(journal) as reader:
        await _known(reader, journal, run_id)
        return await reader.episode_figures(run_id)


async def _model_calls(journal: Path, run_id: str) -> list[ModelCallRow]:
    async with read_only(journal) as reader:
        await _known(reader, journal, run_id)
        return await reader.model_calls(run_id)


async def _known(reader: Any, journal: Path, run_id: str) -> None:
    if await reader.run(run_id) is None:
        raise ShiftbenchInputError(f"{journal}: no run '{run_id}' in this journal; Results(...).runs() lists them")


def _run(fn: Callable[..., Coroutine[Any, Any, T]], *args: Any) -> T:
    """Run a read to completion from synchronous code, also where an event loop already runs in this
    thread (a notebook's kernel): then on a loop of its own in a worker thread."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(fn(*args))
    box: dict[str, Any] = {}

    def work() -> None:
        try:
            box["value"] = asyncio.run(fn(*args))
        except BaseException as exc:  # handed back to the caller's thread as it was raised
            box["error"] = exc

    worker = threading.Thread(target=work, name="shiftbench-read")
    worker.start()
    worker.join()
    if "error" in box:
        raise box["error"]
    result: T = box["value"]
    return result


def _need_pandas(feature: str) -> None:
    """The frames module, or one line naming the extra when pandas is not installed."""
    load_extra("runner.analysis.frames", "pandas", f"Results.{feature}")
