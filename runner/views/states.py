"""`shiftbench state`: what a method had learned when a window's test set ran, as a person reads it.

The state comes from the stream's checkpoint: the end of the last window at or before the one named
that had serving tasks (what that window's test set ran against), or the latest when none is named.
The method's own `describe` (methods.base.MethodSpec) turns it into text: tabular's beliefs and the
policy block it writes, the lessons, playbook or rules of the text methods, the records of icl_full
and rag. The oracle learns nothing: what it is told is the window's policy bulletin, read from the
run's dataset. `--json` prints the stored state as it is.

Every name is checked against the run: a stream, scenario or window it does not have is refused with
one line naming those it has (exit 2), never answered with an empty state.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import orjson

from methods.base import MethodSpec
from runner.common.tables import wrap_prose
from runner.config.methods import resolve_methods
from runner.config.run_dataset import dataset_of_run
from runner.config.settings import config_from_json
from runner.journal import CheckpointKey, Reader, RunRow, StreamOfRun, UnitOfRun, read_only
from runner.views.episodes import require_run, split_stream
from simulators.errors import ShiftbenchInputError

__all__ = ["MethodState", "is_replicated", "load_states", "state_text", "states_json"]


@dataclass(frozen=True)
class MethodState:
    stream: StreamOfRun
    as_of: str
    """Which checkpoint: 'latest', 'end of window N', or 'initial (nothing learned yet)'."""
    state: Any
    window: int | None
    """The window asked for (None: the latest state)."""
    bulletin: str | None = None
    """The oracle's: the policy bulletin of that window (of the last one when none is named)."""
    spec: MethodSpec | None = None
    """The method as the run configured it (None: its code is not here, so its state is shown as stored)."""


async def load_states(path: Path, run_id: str, stream: str | None, scenario: str | None,
                      window: int | None) -> list[MethodState]:
    """The state of the named stream on `scenario`, or of every stream of the run on it."""
    async with read_only(path) as reader:
        run = await require_run(reader, path, run_id)
        streams = _pick_streams(await reader.streams_of_run(run_id), run_id, stream, scenario)
        windows = _test_windows(await reader.units_of_run(run_id), streams[0].scenario)
        if window is not None and window not in windows:
            raise ShiftbenchInputError(
                f"--window {window}: {streams[0].scenario} of run {run_id} has windows "
                f"{', '.join(map(str, windows))}; name one of them")
        states = [await _state(reader, run_id, chosen, window) for chosen in streams]
    specs = _specs_of_run(run, {state.stream.method for state in states})
    return [_with_bulletin(run, replace(state, spec=specs[state.stream.method]), windows) for state in states]


def _pick_streams(streams: Sequence[StreamOfRun], run_id: str, stream: str | None,
                  scenario: str | None) -> list[StreamOfRun]:
    if stream is not None:
        model, method = split_stream(stream)
        mine = [s for s in streams if s.model == model and s.method == method]
        if not mine:
            known = ", ".join(dict.fromkeys(f"{s.model}/{s.method}" for s in streams)) or "none"
            raise ShiftbenchInputError(f"--stream {stream}: run {run_id} has no such stream; its streams: {known}")
        streams, named = mine, f"stream {stream} of run {run_id}"
    else:
        named = f"run {run_id}"
    scenarios = list(dict.fromkeys(s.scenario for s in streams))
    if scenario is None:
        if len(scenarios) == 1:
            return list(streams)
        raise ShiftbenchInputError(f"--scenario: name one with --scenario; {named} ran {', '.join(scenarios)}")
    chosen = [s for s in streams if s.scenario == scenario]
    if not chosen:
        raise ShiftbenchInputError(f"--scenario {scenario}: {named} ran no such scenario; it ran "
                                   f"{', '.join(scenarios)}")
    return chosen


def _test_windows(units: Sequence[UnitOfRun], scenario: str) -> list[int]:
    """The windows a scenario's test sets ran in (serving windows when a run planned no test)."""
    tests = sorted({u.window for u in units if u.scenario == scenario and u.phase == "test"})
    return tests or sorted({u.window for u in units if u.scenario == scenario})


async def _state(reader: Reader, run_id: str, stream: StreamOfRun, window: int | None) -> MethodState:
    keys = await reader.checkpoint_keys(run_id, stream.stream_id)
    key = _pick_key(keys, window)
    stored = None if key is None else await reader.checkpoint(run_id, stream.stream_id, key)
    if stored is None:
        return MethodState(stream, "initial (nothing learned yet)", None, window)
    as_of = "latest" if key is None or key.window is None else f"end of window {key.window}"
    return MethodState(stream, as_of, orjson.loads(stored.state), window)


