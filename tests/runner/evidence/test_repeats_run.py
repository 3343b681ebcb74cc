"""`--repeats K` end to end: repeats are units like any other (ids, journal, resume) and the report
gives their spread and pass^k."""

from __future__ import annotations

from pathlib import Path

import anyio
import orjson
import pytest

from runner.cli import main
from runner.journal import Batch, open_journal, read_only


async def forget_repeats(journal_path: Path, run_id: str) -> int:
    """Make the run look interrupted before its repeats ran: their episodes gone, their units pending.
    Test-only raw SQL (planting a fault), through the journal's own writer."""
    async with open_journal(journal_path, create=False) as journal:
        rows = await journal.read.fetchall(
            "SELECT unit_id FROM units WHERE run_id = ? AND repetition = 1", (run_id,))
        await journal.commit(
            Batch().add("DELETE FROM episodes WHERE run_id = ? AND unit_id IN "
                        "(SELECT unit_id FROM units WHERE run_id = ? AND repetition = 1)", (run_id, run_id))
            .add("UPDATE units SET status = 'pending' WHERE run_id = ? AND repetition = 1", (run_id,))
            .add("UPDATE runs SET status = 'interrupted' WHERE run_id = ?", (run_id,)))
    return len(rows)


async def unit_ids(journal_path: Path, run_id: str) -> list[tuple[str, int]]:
    async with read_only(journal_path) as reader:
        rows = await reader.fetchall("SELECT unit_id, repetition FROM units WHERE run_id = ? AND phase = 'test' "
                                     "ORDER BY rowid", (run_id,))
    return [(str(unit), int(repetition)) for unit, repetition in rows]


def test_repeats_are_units_resumed_like_any_other(built_suite: Path, tmp_path: Path,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    journal = tmp_path / "journal.sqlite"
    argv = ["--dataset", str(built_suite), "--scenarios", "retail_l1,pitch_l1", "--methods", "tabular",
            "--pilot", "3", "--repeats", "2", "--journal", str(journal), "--display", "none"]
    assert main(["run", *argv]) == 0
    capsys.readouterr()
    assert main(["runs", "--json", "--journal", str(journal)]) == 0
    run_id = orjson.loads(capsys.readouterr().out)[0]["run_id"]
    units = anyio.run(unit_ids, journal, run_id)
    first = [unit for unit, repetition in units if repetition == 0]
    assert [unit for unit, repetition in units if repetition == 1] == [f"{unit}|r1" for unit in first]

    assert main(["report", run_id, "--json", "--journal", str(journal)]) == 0
    before = orjson.loads(capsys.readouterr().out)["streams"][0]
    assert before["test_done"] == 2 * len(first) and before["repeats"]["repeats"] == 2
    # The scripted agent and the frozen method state are deterministic: both repeats agree exactly.
    assert before["repeats"]["avg_h_spread"] == 0.0
    assert set(before["repeats"]["pass_k"]) == {"1", "2"}
    assert main(["report", run_id, "--journal", str(journal)]) == 0
    assert "Repeats (Avg H / Avg F of each repeat" in capsys.readouterr().out

    assert anyio.run(forget_repeats, journal, run_id) == len(first)
    assert main(["resume", run_id, "--journal", str(journal), "--display", "none"]) == 0
    capsys.readouterr()
    assert main(["report", run_id, "--json", "--journal", str(journal)]) == 0
    after = orjson.loads(capsys.readouterr().out)["streams"][0]
    assert (after["test_done"], after["avg_h"], after["repeats"]) == (before["test_done"], before["avg_h"],
                                                                      before["repeats"])
