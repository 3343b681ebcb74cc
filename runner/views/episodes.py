"""Reading episodes and method states of one run for the views (`show`, `state`, the HTML report,
`export`), through the journal's named queries. Read-only: nothing here drives a run.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

from runner.journal import CheckpointKey, EpisodeDetail, EpisodeFilter, Reader, RunRow, StreamOfRun, read_only
from runner.views.transcript import FailedSetting, SettingKey, Transcript
from simulators.errors import ShiftbenchInputError
from simulators.record import EpisodeRecord

__all__ = ["MethodState", "load_failed", "load_state", "load_transcripts", "require_run", "split_stream",
           "transcript_of"]


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


def transcript_of(run_id: str, row: EpisodeDetail) -> Transcript:
    return Transcript(
        run_id=run_id, unit_id=row.unit_id, model=row.model, method=row.method, scenario=row.scenario,
        phase=row.phase, window=row.window, task_id=row.task_id, category=row.category, reward=row.reward,
        judge=row.judge, grade_details=orjson.loads(row.grade_details), turns=row.turns, tool_calls=row.tool_calls,
        input_tokens=row.input_tokens, cached_input_tokens=row.cached_input_tokens, output_tokens=row.output_tokens,
        cost_usd=row.cost_usd, latency_s=row.latency_s, end_reason=row.end_reason,
        record=EpisodeRecord.from_json(orjson.loads(row.record)))


async def load_transcripts(path: Path, run_id: str, where: EpisodeFilter,
                           limit: int) -> tuple[list[Transcript], int]:
    """The first `limit` matching episodes (-1: all) and how many match in all."""
    async with read_only(path) as reader:
        await require_run(reader, path, run_id)
        rows = await reader.episode_details(run_id, where, limit)
        total = await reader.episode_matches(run_id, where)
    return [transcript_of(run_id, row) for row in rows], total


async def load_failed(path: Path, run_id: str, per_setting: int) -> dict[SettingKey, FailedSetting]:
    """Every setting's failed test episodes for the HTML report: the first `per_setting` in full."""
    async with read_only(path) as reader:
        await require_run(reader, path, run_id)
        counts = await reader.failed_counts(run_id)
        rows = await reader.failed_per_setting(run_id, per_setting)
    shown: dict[SettingKey, list[Transcript]] = defaultdict(list)
    for row in rows:
        shown[(row.model, row.method, row.scenario)].append(transcript_of(run_id, row))
    return {key: FailedSetting(shown=shown.get(key, []), total=total) for key, total in counts.items()}


@dataclass(frozen=True)
class MethodState:
    stream: StreamOfRun
    as_of: str
    """Which checkpoint: 'latest', 'end of window N', or 'initial' (nothing learned yet)."""
    state: Any


async def load_state(path: Path, run_id: str, stream: str, scenario: str | None, window: int | None) -> MethodState:
    """The method state a stream's test set of `window` ran against (the end of the last window at or
    before it that had serving tasks), or its latest checkpoint when no window is named."""
    model, method = split_stream(stream)
    async with read_only(path) as reader:
        await require_run(reader, path, run_id)
        chosen = _pick_stream(await reader.streams_of_run(run_id), run_id, model, method, scenario)
        keys = await reader.checkpoint_keys(run_id, chosen.stream_id)
        key = _pick_key(keys, window)
        stored = None if key is None else await reader.checkpoint(run_id, chosen.stream_id, key)
    if stored is None:
        return MethodState(chosen, "initial (nothing learned yet)", None)
    as_of = "latest" if key is None or key.window is None else f"end of window {key.window}"
    return MethodState(chosen, as_of, orjson.loads(stored.state))


def _pick_stream(streams: Sequence[StreamOfRun], run_id: str, model: str, method: str,
                 scenario: str | None) -> StreamOfRun:
    mine = [s for s in streams if s.model == model and s.method == method]
    if not mine:
        known = ", ".join(sorted({f"{s.model}/{s.method}" for s in streams})) or "none"
        raise ShiftbenchInputError(f"--stream {model}/{method}: run {run_id} has no such stream; its streams: {known}")
    if scenario is None and len(mine) == 1:
        return mine[0]
    for candidate in mine:
        if candidate.scenario == scenario:
            return candidate
    names = ", ".join(s.scenario for s in mine)
    what = "name one with --scenario" if scenario is None else f"no scenario {scenario!r}"
    raise ShiftbenchInputError(f"--scenario: {what}; stream {model}/{method} of run {run_id} ran {names}")


def _pick_key(keys: Sequence[CheckpointKey], window: int | None) -> CheckpointKey | None:
    if window is None:
        return CheckpointKey.latest() if CheckpointKey.latest() in keys else None
    earlier = [key for key in keys if key.window is not None and key.window <= window]
    return max(earlier, key=lambda key: key.window or 0, default=None)
