"""Every command's output goes to a regular file or a new path (issue 21 item 3), as a user meets it:
a folder, a device, a FIFO or a socket named as `report --html`, `compare --html`, `export --out`,
`data build --out`, `lock` or `journal merge` is refused with one line, exit 2, and nothing on disk
changes; a command that fails midway leaves nothing behind. The devices are nodes made in tmp_path
(copies of /dev/null and /dev/full), never the machine's own."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from runner.cli import main
from tests.media import fifo, snapshot
from tests.media import hazards as media_hazards
from tests.runner.test_cli_errors import one_error_line
from tests.support import cli_sweep


@pytest.fixture(scope="module")
def swept(built_suite: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    return cli_sweep(built_suite, tmp_path_factory.mktemp("swept"), ("retail_l1",), ("blind", "tabular"))


@pytest.fixture
def hazards(tmp_path: Path) -> Iterator[dict[str, Path]]:
    with media_hazards(tmp_path) as found:
        yield found


def _commands(run_id: str, journal: Path, target: Path) -> list[tuple[list[str], str]]:
    on = ["--journal", str(journal)]
    return [(["report", run_id, "--html", str(target), *on], "--html"),
            (["compare", f"{run_id}:scripted/tabular", f"{run_id}:scripted/blind", "--html", str(target), *on],
             "--html"),
            (["lock", str(target)], "lock")]


def test_an_output_file_that_is_not_a_regular_file_is_refused(swept: tuple[Path, str], tmp_path: Path,
                                                              hazards: dict[str, Path],
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    journal, run_id = swept
    before = snapshot(tmp_path)
    for expected, target in hazards.items():
        for argv, flag in _commands(run_id, journal, target):
            assert main(argv) == 2, argv
            line = one_error_line(capsys)
            assert line.startswith(f"shiftbench: error: {flag} {target}: {expected.strip()}"), line
        assert snapshot(tmp_path) == before, target


def test_an_output_folder_that_is_not_a_folder_is_refused(swept: tuple[Path, str], tmp_path: Path,
                                                          hazards: dict[str, Path],
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    journal, run_id = swept
    del hazards["is a folder"]
    before = snapshot(tmp_path)
    for expected, target in hazards.items():
        assert main(["export", run_id, "--out", str(target), "--journal", str(journal)]) == 2
        assert f"--out {target}: {expected.strip()}, not a folder; nothing was written" in one_error_line(capsys)
        assert main(["data", "build", "--out", str(target)]) == 2
        assert f"--out {target}: is not a folder" in one_error_line(capsys)
        assert main(["journal", "merge", str(target), str(journal)]) == 2
        assert f"journal merge {target}: exists" in one_error_line(capsys)
    assert snapshot(tmp_path) == before


def test_an_export_writes_regular_files_only_and_leaves_no_folder_when_it_fails(
    swept: tuple[Path, str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    journal, run_id = swept
    out = tmp_path / "logs"
    out.mkdir()
    (out / f"{run_id}.jsonl").mkdir()  # where the export's file would go
    fifo(tmp_path / "other.jsonl")
    before = snapshot(tmp_path)
    assert main(["export", run_id, "--out", str(out), "--journal", str(journal)]) == 2
    assert f"--out {out / (run_id + '.jsonl')}: is a folder, not a file" in one_error_line(capsys)
    for failing in (["export", "r-no-such-run", "--out", str(tmp_path / "new" / "logs"), "--journal", str(journal)],
                    ["export", run_id, "--out", str(tmp_path / "new2"), "--journal", str(tmp_path / "nowhere.sqlite")]):
        assert main(failing) == 2
        one_error_line(capsys)
    assert snapshot(tmp_path) == before  # no empty export folder, no staging left
    assert main(["export", run_id, "--out", str(tmp_path / "fresh" / "logs"), "--journal", str(journal)]) == 0
    assert [p.name for p in (tmp_path / "fresh" / "logs").iterdir()] == [f"{run_id}.jsonl"]
    capsys.readouterr()


def test_a_report_replaces_a_regular_file_and_only_that(swept: tuple[Path, str], tmp_path: Path,
                                                        capsys: pytest.CaptureFixture[str]) -> None:
    journal, run_id = swept
    page = tmp_path / "report.html"
    page.write_text("last week's report")
    link = tmp_path / "latest.html"
    link.symlink_to(page)
    assert main(["report", run_id, "--html", str(link), "--journal", str(journal)]) == 0
    assert link.is_symlink() and page.read_text().startswith("<!DOCTYPE html>")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["latest.html", "report.html"]
    capsys.readouterr()
