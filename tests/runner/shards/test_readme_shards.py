"""The README's "Sweeps across machines" commands, run as written (only SWEEP_ID substituted) in a folder
of their own whose built-in suite is the session's: four shard processes at once, the merge, the report."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
SECTION = "### Sweeps across machines"


def commands() -> list[str]:
    block = (ROOT / "README.md").read_text().split(SECTION, 1)[1].split("```bash\n", 1)[1].split("```", 1)[0]
    return [line for line in block.splitlines() if line.strip()]


def shell(command: str, folder: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    return subprocess.run(["bash", "-c", command], cwd=folder, env=env, capture_output=True, text=True, timeout=600)


@pytest.mark.slow
def test_the_shards_walkthrough_runs_as_written(built_suite: Path, tmp_path: Path) -> None:
    run_shards, merge, report = commands()
    (tmp_path / ".shiftbench" / "suites").mkdir(parents=True)
    (tmp_path / ".shiftbench" / "suites" / "seed-0").symlink_to(built_suite)
    assert shell(run_shards, tmp_path).returncode == 0
    assert len(list((tmp_path / ".shiftbench").glob("journal-shard-*-of-4.sqlite"))) == 4
    merged = shell(merge, tmp_path)
    assert merged.returncode == 0, merged.stderr
    found = re.search(r"Merged 4 of 4 shards of sweep (\S+) into", merged.stdout)
    assert found is not None, merged.stdout
    shown = shell(report.replace("SWEEP_ID", found[1]), tmp_path)
    assert shown.returncode == 0, shown.stderr
    assert f"run {found[1]}: completed" in shown.stdout and "merged 4 of 4 shards" in shown.stdout
    for method in ("blind", "oracle", "tabular", "rag"):
        assert re.search(rf"scripted\s+{method}\s+\d", shown.stdout)
