"""`python -m bench.slurm_cluster` where Debian's slurm-wlm and munge are installed (skipped, with the install
line, where they are not): the SLURM recipes verbatim on a real single-node cluster, one task cancelled and
requeued, the merge equal to a one-process run, the one-task rerun arrays refused. Small (`--pilot 12`);
the daemons are this test's processes, stopped by their PIDs."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import orjson
import pytest

from bench import slurm_cluster, slurm_daemons
from bench.slurm_daemons import INSTALL, missing_tools


@pytest.mark.slow
@pytest.mark.heavy  # a real cluster's scheduling and a requeue's hold: 1-3 min here
def test_the_slurm_recipes_on_a_real_cluster(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    missing = missing_tools()
    if missing:
        pytest.skip(f"{', '.join(missing)} not installed: {INSTALL}")
    if os.geteuid() != 0:
        pytest.skip("slurmd runs jobs as their users: this single-node cluster needs root")
    code = slurm_cluster.main(["--scratch", str(tmp_path), "--pilot", "12"])
    said = capsys.readouterr().out
    assert code == 0, said
    figures = orjson.loads((tmp_path / "figures.json").read_bytes())
    assert figures["first_merge"][0][1] == "2:0" and "has not finished" in figures["first_merge"][1]
    assert figures["merge"] == ["COMPLETED", "0:0"] and figures["merged_line"].startswith("Merged 4 of 4 shards")
    assert figures["identical"] == figures["episodes"] == figures["merged_episodes"] > 0
    assert figures["seal_equal"] and figures["verify"] == 0
    assert [r[0] for r in figures["reruns"]] == ["FAILED 2:0"] * 2 and all(r[2] for r in figures["reruns"])
    assert "continues run" in said


# --------------------------------------------------------------- what a bare machine lacks, in one line


def _refused(argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    code = slurm_cluster.main(argv)
    said = capsys.readouterr()
    assert code == 2 and said.out == "" and said.err.count("\n") == 1, said
    return said.err


def test_a_machine_that_cannot_run_the_recipes_is_told_why_before_any_daemon_starts(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    if missing_tools():
        assert "install them: " + INSTALL in _refused(["--scratch", str(tmp_path / "s")], capsys)
        return
    scratch = tmp_path / "s"
    monkeypatch.setattr(slurm_daemons.os, "geteuid", lambda: 1000)
    assert "only root may do: run this as root" in _refused(["--scratch", str(scratch)], capsys)
    monkeypatch.setattr(slurm_daemons.os, "geteuid", lambda: 0)
    monkeypatch.setattr(slurm_daemons, "_memory_mb", lambda: 3000)
    assert "3,000 MB for jobs; the recipes ask 2 CPUs and 4 GB a shard task" in _refused(["--scratch", str(scratch)],
                                                                                          capsys)
    monkeypatch.setattr(slurm_daemons, "_memory_mb", lambda: 8000)
    monkeypatch.setattr(slurm_cluster, "shiftbench_bin", lambda: tmp_path)
    assert f"no shiftbench beside {sys.executable}" in _refused(["--scratch", str(scratch)], capsys)
    assert not scratch.exists()  # nothing made, nothing started


def test_an_array_task_on_a_node_without_shiftbench_says_so_in_one_line(tmp_path: Path) -> None:
    for script in ("slurm-shards.sbatch", "slurm-merge.sbatch"):
        done = subprocess.run(["bash", str(slurm_cluster.RECIPES / script)], capture_output=True, text=True,
                              cwd=tmp_path, timeout=60, env={"PATH": "/usr/bin:/bin", "SLURM_ARRAY_TASK_ID": "0",
                                                             "SLURM_ARRAY_TASK_COUNT": "4"})
        assert done.returncode == 2 and done.stdout == "" and done.stderr.count("\n") == 1, done
        assert f"{script}: 'shiftbench' not found on " in done.stderr and "source .venv/bin/activate" in done.stderr
        assert list(tmp_path.iterdir()) == []  # no journals folder, no log
