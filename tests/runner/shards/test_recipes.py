"""The recipes in docs/shards/ run as their schedulers would run them: a SLURM job array's script under
bash with the variables SLURM sets, a Kubernetes Indexed Job's command with JOB_COMPLETION_INDEX and its
volumes mapped to folders; N processes at once, one killed mid-work and started again (a requeue, a
restarted pod), then the merge step, whose journal verifies."""

from __future__ import annotations

import re
import shlex
import subprocess
from pathlib import Path

import orjson
import pytest

from runner.config.settings import load_config_file
from tests.runner.shards.processes import (
    PROCESS_TIMEOUT_S,
    committed,
    finish,
    freeze_after,
    kill,
    only_run,
    shiftbench,
    start,
)

RECIPES = Path(__file__).resolve().parents[3] / "docs" / "shards"
COUNT = 4
SHIFTBENCH = shlex.join(shiftbench())


def small_sweep(folder: Path, suite: Path, shards: int = 0) -> Path:
    sweep = folder / "sweep.toml"
    sweep.write_text(f'dataset = "{suite}"\nmodels = ["scripted"]\nmethods = ["tabular", "rag"]\n'
                     f'scenarios = ["retail_l1", "banking_l1", "pitch_l1"]\npilot = 4\n'
                     + (f"shards = {shards}\n" if shards else ""))
    return sweep


def kill_mid_work(process: subprocess.Popen[bytes], journal: Path) -> None:
    """SIGKILL once its journal holds 5 episodes (frozen first, so it is killed mid-work)."""
    assert freeze_after(process, journal, 5), "the shard ended before 5 episodes"
    kill(process)


@pytest.mark.slow
def test_the_slurm_array_script_runs_requeues_and_merges(built_suite: Path, tmp_path: Path) -> None:
    sweep = small_sweep(tmp_path, built_suite, shards=COUNT)
    journals = tmp_path / "journals"
    script = RECIPES / "slurm-shards.sbatch"
    assert re.search(r"^#SBATCH --array=0-3$", script.read_text(), re.M)

    def array_task(index: int, restarts: int = 0) -> subprocess.Popen[bytes]:
        env = {"SLURM_ARRAY_JOB_ID": "4242", "SLURM_ARRAY_TASK_ID": str(index), "SLURM_ARRAY_TASK_MIN": "0",
               "SLURM_ARRAY_TASK_MAX": str(COUNT - 1), "SLURM_ARRAY_TASK_COUNT": str(COUNT),
               "SLURM_ARRAY_TASK_STEP": "1", "SLURM_RESTART_COUNT": str(restarts), "SHIFTBENCH": SHIFTBENCH,
               "SWEEP_FILE": str(sweep), "JOURNALS": str(journals)}
        return start(["bash", str(script)], tmp_path / f"task-{index}-{restarts}.log", env)

    tasks = [array_task(i) for i in range(COUNT)]
    kill_mid_work(tasks[0], journals / "shard-0.sqlite")
    at_kill = committed(journals / "shard-0.sqlite")
    assert finish(tasks[1:]) == [0] * (COUNT - 1)
    assert finish([array_task(0, restarts=1)]) == [0]
    assert "continues run" in (tmp_path / "task-0-1.log").read_text()

    merge = subprocess.run(["bash", str(RECIPES / "slurm-merge.sbatch")], capture_output=True, text=True,
                           timeout=PROCESS_TIMEOUT_S, cwd=tmp_path,
                           env={"PATH": "/usr/bin:/bin", "SHIFTBENCH": SHIFTBENCH, "JOURNALS": str(journals)})
    assert merge.returncode == 0, merge.stderr
    assert "Merged 4 of 4 shards" in merge.stdout and "re-grade equal" in merge.stdout
    assert committed(journals / "merged.sqlite") == sum(committed(journals / f"shard-{i}.sqlite")
                                                        for i in range(COUNT)) > at_kill


def _command(manifest: Path) -> list[str]:
    """The container's command of a manifest (written as a one-line flow list, which is JSON)."""
    found = re.search(r"^\s*command: (\[.*\])$", manifest.read_text(), re.M)
    assert found is not None, f"{manifest}: no one-line command"
    command: list[str] = orjson.loads(found[1])
    return command


@pytest.mark.slow
def test_the_kubernetes_indexed_job_runs_restarts_a_pod_and_merges(built_suite: Path, tmp_path: Path) -> None:
    manifest = RECIPES / "kubernetes-shards.yaml"
    text = manifest.read_text()
    completions = int(re.search(r"^\s*completions: (\d+)$", text, re.M)[1])  # type: ignore[index]
    assert "completionMode: Indexed" in text and completions == COUNT
    volumes = {"/sweep": tmp_path / "sweep", "/journals": tmp_path / "journals"}
    for folder in volumes.values():
        folder.mkdir()
    small_sweep(volumes["/sweep"], built_suite, shards=completions)

    def mapped(argument: str) -> str:
        for mount, folder in volumes.items():
            argument = argument.replace(f"{mount}/", f"{folder}/")
        return argument

    def pod(index: int, attempt: int = 0) -> subprocess.Popen[bytes]:
        command = _command(manifest)
        assert command[0] == "shiftbench"
        return start([*shiftbench(), *(mapped(a) for a in command[1:])], tmp_path / f"pod-{index}-{attempt}.log",
                     {"JOB_COMPLETION_INDEX": str(index)})

    pods = [pod(i) for i in range(COUNT)]
    kill_mid_work(pods[0], volumes["/journals"] / "shard-0.sqlite")
    assert finish(pods[1:]) == [0] * (COUNT - 1)
    assert finish([pod(0, attempt=1)]) == [0]

    merge = _command(RECIPES / "kubernetes-merge.yaml")
    assert merge[:2] == ["sh", "-c"]
    done = subprocess.run(["sh", "-c", mapped(merge[2]).replace("shiftbench ", f"{SHIFTBENCH} ")],
                          capture_output=True, text=True, timeout=PROCESS_TIMEOUT_S)
    assert done.returncode == 0, done.stderr
    assert "Merged 4 of 4 shards" in done.stdout and "re-grade equal" in done.stdout  # its report and verify
    merged = volumes["/journals"] / "merged.sqlite"
    verified = subprocess.run([*shiftbench("verify", only_run(merged), "--journal", str(merged))],
                              capture_output=True, text=True, timeout=PROCESS_TIMEOUT_S)
    assert verified.returncode == 0 and "re-grade equal" in verified.stdout


def test_the_recipes_sweep_file_reads() -> None:
    config = load_config_file(RECIPES / "sweep.toml")
    assert config.shards == COUNT and "tabular" in config.methods
