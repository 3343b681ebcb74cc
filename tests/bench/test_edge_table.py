"""The edge table script (bench/edge_table.py) on item 1 alone: its rows are the real CLI's refusals (exit 2,
each judged ok), and everything it made stayed in its own temporary folder, which it removed."""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import pytest

from bench.edge_table import main

REPO = Path(__file__).resolve().parents[2]


def _outside(own: Path) -> dict[str, object]:
    """What the script must not touch: the machine's two devices, mounts under its own folder (other
    workers' media tests mount and unmount theirs meanwhile), the checkout's tracked and untracked files
    (ignored ones, such as caches another worker compiles, may come and go), this folder's default journal."""
    devices = {name: (os.lstat(name).st_mode, os.lstat(name).st_rdev) for name in ("/dev/null", "/dev/full")}
    status = subprocess.run(["git", "status", "--porcelain"], cwd=REPO, capture_output=True,
                            text=True, check=True).stdout
    mounts = [line for line in Path("/proc/self/mountinfo").read_text().splitlines() if str(own) in line]
    default = Path.cwd() / ".shiftbench"
    return {"devices": devices, "mounts": mounts, "git": status,
            "journal": sorted(p.name for p in default.iterdir()) if default.is_dir() else None}


def _rows(table: str, item: str) -> list[list[str]]:
    """The table's rows of one item, cells split on the pipes Markdown does not escape."""
    return [[cell.strip() for cell in re.split(r"(?<!\\)\|", line)[1:-1]]
            for line in table.splitlines() if line.startswith(f"| {item} |")]


@pytest.mark.heavy
def test_item_1_edges_are_refused_with_exit_2_and_nothing_outside_its_folder_changes(tmp_path: Path) -> None:
    before = _outside(tmp_path)
    out = tmp_path / "table.md"
    assert main(["--only", "item1", "--pilot", "1", "--in", str(tmp_path), "--out", str(out)]) == 0
    assert _outside(tmp_path) == before
    assert [p.name for p in tmp_path.iterdir()] == ["table.md"]  # its temporary folder is gone
    rows = _rows(out.read_text(), "1")
    refused = [row for row in rows if row[3] == "2"]
    assert len(refused) >= 10, rows
    assert all(row[4].startswith("shiftbench: error: ") for row in refused), refused
    assert [row for row in rows if row[7] != "ok"] == []
    assert {row[3] for row in rows} == {"0", "2"}
