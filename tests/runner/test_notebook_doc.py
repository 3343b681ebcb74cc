"""docs/notebook.md runs as written (issue 30 item 9): its bash cell makes the run, its Python cells run in
order in one namespace, and what they computed is checked against the journal read a second way (SQL
over the file, and the rewards themselves), not against the API's own code.
"""

from __future__ import annotations

import asyncio
import os
import re
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from runner.analysis import Results
from simulators.errors import ShiftbenchInputError

DOC = Path(__file__).resolve().parents[2] / "docs" / "notebook.md"


def cells(kind: str) -> list[str]:
    return re.findall(rf"```{kind}\n(.*?)```", DOC.read_text(), re.S)


@pytest.fixture
def folder(built_suite: Path, tmp_path: Path) -> Path:
    """A folder where the doc's run was made, as a user makes it there (the built suite linked in)."""
    (tmp_path / ".shiftbench" / "suites").mkdir(parents=True)
    (tmp_path / ".shiftbench" / "suites" / "seed-0").symlink_to(built_suite)
    (command,) = cells("bash")
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    done = subprocess.run(["bash", "-c", command], cwd=tmp_path, env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return tmp_path


def sql(journal: Path, query: str, *params: object) -> list[tuple[Any, ...]]:
    with sqlite3.connect(journal) as db:
        return db.execute(query, params).fetchall()


def test_the_notebook_runs_as_written_and_its_frames_are_the_journals(
        folder: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(folder)
    namespace: dict[str, Any] = {}
    for cell in cells("python"):
        exec(compile(cell, str(DOC), "exec"), namespace)  # noqa: S102 - the doc's own cells
    printed = capsys.readouterr().out
    journal = folder / ".shiftbench" / "journal.sqlite"
    ((run_id,),) = sql(journal, "SELECT run_id FROM runs")
    assert list(namespace["runs"].run_id) == [run_id] and run_id in printed
    episodes = namespace["episodes"]
    assert len(episodes) == sql(journal, "SELECT count(*) FROM episodes WHERE run_id = ?", run_id)[0][0] == 24
    # Each stream's score per category: the mean test reward of that category, in percent, from the file.
    by_sql = {(model, category): 100 * mean for model, category, mean in sql(
        journal, "SELECT u.model, e.category, avg(e.reward) FROM episodes e JOIN units u USING (run_id, unit_id) "
                 "WHERE e.run_id = ? AND u.phase = 'test' GROUP BY u.model, e.category", run_id)}
    scores = namespace["scores"]
    assert {(row.model, row.metric): row.score for row in scores.itertuples()} == pytest.approx(by_sql)
    assert all(row.ci_low <= row.score <= row.ci_high for row in scores.itertuples())
    assert set(scores.tasks) == {12} and len(namespace["calls"]) == 0


def test_a_notebooks_running_event_loop_and_bad_inputs(folder: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    results = Results(folder / ".shiftbench" / "journal.sqlite")

    async def in_a_kernel() -> int:  # a Jupyter cell runs inside the kernel's loop
        return len(results.episodes())

    assert asyncio.run(in_a_kernel()) == 24
    with pytest.raises(ShiftbenchInputError, match="no run 'r-none' in this journal"):
        results.episodes("r-none")
    with pytest.raises(ShiftbenchInputError, match="no journal there"):
        Results(folder / "missing.sqlite")
    monkeypatch.setitem(sys.modules, "pandas", None)  # as if the extra were not installed
    monkeypatch.delitem(sys.modules, "runner.analysis.frames", raising=False)
    with pytest.raises(ShiftbenchInputError, match=r"Results.scores_df needs the 'pandas' extra .*"
                                                   r"pip install 'shiftbench\[pandas\]'"):
        results.scores_df()


async def test_model_calls_come_back_as_journaled_in_order_with_their_flags_typed(
        folder: Path) -> None:
    from runner.journal import Batch, ModelCallRow, open_journal

    journal = folder / ".shiftbench" / "journal.sqlite"
    ((run_id,),) = sql(journal, "SELECT run_id FROM runs")
    sent = [ModelCallRow(run_id, f"u{i}", "s", "agent", "openai:m", f"h{i}", "ok", 1 + i, i == 1, 100 * i, 10 * i,
                         0, 7, 0.25 * i, 0.5, 1000.0 + i, "", usage_estimated=i == 2, replica="r1")
            for i in range(3)]
    async with open_journal(journal) as opened:
        await opened.commit(Batch().model_call(sent[0]).model_call(sent[1]).model_call(sent[2]))
    results = Results(journal)
    calls = await asyncio.to_thread(results.model_calls)
    assert calls == sent and [type(c.from_cache) for c in calls] == [bool] * 3
    frame = await asyncio.to_thread(results.model_calls_df)
    assert list(frame.unit_id) == ["u0", "u1", "u2"] and list(frame.cost_usd) == [0.0, 0.25, 0.5]
    assert str(frame.created_at.dtype).startswith("datetime64") and frame.from_cache.tolist() == [False, True, False]
