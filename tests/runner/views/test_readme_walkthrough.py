"""The README's "Reading a run the morning after", run as written on the quickstart's kind of run
(scripted, blind and oracle) and on a learning run (blind and tabular), each command's output checked
against the journal and the dataset.

The commands are read from README.md, so the test breaks when the README drifts; only RUN_ID is
substituted. They run through a shell in a folder of their own, as a user types them there after
`shiftbench run` (default journal). The runs are small (two scenarios, --pilot 4): the walkthrough's
names (scripted/blind, retail_l1, window 3) are ones every run of the built-in suite has.
"""

from __future__ import annotations

import json
import os
import re
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
SECTION = "### Reading a run the morning after"
WINDOW = 3


def walkthrough() -> list[str]:
    """The commands of the section's first bash block, in order."""
    text = (ROOT / "README.md").read_text()
    block = text.split(SECTION, 1)[1].split("```bash\n", 1)[1].split("```", 1)[0]
    return [line for line in block.splitlines() if line.strip()]


def shell(command: str, folder: Path) -> subprocess.CompletedProcess[str]:
    bin_dir = str(Path(sys.executable).parent)  # where the venv put `shiftbench`
    env = {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}", "COLUMNS": "120"}
    return subprocess.run(["bash", "-c", command], cwd=folder, env=env, capture_output=True, text=True, timeout=600)


def rows(journal: Path, sql: str, *params: object) -> list[tuple[object, ...]]:
    with sqlite3.connect(journal) as db:
        return db.execute(sql, params).fetchall()


def run_in(folder: Path, suite: Path, methods: str) -> str:
    done = shell(f"shiftbench run --dataset {suite} --methods {methods} --scenarios retail_l1,pitch_l1 --pilot 4 "
                 "--display none", folder)
    assert done.returncode == 0, done.stderr
    (run_id,), = rows(folder / ".shiftbench" / "journal.sqlite", "SELECT run_id FROM runs")
    return str(run_id)


@pytest.mark.slow
@pytest.mark.parametrize("methods", ["blind,oracle", "blind,tabular"])
def test_the_morning_after_walkthrough_runs_as_written(built_suite: Path, tmp_path: Path, methods: str) -> None:
    commands = walkthrough()
    assert [c.split()[:2] for c in commands] == [["shiftbench", "runs"], ["shiftbench", "show"],
                                                 ["shiftbench", "state"], ["shiftbench", "export"]]
    run_id = run_in(tmp_path, built_suite, methods)
    journal = tmp_path / ".shiftbench" / "journal.sqlite"
    outputs = []
    for command in commands:
        done = shell(command.replace("RUN_ID", run_id), tmp_path)
        assert done.returncode == 0 and done.stderr == "", (command, done.stderr)
        outputs.append(done.stdout)
    listed, shown, state, exported = outputs
    check_runs(listed, run_id, methods)
    check_show(shown, journal, commands[1])
    check_state(state, methods, built_suite)
    check_export(exported, tmp_path, run_id, journal)


def check_runs(out: str, run_id: str, methods: str) -> None:
    # At 120 columns the table may split into panels, each repeating the run id: the run's lines together.
    line = " ".join(line for line in out.splitlines() if line.startswith(run_id))
    assert " completed " in line and methods.replace(",", ", ") in line


def check_show(out: str, journal: Path, command: str) -> None:
    limit = int(re.search(r"--limit (\d+)", command).group(1))  # type: ignore[union-attr]
    failed = rows(journal, "SELECT u.task_id, u.window, u.category FROM episodes e JOIN units u "
                           "USING (run_id, unit_id) WHERE u.method = 'blind' AND u.scenario = 'retail_l1' "
                           "AND e.reward < 1 ORDER BY u.rowid")
    assert len(failed) > limit
    titles = [line for line in out.splitlines() if line.startswith("╭─ Score:")]
    assert len(titles) == limit and all(" Score: 100/100." not in t for t in titles)
    for title, (task_id, window, category) in zip(titles, failed, strict=False):
        assert f"window {window}  {category}" in title
        assert str(task_id) in out
    assert f"... {len(failed) - limit} more episodes match" in out


def check_state(out: str, methods: str, suite: Path) -> None:
    blind, other = out.split("\n\n", 1)
    assert blind.startswith(f"scripted/blind on retail_l1, state as of window {WINDOW}\n")
    assert "blind learns nothing" in blind
    if methods == "blind,oracle":
        windows = json.loads((suite / "environments" / "retail_l1" / "windows.json").read_text())
        (bulletin,) = [w["oracle_bulletin"] for w in windows if w["window"] == WINDOW]
        assert other.startswith(f"scripted/oracle on retail_l1, state as of window {WINDOW}\n")
        # Word for word: at 120 columns its longer lines wrap between words (the policy block, fenced, whole).
        assert " ".join(bulletin.split()) in " ".join(other.split())
        block = bulletin[bulletin.index("```"):]
        assert block.strip() in other
    else:
        assert other.startswith(f"scripted/tabular on retail_l1, state as of end of window {WINDOW}\nBeliefs:\n")
        assert "Policy block it writes into the agent's prompt:" in other and "```shiftbench-policy" in other


def check_export(out: str, folder: Path, run_id: str, journal: Path) -> None:
    target = folder / "logs" / f"{run_id}.jsonl"
    (episodes,), = rows(journal, "SELECT count(*) FROM episodes")
    assert out.strip() == f"Wrote {episodes} episodes to logs/{run_id}.jsonl" or str(target) in out
    lines = target.read_bytes().splitlines()
    assert len(lines) == episodes and all(json.loads(line)["run_id"] == run_id for line in lines)