def _pick_key(keys: Sequence[CheckpointKey], window: int | None) -> CheckpointKey | None:
    if window is None:
        return CheckpointKey.latest() if CheckpointKey.latest() in keys else None
    earlier = [key for key in keys if key.window is not None and key.window <= window]
    return max(earlier, key=lambda key: key.window or 0, default=None)


def _specs_of_run(run: RunRow, methods: set[str]) -> dict[str, MethodSpec | None]:
    """Each method as the run named it: a user's method resolved from the run's own spec (never the
    registry method that shares its name); None where its code is not here, or is no longer loadable,
    so its state is shown as stored."""
    config = config_from_json(run.config)
    specs: dict[str, MethodSpec | None] = {}
    for method in methods:
        try:
            specs[method] = resolve_methods((method,), config.method_specs, "the run's config",
                                            config.methods_in_process, config.method_env)[method].spec
        except (ShiftbenchInputError, KeyError):
            specs[method] = None
    return specs


def _with_bulletin(run: RunRow, state: MethodState, windows: Sequence[int]) -> MethodState:
    """A method that learns nothing has no checkpoint to be "as of": it is as of the window asked."""
    spec = state.spec
    if spec is None or spec.learns:
        return state
    if not spec.sees_bulletin:
        as_of = "latest" if state.window is None else f"window {state.window}"
        return replace(state, as_of=as_of)
    dataset = dataset_of_run(run, "restore it to read the oracle's bulletins")
    window = state.window if state.window is not None else windows[-1]
    bulletins = {w.window: w.oracle_bulletin for w in dataset.scenarios[state.stream.scenario].environment.windows}
    return replace(state, as_of=f"window {window}", window=window, bulletin=bulletins.get(window, "").strip())


def state_text(state: MethodState, replicated: bool = False, limit: int | None = None,
               limit_given: bool = False, width: int | None = None) -> str:
    """The heading, then what the method had learned, as its own `describe` says it. `replicated`: the run
    has stream replicas (`--replicas K`), so the heading says which one this is. `limit`: at most this
    many lines of it (None: all; icl_full and rag list every past case, hundreds on a full stream), then
    how many it left out and the flags that print them (`limit_given`: --limit was given, so only --all).
    `width`: the terminal's; prose wraps between words (the limit counts the lines as shown), a fenced
    policy block is kept as the prompt holds it."""
    heading = f"{_name(state.stream, replicated)} on {state.stream.scenario}, state as of {state.as_of}"
    lines = wrap_prose(_body(state), width).split("\n")
    if limit is None or len(lines) <= limit:
        return "\n".join([wrap_prose(heading, width), *lines])
    how = "--all prints them" if limit_given else "--limit N prints the first N lines, --all every one"
    return "\n".join([wrap_prose(heading, width), *lines[:limit],
                      wrap_prose(f"... {len(lines) - limit} more lines of this state; {how}", width)])


def is_replicated(states: Sequence[MethodState]) -> bool:
    return any(state.stream.replica for state in states)


def _name(stream: StreamOfRun, replicated: bool) -> str:
    """`model/method`, and ` replica K` (replica 0 included) when the run has replicas."""
    return f"{stream.model}/{stream.method}" + (f" replica {stream.replica}" if replicated else "")


def _body(state: MethodState) -> str:
    method, spec = state.stream.method, state.spec
    if state.bulletin is not None:
        return (f"{method} learns nothing: it is told the policy in force. Its bulletin for window {state.window}, "
                f"written into every prompt of that window:\n{state.bulletin}")
    if spec is not None and not spec.learns:
        return f"{method} learns nothing: every task gets the documents and tools only."
    if state.state is None:
        return "nothing learned yet (no checkpoint before this window)"
    if spec is None or spec.describe is None:
        return orjson.dumps(state.state, option=orjson.OPT_INDENT_2).decode()
    return spec.describe(state.state) or "nothing learned yet (its state is empty)"


def states_json(states: Sequence[MethodState]) -> str:
    """One stream: its stored state as it is; several: each under its `model/method` (and ` replica K`)."""
    if len(states) == 1:
        return orjson.dumps(states[0].state, option=orjson.OPT_INDENT_2).decode()
    replicated = is_replicated(states)
    return orjson.dumps({_name(s.stream, replicated): s.state for s in states}, option=orjson.OPT_INDENT_2).decode()
