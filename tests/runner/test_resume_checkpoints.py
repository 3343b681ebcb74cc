"""What a resumed run relies on, pinned as a user sees it: a test set resumed after its stream's serving
went on runs against the state its own window ended with (not the latest), and the units already done
are exactly the ones skipped. The journal is edited as an interruption leaves it (test-only raw SQL
through the journal's own writer): some test episodes of an early window missing, serving finished."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pytest

from methods.base import MethodSetup, MethodSpec
from methods.registry import METHOD_REGISTRY
from runner.config.settings import SweepConfig
from runner.journal import Batch, open_journal
from runner.schedule.sweep import resume_sweep, start_sweep
from simulators.protocol import JSON, TaskView
from simulators.record import EpisodeRecord
from tests.support import episode_rewards, quiet

WINDOW = 3
SEEN: list[tuple[str, int]] = []
"""(task id, serving episodes learned from) each time the counting method wrote a prompt."""


class Counting:
    """A method whose state is how many serving episodes it learned from, and which notes that count
    whenever it writes a task's context: what a test set ran against, made visible."""

    def __init__(self) -> None:
        self.learned = 0

    def context(self, task: TaskView) -> str:
        SEEN.append((task.task_id, self.learned))
        return ""

    async def learn(self, records: Sequence[EpisodeRecord]) -> None:
        self.learned += len(records)

    def state(self) -> JSON:
        return {"learned": self.learned}

    def load(self, state: JSON) -> None:
        assert isinstance(state, dict)
        self.learned = int(state["learned"])


def _build(setup: MethodSetup) -> Counting:
    return Counting()


@pytest.fixture(autouse=True)
def counting(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(METHOD_REGISTRY, "counting", MethodSpec("counting", "counts what it learned", False, _build))
    SEEN.clear()


async def _undo_tests_of_window(journal_path: Path, run_id: str, window: int) -> set[str]:
    """Drop the window's test episodes and mark their units pending, as if the run died before them."""
    async with open_journal(journal_path, create=False) as journal:
        rows = await journal.read.fetchall(
            "SELECT unit_id FROM units WHERE run_id = ? AND phase = 'test' AND window = ?", (run_id, window))
        units = {str(row[0]) for row in rows}
        batch = Batch()
        for unit in units:
            batch.add("DELETE FROM episodes WHERE run_id = ? AND unit_id = ?", (run_id, unit))
            batch.add("UPDATE units SET status = 'pending' WHERE run_id = ? AND unit_id = ?", (run_id, unit))
        batch.add("UPDATE runs SET status = 'interrupted' WHERE run_id = ?", (run_id,))
        await journal.commit(batch)
    return units


async def _records(journal_path: Path) -> dict[str, bytes]:
    async with open_journal(journal_path, create=False) as journal:
        return {str(u): bytes(r) for u, r in await journal.read.fetchall("SELECT unit_id, record FROM episodes")}


async def test_a_resumed_test_set_runs_against_its_own_windows_state_and_only_the_missing_units_run(
        built_suite: Path, tmp_path: Path) -> None:
    journal = tmp_path / "j.sqlite"
    config = SweepConfig(models=("scripted",), methods=("counting",), scenarios=("retail_l1",),
                         dataset=str(built_suite), pilot=2)
    first = await start_sweep(config, journal, "none", quiet)
    assert first.status == "completed"
    first_seen = dict(SEEN)
    expected, expected_records = episode_rewards(journal), await _records(journal)
    undone = await _undo_tests_of_window(journal, first.run_id, WINDOW)
    assert undone and not undone & set(episode_rewards(journal))
    kept = episode_rewards(journal)

    SEEN.clear()
    resumed = await resume_sweep(first.run_id, journal, "none", quiet)
    assert resumed.status == "completed"
    # The resumed test set saw the state its window ended with: 2 serving episodes per window, windows 0-3.
    assert SEEN and {count for _, count in SEEN} == {2 * (WINDOW + 1)}
    assert all(first_seen[task] == count for task, count in SEEN)
    again = episode_rewards(journal)
    assert again == expected  # the window's own state: the same rewards as the run that never stopped
    assert await _records(journal) == expected_records  # and the same steps, call by call
    assert {unit: again[unit] for unit in kept} == kept
    async with open_journal(journal, create=False) as opened:
        rows = await opened.read.fetchall("SELECT unit_id, attempts FROM units WHERE run_id = ?", (first.run_id,))
    assert {str(u): int(a) for u, a in rows if int(a) != 1} == {u: 2 for u in undone}  # only those ran again
