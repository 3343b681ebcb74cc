"""The quickstart's layout does not open the boundary: a method file beside `.shiftbench/` (the journal)
may read its own file only, so the journal beside it stays closed; naming that folder with
`--method-reads` is refused before the run, in one line naming the flag and what it holds."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from runner.workers.boundary import landlock_abi
from tests.runner.workers.test_guest_boundary import sweep
from tests.runner.workers.test_guest_failures import failure_lines
from tests.runner.workers.test_guest_runs import GUESTS

pytestmark = pytest.mark.skipif(landlock_abi() < 1, reason="needs Landlock")


def test_a_method_beside_the_journal_cannot_read_it(built_suite: Path, tmp_path: Path) -> None:
    project = tmp_path / "project"
    (project / ".shiftbench").mkdir(parents=True)
    guests = project / "guests.py"
    shutil.copyfile(GUESTS, guests)
    journal = project / ".shiftbench" / "journal.sqlite"
    done = sweep(built_suite, journal, f"reader={guests}:READER", {"GUEST_SECRET": str(journal)},
                 "--method-env", "GUEST_SECRET")
    lines = failure_lines(done.stdout)
    assert done.returncode == 1 and len(lines) == 1, done.stdout + done.stderr
    assert f"PermissionError: [Errno 13] Permission denied: '{journal}'" in lines[0]


def test_a_read_root_holding_the_journal_is_refused_before_the_run(built_suite: Path, tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    guests = project / "guests.py"
    shutil.copyfile(GUESTS, guests)
    journal = project / ".shiftbench" / "journal.sqlite"
    refused = sweep(built_suite, journal, f"counter={guests}:COUNTER", {}, "--method-reads", str(project))
    assert refused.returncode == 2 and refused.stdout == "", refused.stdout + refused.stderr
    (line,) = refused.stderr.strip().splitlines()
    assert line.startswith(f"shiftbench: error: --method-reads: {project} holds {journal}"), line
    assert not journal.exists()
