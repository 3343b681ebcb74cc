"""A disk that fills up under a run, an export, a report or a merged journal (issue 21 item 3): each
ends in one line, exit 2, nothing half-written; a run stops resumable, and its resume on a freed disk
gives the rewards a run on an ample disk gives. The disk is a real tmpfs (mounted here: tests run as
root; skipped where mounting is not permitted)."""

from __future__ import annotations

import sqlite3
import subprocess
from pathlib import Path

import pytest

from tests.media import fill, small_disk, snapshot
from tests.runner.test_kill_resume import shiftbench
from tests.support import cli_sweep

SCENARIOS, METHODS = "retail_l1,pitch_l1", "blind,tabular"


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(shiftbench(*args), capture_output=True, text=True, timeout=600, check=False)


def _rows(journal: Path, sql: str) -> list[tuple[str, object]]:
    db = sqlite3.connect(journal)  # closed at once: an open file would keep the disk from unmounting
    try:
        return db.execute(sql).fetchall()
    finally:
        db.close()


def _run_ids(journal: Path) -> list[tuple[str, object]]:
    return _rows(journal, "SELECT run_id, status FROM runs")


def rewards(journal: Path) -> dict[str, object]:
    """Each episode's reward by its unit id without the run id (two runs of one sweep compare equal)."""
    return {unit.split("|", 1)[1]: reward for unit, reward in _rows(journal, "SELECT unit_id, reward FROM episodes")}


def test_a_run_stopped_by_a_full_disk_resumes_to_the_same_rewards(built_suite: Path, tmp_path: Path) -> None:
    reference, _ = cli_sweep(built_suite, tmp_path, tuple(SCENARIOS.split(",")), tuple(METHODS.split(",")))
    with small_disk(tmp_path / "disk", 4096) as disk:
        filler = fill(disk, 300_000)  # room to start the run, not to finish it (its journal ends near 0.8 MB)
        journal = disk / "journal.sqlite"
        args = ("--dataset", str(built_suite), "--scenarios", SCENARIOS, "--methods", METHODS, "--pilot", "2",
                "--display", "none", "--journal", str(journal))
        stopped = _run("run", *args)
        [(run_id, _)] = _run_ids(journal)
        assert stopped.returncode == 2, stopped.stderr
        assert stopped.stderr.splitlines() == [
            f"shiftbench: error: run {run_id} stopped: the disk holding its journal {journal} is full; the journal "
            f"is intact (every committed episode kept): free some space, then `shiftbench resume {run_id} "
            f"--journal {journal}`"]
        assert len(rewards(journal)) < len(rewards(reference))  # it did stop midway
        filler.unlink()
        resumed = _run("resume", run_id, "--journal", str(journal), "--display", "none")
        assert resumed.returncode == 0, resumed.stderr
        assert _run_ids(journal) == [(run_id, "completed")]
        assert rewards(journal) == rewards(reference)


def test_a_run_that_cannot_even_start_on_a_full_disk_leaves_no_journal(built_suite: Path, tmp_path: Path) -> None:
    with small_disk(tmp_path / "disk", 1024) as disk:
        fill(disk, 40_000)
        before = snapshot(disk)
        done = _run("run", "--dataset", str(built_suite), "--scenarios", "banking_l1", "--methods", "blind",
                    "--pilot", "1", "--display", "none", "--journal", str(disk / "journal.sqlite"))
        assert done.returncode == 2
        [line] = done.stderr.splitlines()
        assert "the disk holding the journal is full" in line and "the run was not started" in line
        assert snapshot(disk) == before


def test_outputs_on_a_full_disk_are_one_line_and_nothing_half_written(built_suite: Path, tmp_path: Path) -> None:
    journal, run_id = cli_sweep(built_suite, tmp_path, ("retail_l1", "pitch_l1"), ("blind", "tabular"))
    shard = tmp_path / "shard-0.sqlite"  # a sweep's one shard, for `journal merge`
    assert _run("run", "--dataset", str(built_suite), "--scenarios", "retail_l1", "--methods", "blind", "--pilot", "2",
                "--shard", "0/1", "--display", "none", "--journal", str(shard)).returncode == 0
    with small_disk(tmp_path / "disk", 1024) as disk:
        (disk / "kept").mkdir()
        (disk / "kept" / "report.html").write_text("the report before")
        fill(disk, 24_000)
        before = snapshot(disk)
        for argv, flag, target in (
            (["report", run_id, "--html", str(disk / "kept" / "report.html")], "--html", disk / "kept" / "report.html"),
            (["report", run_id, "--html", str(disk / "new" / "report.html")], "--html", disk / "new" / "report.html"),
            (["compare", f"{run_id}:scripted/tabular", f"{run_id}:scripted/blind", "--html", str(disk / "c.html")],
             "--html", disk / "c.html"),
            (["export", run_id, "--out", str(disk / "export")], "--out", disk / "export"),
            (["data", "build", "--out", str(disk / "suite")], "--out", disk / "suite"),
            (["journal", "merge", str(disk / "merged.sqlite"), str(shard)], "journal merge", disk / "merged.sqlite"),
        ):
            done = _run(*argv, "--journal", str(journal)) if argv[0] not in ("journal", "data") else _run(*argv)
            assert done.returncode == 2, (argv, done.stderr)
            [line] = done.stderr.splitlines()
            assert line.startswith(f"shiftbench: error: {flag} {target}: the disk is full"), line
            assert "nothing was written" in line, line
            assert snapshot(disk) == before, argv


async def test_a_lease_released_on_a_full_disk_leaves_the_run_stopped_not_unstarted(tmp_path: Path) -> None:
    # The run's last write, its lease's release, met the full disk that had stopped it: the JournalFull
    # escaped the run and was told as "the run was not started", the run id and its resume line lost.
    from runner.journal import Batch, JournalFull, open_journal
    from runner.schedule.lease_keeper import take_lease

    with small_disk(tmp_path / "disk", 1024) as disk:
        async with open_journal(disk / "journal.sqlite") as journal:
            keeper = await take_lease(journal, "r-full")
            fill(disk, 0)
            with pytest.raises(JournalFull):  # the disk is really full for this journal now
                await journal.commit(Batch().set_meta("filler", "x" * 200_000))
            await keeper.give_up()  # must not raise: the lease lapses by its TTL instead
