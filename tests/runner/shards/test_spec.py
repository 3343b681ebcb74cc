"""`--shard I/N` and `--shard auto` from SLURM's and Kubernetes' environment variables."""

from __future__ import annotations

from pathlib import Path

import pytest

from runner.cli import main
from runner.shards.spec import ShardSpec, parse_shard
from simulators.errors import ShiftbenchInputError


def test_explicit_shards_count_from_zero() -> None:
    assert parse_shard("2/4", {}) == ShardSpec(2, 4)
    assert parse_shard("0/1", {}, count=1) == ShardSpec(0, 1)
    for bad in ("4/4", "1/0", "a/4", "1-4", "-1/4"):
        with pytest.raises(ShiftbenchInputError, match="--shard"):
            parse_shard(bad, {})
    with pytest.raises(ShiftbenchInputError, match="differs"):
        parse_shard("1/4", {}, count=8)


def test_a_slurm_array_gives_the_index_and_the_sweep_the_count() -> None:
    env = {"SLURM_ARRAY_TASK_ID": "3", "SLURM_ARRAY_TASK_COUNT": "4", "SLURM_ARRAY_TASK_MIN": "0"}
    assert parse_shard("auto", env, count=4) == ShardSpec(3, 4, "SLURM_ARRAY_TASK_ID")
    # --array=1-4 and --array=10-16:2 map onto 0..N-1
    assert parse_shard("auto", {**env, "SLURM_ARRAY_TASK_ID": "4", "SLURM_ARRAY_TASK_MIN": "1"}, count=4).index == 3
    stepped = {"SLURM_ARRAY_TASK_ID": "14", "SLURM_ARRAY_TASK_MIN": "10", "SLURM_ARRAY_TASK_STEP": "2",
               "SLURM_ARRAY_TASK_COUNT": "4"}
    assert parse_shard("auto", stepped, count=4) == ShardSpec(2, 4, "SLURM_ARRAY_TASK_ID")
    with pytest.raises(ShiftbenchInputError, match="this array has 4 task"):
        parse_shard("auto", env, count=5)
    with pytest.raises(ShiftbenchInputError, match="whole number"):
        parse_shard("auto", {**env, "SLURM_ARRAY_TASK_ID": "x"}, count=4)


def test_rerunning_one_task_as_an_array_of_one_is_refused_with_how_to_rerun_it() -> None:
    """`sbatch --array=1` of a 4-shard sweep: SLURM says task 1, min 1, count 1, which the array's own count
    would make shard 0 of 1 (the whole sweep); the sweep's count refuses it, and without one auto refuses."""
    rerun = {"SLURM_ARRAY_TASK_ID": "1", "SLURM_ARRAY_TASK_MIN": "1", "SLURM_ARRAY_TASK_MAX": "1",
             "SLURM_ARRAY_TASK_COUNT": "1", "SLURM_ARRAY_TASK_STEP": "1"}
    with pytest.raises(ShiftbenchInputError) as refused:
        parse_shard("auto", rerun, count=4)
    assert "has 1 task(s)" in str(refused.value) and "scontrol requeue JOBID_1" in str(refused.value)
    assert "--shard I/4" in str(refused.value)
    with pytest.raises(ShiftbenchInputError, match="set shards = N in the sweep file or pass --shards N"):
        parse_shard("auto", rerun)
    # the full array without a count in the sweep is refused the same way: N is never the array's
    with pytest.raises(ShiftbenchInputError, match="comes from the sweep"):
        parse_shard("auto", {**rerun, "SLURM_ARRAY_TASK_COUNT": "4", "SLURM_ARRAY_TASK_MAX": "4"})


def test_a_kubernetes_indexed_job_needs_the_count_from_the_flag_or_sweep_file() -> None:
    env = {"JOB_COMPLETION_INDEX": "1"}
    assert parse_shard("auto", env, count=3) == ShardSpec(1, 3, "JOB_COMPLETION_INDEX")
    with pytest.raises(ShiftbenchInputError, match="--shards N"):
        parse_shard("auto", env)
    with pytest.raises(ShiftbenchInputError, match="does not exist"):
        parse_shard("auto", {"JOB_COMPLETION_INDEX": "3"}, count=3)


def test_auto_without_a_scheduler_says_what_to_pass() -> None:
    with pytest.raises(ShiftbenchInputError, match="pass --shard I/N"):
        parse_shard("auto", {"PATH": "/usr/bin"})


def test_shard_flags_misused_are_refused_before_anything_runs(built_suite: Path, tmp_path: Path,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    journal = tmp_path / "shard-{shard}.sqlite"
    base = ["run", "--dataset", str(built_suite), "--scenarios", "pitch_l1", "--methods", "blind", "--pilot", "1",
            "--display", "none", "--journal", str(journal)]
    for extra, says in ((["--shard", "2/3"], "cannot be split into 3 shards; use at most 1"),
                        (["--sweep", "lab-a"], "--sweep: only with --shard"),
                        (["--shards", "4"], "--shards: only with --shard"),
                        (["--shard", "0/2", "--shards", "3"], "differs"),
                        (["--shard", "0/1", "--sweep", "no spaces"], "a sweep name is")):
        assert main([*base, *extra]) == 2
        err = capsys.readouterr().err
        assert says in err and err.count("\n") == 1, err
    assert list(tmp_path.iterdir()) == []
