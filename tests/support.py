"""Shared test helpers: score a scenario offline with the scripted agent; sweep into a journal and read
its rewards back; a progress sink that prints nothing."""

from __future__ import annotations

import sqlite3
from collections import defaultdict
from collections.abc import Mapping
from pathlib import Path

from runner.journal import Batch, open_journal
from runner.models.scripted import ScriptedModel
from runner.schedule.episode import EpisodeResult, run_episode
from simulators.domain import Domain
from simulators.protocol import Scenario, Task


async def run_task(scenario: Scenario, domain: Domain, task: Task, variant: str,
                   with_bulletin: bool) -> EpisodeResult:
    model = ScriptedModel(variant, domains={scenario.domain: domain})
    context = ""
    if with_bulletin:
        context = scenario.window_of_position(task.timestamp).oracle_bulletin
    return await run_episode(task, scenario.environment, domain, model, method_context=context)


async def category_scores(scenario: Scenario, domain: Domain, variant: str, with_bulletin: bool,
                          split: str = "test") -> Mapping[str, float]:
    """Mean reward x 100 per category over a split, as the benchmark's settings are scored."""
    rewards: dict[str, list[float]] = defaultdict(list)
    tasks = scenario.test if split == "test" else scenario.serving
    for task in tasks:
        result = await run_task(scenario, domain, task, variant, with_bulletin)
        rewards[task.category].append(result.grade.reward)
    return {category: 100 * sum(values) / len(values) for category, values in rewards.items()}


async def set_stored_reward(journal_path: Path, run_id: str, reward: float) -> str:
    """Tamper with a journal as an outside edit would: the first test episode's stored reward becomes
    `reward`. Returns that episode's unit id. Test-only raw SQL, through the journal's own writer."""
    async with open_journal(journal_path, create=False) as journal:
        outcome = await journal.read.fetchone(
            "SELECT e.unit_id FROM episodes e JOIN units u ON u.run_id = e.run_id AND u.unit_id = e.unit_id "
            "WHERE e.run_id = ? AND u.phase = 'test' ORDER BY u.rowid LIMIT 1", (run_id,))
        assert outcome is not None, f"run {run_id} has no test episode"
        unit_id = str(outcome[0])
        await journal.commit(Batch().add("UPDATE episodes SET reward = ? WHERE run_id = ? AND unit_id = ?",
                                         (reward, run_id, unit_id)))
    return unit_id


def quiet(text: str) -> None:
    """A progress sink for `start_sweep` that prints nothing."""
    return None


def episode_rewards(journal: Path) -> dict[str, float]:
    """Every journaled episode's reward by unit id (test-only raw SQL, read-only)."""
    with sqlite3.connect(journal) as db:
        return dict(db.execute("SELECT unit_id, reward FROM episodes").fetchall())


def cli_sweep(suite: Path, folder: Path, scenarios: tuple[str, ...], methods: tuple[str, ...],
              *more: str) -> tuple[Path, str]:
    """An offline pilot sweep started as a user starts it (`shiftbench run`, 2 tasks a window) into a new
    journal in `folder`; returns (journal, run id)."""
    from runner.cli import main  # the CLI only for the tests that sweep

    journal = folder / "journal.sqlite"
    assert main(["run", "--dataset", str(suite), "--scenarios", ",".join(scenarios), "--methods",
                 ",".join(methods), "--pilot", "2", "--display", "none", "--journal", str(journal), *more]) == 0
    with sqlite3.connect(journal) as db:
        (run_id,) = db.execute("SELECT run_id FROM runs").fetchone()
    return journal, run_id
