"""A built scenario written in the dataset layout loads back unchanged and plays the same."""

from __future__ import annotations

from pathlib import Path

from simulators.dataset import load_dataset, task_row, write_dataset
from simulators.domains.retail import DOMAIN
from simulators.protocol import Scenario
from tests.support import run_task

from .helpers import gold_finish, grade


async def test_write_then_load_keeps_tasks_world_and_behaviour(scenarios: dict[str, Scenario], tmp_path: Path) -> None:
    built = scenarios["retail_l3"]
    write_dataset(tmp_path / "suite", [built])
    loaded = load_dataset(tmp_path / "suite").scenarios["retail_l3"]
    assert [task_row(t) for t in (*loaded.serving, *loaded.test)] == \
        [task_row(t) for t in (*built.serving, *built.test)]
    assert loaded.environment.world == built.environment.world
    assert loaded.environment.windows == built.environment.windows
    assert loaded.environment.tools == built.environment.tools
    for task in loaded.test:
        assert (await grade(loaded, task, task.evaluator.actions, gold_finish(task))).reward == 1.0
    for task in loaded.test[::25]:
        assert (await run_task(loaded, DOMAIN, task, "oracle", with_bulletin=True)).grade.reward == 1.0
