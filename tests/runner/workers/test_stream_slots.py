"""Streams whose user method runs in a worker on an offline model are served at most `--method-workers`
at once (issue 37, item 9): each such stream holds a worker for its whole life, and offline the runner's
one thread gains nothing from serving more of them together than it has cores for. Judged from what
the workers themselves say of their lives (built at, last learned at: the system-wide monotonic
clock), never from the bound's own bookkeeping; and results do not depend on the bound."""

from __future__ import annotations

from pathlib import Path

from runner.schedule.stream_slots import StreamSlots, default_method_workers
from tests.runner.workers.test_guest_runs import guest_file, latest_states, run

METHODS = 3


def most_alive_together(states: dict[str, dict[str, object]]) -> int:
    """The most streams whose serving workers' lives (build to last learn) overlap at one moment."""
    lives = [(float(str(s["born"])), float(str(s["last"]))) for s in states.values()]
    return max(sum(1 for born, last in lives if born <= moment <= last) for moment, _ in lives)


def sweep(suite: Path, tmp_path: Path, name: str, *flags: str) -> dict[str, dict[str, object]]:
    guests = guest_file(tmp_path)
    methods = ",".join(f"m{i}={guests}:LIFETIME" for i in range(METHODS))
    journal = tmp_path / f"{name}.sqlite"
    done = run(suite, journal, methods, *flags)
    assert done.returncode == 0, done.stderr
    states = latest_states(journal)
    assert len(states) == METHODS
    return states


def test_one_worker_stream_at_a_time_when_the_bound_is_one(built_suite: Path, tmp_path: Path) -> None:
    bounded = sweep(built_suite, tmp_path, "one", "--method-workers", "1")
    assert most_alive_together(bounded) == 1
    assert len({s["pid"] for s in bounded.values()}) == METHODS  # never a process shared by two streams
    together = sweep(built_suite, tmp_path, "all", "--method-workers", str(METHODS))
    assert most_alive_together(together) > 1  # the measure sees overlap where the bound allows it
    # The bound moves when a stream runs, never what it learns.
    assert {k: v["seen"] for k, v in bounded.items()} == {k: v["seen"] for k, v in together.items()}


def test_the_default_bound_is_twice_the_cores_and_at_least_two() -> None:
    assert StreamSlots().bound == default_method_workers() >= 2
    assert StreamSlots(3).bound == 3
