"""`python -m bench.slurm_cluster` where Debian's slurm-wlm and munge are installed (skipped, with the install
line, where they are not): the SLURM recipes verbatim on a real single-node cluster, one task cancelled and
requeued, the merge equal to a one-process run, the one-task rerun arrays refused. Small (`--pilot 12`);
the daemons are this test's processes, stopped by their PIDs."""

from __future__ import annotations

import os
from pathlib import Path

import orjson
import pytest

from bench import slurm_cluster
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
