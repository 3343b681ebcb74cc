"""A journal where it lies (runner/journal/media.py): on read-only media every reading command opens it
and every writing command says the location is read-only (not that the journal is damaged); reading
leaves no file beside it; a damaged journal gets one line that says what to try and nothing new on disk.

Read-only media is a read-only bind mount (tests run as root, whom chmod does not stop), so SQLite meets
EROFS as it would on a mounted image or a locked share."""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path

import pytest

from runner.cli import main
from tests.media import read_only_view, snapshot
from tests.runner.test_cli_errors import one_error_line
from tests.support import cli_sweep


@pytest.fixture(scope="module")
def swept(built_suite: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """One small finished run (two methods, two scenarios) to copy from."""
    return cli_sweep(built_suite, tmp_path_factory.mktemp("swept"), ("retail_l1", "pitch_l1"), ("blind", "tabular"))


def _reading_commands(run_id: str, out: Path) -> list[list[str]]:
    return [["runs"], ["runs", "--json"], ["show", run_id, "--limit", "1"], ["show", run_id, "--json", "--limit", "1"],
            ["state", run_id, "--stream", "scripted/tabular", "--scenario", "retail_l1"],
            ["report", run_id], ["report", run_id, "--json"], ["verify", run_id],
            ["compare", f"{run_id}:scripted/tabular", f"{run_id}:scripted/blind"],
            ["export", run_id, "--out", str(out)]]


def _writing_commands(run_id: str) -> list[list[str]]:
    return [["resume", run_id, "--display", "none"], ["runs", "rm", run_id], ["journal", "vacuum"],
            ["audit", "faults", run_id, "--tool", "get_order", "--fault", "error"],
            ["run", "--scenarios", "retail_l1", "--methods", "blind", "--pilot", "1", "--display", "none"]]


def test_a_journal_on_read_only_media_reads_everywhere_and_refuses_writes_as_read_only(
    swept: tuple[Path, str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    journal, run_id = swept
    folder = tmp_path / "share"
    folder.mkdir()
    shutil.copy(journal, folder / "journal.sqlite")
    before = snapshot(folder)
    with read_only_view(folder) as view:
        for argv in _reading_commands(run_id, tmp_path / "export"):
            assert main([*argv, "--journal", str(view / "journal.sqlite")]) == 0, argv
            assert capsys.readouterr().err == "", argv
        for argv in _writing_commands(run_id):
            assert main([*argv, "--journal", str(view / "journal.sqlite")]) == 2, argv
            line = one_error_line(capsys)
            assert f"{view} is on read-only media, and this command writes to the journal; the journal is not " \
                   "damaged" in line, (argv, line)
    assert snapshot(folder) == before
    assert (tmp_path / "export" / f"{run_id}.jsonl").stat().st_size > 0


def test_a_read_only_journal_with_a_write_ahead_log_is_read_with_its_last_commits(
    swept: tuple[Path, str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A copy taken while a writer held the journal open: some commits live only in its -wal."""
    journal, run_id = swept
    folder = tmp_path / "snapshot"
    folder.mkdir()
    writer = sqlite3.connect(journal)
    try:
        writer.execute("PRAGMA wal_autocheckpoint=0")
        writer.execute("UPDATE runs SET stop_reason = 'only in the wal' WHERE run_id = ?", (run_id,))
        writer.commit()
        for suffix in ("", "-wal", "-shm"):
            shutil.copy(f"{journal}{suffix}", folder / f"journal.sqlite{suffix}")
        writer.execute("UPDATE runs SET stop_reason = '' WHERE run_id = ?", (run_id,))
        writer.commit()
    finally:
        writer.close()
    with read_only_view(folder) as view:
        assert main(["runs", "--json", "--journal", str(view / "journal.sqlite")]) == 0
        assert "only in the wal" in capsys.readouterr().out
        (folder / "journal.sqlite-shm").unlink()  # without it SQLite cannot read a -wal on read-only media
        assert main(["runs", "--journal", str(view / "journal.sqlite")]) == 2
        assert "unfinished write-ahead log (journal.sqlite-wal); copy the journal with its -wal" in \
            one_error_line(capsys)


def test_reading_a_journal_leaves_no_file_beside_it(swept: tuple[Path, str], tmp_path: Path,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    journal, run_id = swept
    folder = tmp_path / "mine"
    folder.mkdir()
    shutil.copy(journal, folder / "journal.sqlite")
    for argv in _reading_commands(run_id, tmp_path / "export"):
        assert main([*argv, "--journal", str(folder / "journal.sqlite")]) == 0, argv
        assert sorted(p.name for p in folder.iterdir()) == ["journal.sqlite"], argv
    capsys.readouterr()


def _damage_a_page(journal: Path) -> None:
    """Overwrite the page that holds the runs table's rows, as a bad sector or a torn copy would."""
    with sqlite3.connect(journal) as db:
        page = db.execute("SELECT rootpage FROM sqlite_master WHERE name = 'runs'").fetchone()[0]
        size = db.execute("PRAGMA page_size").fetchone()[0]
    db.close()
    with journal.open("r+b") as handle:
        handle.seek((page - 1) * size)
        handle.write(b"\xff" * size)  # the page's b-tree header too: SQLite sees it is not a valid page


def test_a_damaged_journal_says_what_to_try_and_leaves_nothing_new(
    swept: tuple[Path, str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    journal, run_id = swept
    damaged = tmp_path / "journal.sqlite"
    shutil.copy(journal, damaged)
    _damage_a_page(damaged)
    before = snapshot(tmp_path)
    for argv in (["runs"], ["report", run_id], ["show", run_id], ["resume", run_id, "--display", "none"],
                 ["runs", "rm", run_id]):
        assert main([*argv, "--journal", str(damaged)]) == 2, argv
        line = one_error_line(capsys)
        assert f"{damaged}: the journal is damaged (" in line, (argv, line)
        assert "nothing was changed. To try: if the journal was copied or moved without its journal.sqlite-wal " \
               f"file, put that file back beside it; or copy out what is readable with `sqlite3 {damaged} " \
               ".recover | sqlite3 recovered.sqlite`" in line, line
        assert snapshot(tmp_path) == before, argv


def test_a_file_that_is_not_sqlite_is_not_called_damaged(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    notes = tmp_path / "notes.sqlite"
    notes.write_text("my notes, not a journal")
    before = snapshot(tmp_path)
    assert main(["runs", "--journal", str(notes)]) == 2
    line = one_error_line(capsys)
    assert "notes.sqlite: not a shiftbench journal (file is not a database)" in line
    # A journal whose first page was overwritten reads the same: the line still says what may recover it.
    assert f"if it was a journal whose first bytes were damaged, `sqlite3 {notes} .recover" in line
    assert main(["run", "--journal", str(notes), "--display", "none"]) == 2
    assert "exists and is not a shiftbench journal" in (line := one_error_line(capsys)) and ".recover" in line
    assert snapshot(tmp_path) == before
