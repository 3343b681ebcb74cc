"""A filter's names checked against what the run has: `show --stream X --scenario Y --window W --unit U
--replica K --phase P` that names something the run lacks is refused with one line naming what it has (exit 2),
instead of printing "no episode matches" as if the run had simply gone well.

Each name is checked within the ones before it (a scenario within the stream, a window within the
scenario), so the message names the choices that are really left.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from runner.journal import EpisodeFilter, UnitOfRun
from simulators.errors import ShiftbenchInputError

__all__ = ["check_names", "nothing_matches"]


def check_names(run_id: str, where: EpisodeFilter, units: Sequence[UnitOfRun], unit_found: bool,
                flag: str = "") -> None:
    """Raise naming the first of `where`'s names the run does not have; return when it has them all.
    `flag`: the `--journal` a hint must carry (`runner.common.journal_flag`)."""
    if not unit_found:
        raise ShiftbenchInputError(f"--unit {where.unit_id}: run {run_id} has no such unit; "
                                   f"`shiftbench show {run_id} --json{flag}` prints each episode's unit_id")
    left = list(units)
    if where.model is not None or where.method is not None:
        mine = [u for u in left if u.model == where.model and u.method == where.method]
        if not mine:
            raise ShiftbenchInputError(f"--stream {where.model}/{where.method}: run {run_id} has no such stream; "
                                       f"its streams: {_names(f'{u.model}/{u.method}' for u in left)}")
        left = mine
    if where.scenario is not None:
        mine = [u for u in left if u.scenario == where.scenario]
        if not mine:
            raise ShiftbenchInputError(f"--scenario {where.scenario}: run {run_id} ran no such scenario"
                                       f"{_within(where, 1)}; it ran {_names(u.scenario for u in left)}")
        left = mine
    if where.window is not None:
        mine = [u for u in left if u.window == where.window]
        if not mine:
            windows = ", ".join(str(w) for w in sorted({u.window for u in left}))
            raise ShiftbenchInputError(f"--window {where.window}: no such window in run {run_id}{_within(where, 2)}; "
                                       f"its windows: {windows}")
        left = mine
    if where.replica is not None:
        mine = [u for u in left if u.replica == where.replica]
        if not mine:
            replicas = ", ".join(str(r) for r in sorted({u.replica for u in left}))
            raise ShiftbenchInputError(f"--replica {where.replica}: run {run_id} has no such stream replica"
                                       f"{_within(where)}; its replicas: {replicas}")
        left = mine
    if where.phase is not None and not any(u.phase == where.phase for u in left):
        raise ShiftbenchInputError(f"--phase {where.phase}: run {run_id} planned no {where.phase} episodes"
                                   f"{_within(where)} (a method that learns nothing has no serving stream); it "
                                   f"planned {_names(u.phase for u in left)}")


def nothing_matches(where: EpisodeFilter, flag: str = "") -> str:
    """What to say when every name exists and still no episode matches (`flag`: as `check_names`)."""
    if where.failed:
        return "no episode matches: every finished episode that matches scored in full (none failed)"
    return (f"no episode matches yet: the matching units have not finished (`shiftbench runs{flag}` shows the "
            "run's progress)")


def _within(where: EpisodeFilter, before: int = 3) -> str:
    """' for stream M/X, scenario S, window W': the names checked before this one (the first `before`)."""
    parts = [f"stream {where.model}/{where.method}" if where.model is not None else "",
             f"scenario {where.scenario}" if where.scenario is not None else "",
             f"window {where.window}" if where.window is not None else ""][:before]
    named = [part for part in parts if part]
    return f" for {', '.join(named)}" if named else ""


def _names(names: Iterable[str]) -> str:
    return ", ".join(dict.fromkeys(names))
