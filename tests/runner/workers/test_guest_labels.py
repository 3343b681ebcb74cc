"""The labels cannot be rebuilt inside a worker. A method that regenerates its scenario from the built-in
suite's public seed (`guests.REBUILD`) and hands the agent each window's hidden policy scores above
blind on hidden-dependent tasks when it runs in the runner's process; in its worker the import of the
suite's generator is refused with one line naming the module (its stream's `method_error`), and the
variant that swallows the refusal (`REBUILD_QUIET`) scores exactly what blind scores, task by task."""

from __future__ import annotations

from pathlib import Path

from tests.runner.test_kill_resume import rewards
from tests.runner.workers.test_guest_boundary import sweep
from tests.runner.workers.test_guest_failures import failure_lines
from tests.runner.workers.test_guest_runs import guest_file

REFUSAL = "'simulators.suite' is not part of what a method may import"


def scored_tests(scores: dict[str, float], method: str) -> dict[str, float]:
    """The method's test episodes' rewards, keyed without the method."""
    return {unit.split("|", 1)[1]: reward for unit, reward in scores.items()
            if unit.startswith(f"{method}|") and "|test|" in unit}


def test_a_guest_that_rebuilds_the_labels_is_refused_and_scores_as_blind(built_suite: Path, tmp_path: Path) -> None:
    guests = guest_file(tmp_path)
    methods = f"blind,rebuild={guests}:REBUILD,quiet={guests}:REBUILD_QUIET"
    bounded = tmp_path / "bounded.sqlite"
    done = sweep(built_suite, bounded, methods, {}, "--pilot", "3")
    assert done.returncode == 1 and "Traceback" not in done.stdout + done.stderr, done.stdout + done.stderr
    lines = failure_lines(done.stdout)
    assert len(lines) == 1 and "scripted|rebuild|retail_l1" in lines[0] and REFUSAL in lines[0], lines
    scores = rewards(bounded)
    blind = scored_tests(scores, "blind")
    assert blind and scored_tests(scores, "quiet") == blind

    stolen = tmp_path / "in_process.sqlite"
    opened = sweep(built_suite, stolen, methods, {}, "--pilot", "3", "--methods-in-process")
    assert opened.returncode == 0 and failure_lines(opened.stdout) == [], opened.stdout
    theft = scored_tests(rewards(stolen), "quiet")
    hidden = [unit for unit in theft if "hidden" in unit] or list(theft)
    assert sum(theft[u] for u in hidden) > sum(blind[u] for u in hidden), (theft, blind)
