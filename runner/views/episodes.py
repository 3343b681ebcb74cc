"""Reading episodes of one run for the views (`show`, the HTML report, `export`), through the journal's
named queries. Read-only: nothing here drives a run. (`state`'s reading is runner.views.states.)
"""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

from runner.common.journal_flag import journal_flag
from runner.journal import EpisodeFilter, Reader, RunRow, read_only
from runner.views.filters import check_names
from runner.views.transcript import FailedSetting, SettingKey, Transcript
from simulators.errors import ShiftbenchInputError

__all__ = ["load_failed", "load_transcripts", "require_run", "split_stream"]


async def require_run(reader: Reader, path: Path, run_id: str) -> RunRow:
    run = await reader.run(run_id)
    if run is None:
        raise ShiftbenchInputError(f"{path}: no run '{run_id}' in this journal; "
                                   f"`shiftbench runs --journal {path}` lists the runs it holds")
    return run


def split_stream(text: str, flag: str = "--stream") -> tuple[str, str]:
    """`model/method`; the model may itself hold '/', the method never does."""
    model, _, method = text.rpartition("/")
    if not model or not method:
        raise ShiftbenchInputError(f"{flag} {text!r}: name a stream as model/method, e.g. scripted/tabular")
    return model, method


async def load_transcripts(path: Path, run_id: str, where: EpisodeFilter,
                           limit: int) -> tuple[list[Transcript], int]:
    """The first `limit` matching episodes (-1: all) and how many match in all."""
    async with read_only(path) as reader:
        await require_run(reader, path, run_id)
        rows = await reader.episode_details(run_id, where, limit)
        total = await reader.episode_matches(run_id, where)
        if not total:  # a name the run does not have is an error, not an empty answer
            check_names(run_id, where, await reader.units_of_run(run_id),
                        where.unit_id is None or await reader.has_unit(run_id, where.unit_id), journal_flag(path))
    return [Transcript.of(run_id, row) for row in rows], total


async def load_failed(path: Path, run_id: str, per_setting: int) -> dict[SettingKey, FailedSetting]:
    """Every setting's failed test episodes for the HTML report: the first `per_setting` in full."""
    async with read_only(path) as reader:
        await require_run(reader, path, run_id)
        counts = await reader.failed_counts(run_id)
        rows = await reader.failed_per_setting(run_id, per_setting)
    shown: dict[SettingKey, list[Transcript]] = defaultdict(list)
    for row in rows:
        shown[(row.model, row.method, row.scenario)].append(Transcript.of(run_id, row))
    return {key: FailedSetting(shown=shown.get(key, []), total=total) for key, total in counts.items()}
