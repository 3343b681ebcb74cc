"""`shiftbench runs` against a journal holding two runs: progress, spend by the report's rule, names."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from runner.journal import open_journal
from runner.views.runs import list_runs, render_runs_json, render_runs_text
from simulators.errors import ShiftbenchInputError
from tests.runner.test_report import MODEL, Unit, blind_calls, blind_units, oracle_units, write_run


@pytest.fixture
async def journal(tmp_path: Path) -> Path:
    path = tmp_path / "journal.sqlite"
    blind = blind_units()
    # Older run: 13 units, 12 done; agent spend journaled as calls ($0.38 in all).
    await write_run(path, "old", [*blind, *oracle_units()], blind_calls(blind), status="budget_exhausted",
                    stop_reason="budget cap reached", budget_usd=5.0, created_at=1000.0)
    # Newer run without model calls: spend is the episodes' agent cost; names come from the units.
    await write_run(path, "new", [Unit("rag", "banking_l1", "test", 1, "hidden", 1.0, cost_usd=0.25)],
                    status="running", created_at=2000.0)
    return path


async def test_runs_newest_first_with_progress_and_spend(journal: Path) -> None:
    new, old = await list_runs(journal)
    assert (new.run_id, old.run_id) == ("new", "old")
    assert (old.done, old.total) == (12, 13)
    assert old.spend_usd == pytest.approx(0.38)
    assert (old.status, old.stop_reason, old.budget_usd) == ("budget_exhausted", "budget cap reached", 5.0)
    assert (new.done, new.total) == (1, 1)
    assert new.spend_usd == pytest.approx(0.25)


async def test_models_and_methods_come_from_the_units_in_planning_order(journal: Path) -> None:
    new, old = await list_runs(journal)
    assert old.models == [MODEL]
    assert old.methods == ["blind", "oracle"]
    assert new.methods == ["rag"]


async def test_a_run_without_units_names_its_models_from_the_config(tmp_path: Path) -> None:
    path = tmp_path / "journal.sqlite"
    config = {"models": [{"name": "anthropic/claude"}, "scripted"], "methods": ["blind"]}
    await write_run(path, "early", [], status="failed", config=config)
    (run,) = await list_runs(path)
    assert (run.models, run.methods, run.done, run.total, run.spend_usd) == (
        ["anthropic/claude", "scripted"], ["blind"], 0, 0, 0.0)


async def test_json_is_a_list_of_objects(journal: Path) -> None:
    data = json.loads(render_runs_json(await list_runs(journal)))
    assert [row["run_id"] for row in data] == ["new", "old"]
    assert {"run_id", "created_at", "status", "stop_reason", "done", "total", "spend_usd", "models",
            "methods"} <= set(data[1])
    assert data[1]["models"] == [MODEL]


async def test_text_lists_one_line_per_run(journal: Path) -> None:
    lines = render_runs_text(await list_runs(journal)).splitlines()
    assert lines[0].split() == ["run", "created", "status", "stop", "reason", "done", "spend", "cache", "hit", "/",
                                "saved", "models", "methods", "scenarios", "labels"]
    old = lines[3]
    assert old.startswith("old  ")
    assert time.strftime("%Y-%m-%d %H:%M", time.localtime(1000.0)) in old
    for part in ("budget_exhausted", "12/13 (92%)", "$0.38 of $5.00", MODEL, "blind, oracle", "budget cap reached"):
        assert part in old


async def test_an_empty_journal_says_so(tmp_path: Path) -> None:
    path = tmp_path / "journal.sqlite"
    async with open_journal(path):
        pass
    runs = await list_runs(path)
    assert runs == []
    assert render_runs_text(runs) == "no runs in this journal"
    assert render_runs_json(runs) == "[]"


async def test_a_missing_journal_is_an_input_error(tmp_path: Path) -> None:
    with pytest.raises(ShiftbenchInputError):
        await list_runs(tmp_path / "absent.sqlite")
