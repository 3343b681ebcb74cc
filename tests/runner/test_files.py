"""Outputs go to a regular file or a new path only, whole or not at all (runner/common/files.py), checked on
real file-system objects: folders, device nodes, FIFOs, sockets, links, a read-only bind mount and a
tmpfs that fills up."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from runner.common.files import output_folder, replacing, write_atomically
from simulators.errors import ShiftbenchInputError
from tests.media import fifo, fill, read_only_view, small_disk, snapshot
from tests.media import hazards as media_hazards


@pytest.fixture
def hazards(tmp_path: Path) -> Iterator[dict[str, Path]]:
    """The media helper's hazards, and links to them."""
    with media_hazards(tmp_path) as found:
        (tmp_path / "link-to-folder").symlink_to(found["is a folder"])
        found["is a folder "] = tmp_path / "link-to-folder"
        (tmp_path / "link-to-pipe").symlink_to(tmp_path / "pipe")
        found["is a FIFO (named pipe) "] = tmp_path / "link-to-pipe"
        (tmp_path / "dangling").symlink_to(tmp_path / "nowhere")
        found["is a link to nothing"] = tmp_path / "dangling"
        yield found


def test_an_output_file_is_never_anything_but_a_regular_file(tmp_path: Path, hazards: dict[str, Path]) -> None:
    before = snapshot(tmp_path)
    for expected, path in hazards.items():
        with pytest.raises(ShiftbenchInputError) as refused:
            write_atomically(path, "<html>", "--html")
        message = str(refused.value)
        assert message.startswith(f"--html {path}: {expected.strip()}") and "\n" not in message, message
        assert "nothing was written" in message
    assert snapshot(tmp_path) == before


def test_a_regular_file_is_replaced_whole_and_a_link_to_one_stays_a_link(tmp_path: Path) -> None:
    report = tmp_path / "report.html"
    report.write_text("old")
    link = tmp_path / "latest.html"
    link.symlink_to(report)
    write_atomically(report, "new", "--html")
    assert report.read_text() == "new"
    write_atomically(link, "newer", "--html")
    assert link.is_symlink() and report.read_text() == "newer"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["latest.html", "report.html"]


def test_folders_made_for_an_output_are_removed_when_it_fails(tmp_path: Path) -> None:
    target = tmp_path / "a" / "b" / "report.html"
    with pytest.raises(RuntimeError), replacing(target, "--html") as temporary:
        temporary.write_text("half")
        raise RuntimeError("the renderer failed midway")
    assert list(tmp_path.iterdir()) == []
    write_atomically(target, "whole", "--html")
    assert target.read_text() == "whole"


def test_a_full_disk_fails_with_one_line_and_leaves_nothing(tmp_path: Path) -> None:
    with small_disk(tmp_path / "disk", 256) as disk:
        (disk / "report.html").write_text("the previous report")
        before = snapshot(disk)
        with pytest.raises(ShiftbenchInputError) as refused:
            write_atomically(disk / "report.html", "x" * 400_000, "--html")
        assert str(refused.value).startswith(f"--html {disk / 'report.html'}: the disk is full (No space left")
        assert snapshot(disk) == before
        with pytest.raises(ShiftbenchInputError, match="the disk is full"):
            write_atomically(disk / "new" / "report.html", "x" * 400_000, "--html")
        assert snapshot(disk) == before  # the folder made for it went too


def test_read_only_media_is_named_as_such(tmp_path: Path) -> None:
    folder = tmp_path / "results"
    folder.mkdir()
    (folder / "report.html").write_text("kept")
    with read_only_view(folder) as view:
        for target in (view / "report.html", view / "new.html", view / "sub" / "new.html"):
            with pytest.raises(ShiftbenchInputError, match=f"{view} is on read-only media; nothing was written"):
                write_atomically(target, "x", "--html")
        with pytest.raises(ShiftbenchInputError, match="is on read-only media"), output_folder(view / "x", "--out"):
            pass
    assert sorted(p.name for p in folder.iterdir()) == ["report.html"]


def test_an_output_folder_shows_its_files_only_when_all_are_written(tmp_path: Path) -> None:
    out = tmp_path / "logs" / "run"
    with pytest.raises(RuntimeError), output_folder(out, "--out") as folder:
        folder.file("one.eval").write_text("1")
        raise RuntimeError("the second stream failed")
    assert list(tmp_path.iterdir()) == []  # no empty export folder, no staging left
    with output_folder(out, "--out") as folder:
        folder.file("one.eval").write_text("1")
        folder.file("two.eval").write_text("2")
    assert sorted(os.listdir(out)) == ["one.eval", "two.eval"]
    with output_folder(out, "--out") as folder:  # an existing folder: its regular files are replaced
        folder.file("one.eval").write_text("again")
    assert (out / "one.eval").read_text() == "again" and sorted(os.listdir(out)) == ["one.eval", "two.eval"]


def test_an_output_folder_is_a_folder_and_its_files_are_regular_ones(tmp_path: Path) -> None:
    out = tmp_path / "out"
    out.mkdir()
    (out / "run.jsonl").mkdir()
    fifo(out / "run2.jsonl")
    not_a_folder = fifo(tmp_path / "pipe")
    before = snapshot(tmp_path)
    with pytest.raises(ShiftbenchInputError, match="run.jsonl: is a folder, not a file"), \
            output_folder(out, "--out") as folder:
        folder.file("run.jsonl")
    with pytest.raises(ShiftbenchInputError, match="run2.jsonl: is a FIFO"), output_folder(out, "--out") as folder:
        folder.file("run2.jsonl")
    with pytest.raises(ShiftbenchInputError, match="pipe: is a FIFO .named pipe., not a folder"), \
            output_folder(not_a_folder, "--out"):
        pass
    assert snapshot(tmp_path) == before


def test_a_full_disk_while_an_output_folder_is_written_leaves_it_as_it_was(tmp_path: Path) -> None:
    with small_disk(tmp_path / "disk", 256) as disk:
        fill(disk, 64_000)
        before = snapshot(disk)
        with pytest.raises(ShiftbenchInputError, match=r"--out .*/export: the disk is full"), \
                output_folder(disk / "export", "--out") as folder:
            folder.file("run.jsonl").write_bytes(b"x" * 200_000)
        assert snapshot(disk) == before
