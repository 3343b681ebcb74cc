"""Which shard this process is: `--shard I/N`, or `--shard auto` read from the scheduler's environment.

Shards count from 0, as both schedulers do: a SLURM job array started with `--array=0-3` runs tasks
0..3 (an array starting elsewhere or stepping is mapped through SLURM_ARRAY_TASK_MIN and
SLURM_ARRAY_TASK_STEP), and a Kubernetes Indexed Job gives each pod JOB_COMPLETION_INDEX 0..N-1.

N is the sweep's, never the array's: `--shard auto` takes it from `--shards N` or the sweep file's
`shards`, and refuses without one. SLURM's own count (SLURM_ARRAY_TASK_COUNT) says only how many tasks
this array happens to have: rerunning one failed task as `sbatch --array=1` makes it 1, and taken as N
it would turn task 1 into "shard 0 of 1", the whole sweep, into shard 0's journal. So an array whose
count differs from the sweep's is refused, with the ways to rerun one task. Pure: the environment is
passed in.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

from simulators.errors import ShiftbenchInputError

__all__ = ["MAX_SHARDS", "ShardSpec", "parse_shard"]

MAX_SHARDS = 100_000
_EXPLICIT = re.compile(r"(\d+)/(\d+)")


@dataclass(frozen=True)
class ShardSpec:
    index: int
    count: int
    source: str = "--shard"
    """Where I and N came from, for messages (`--shard`, `SLURM_ARRAY_TASK_ID`, `JOB_COMPLETION_INDEX`)."""

    def __str__(self) -> str:
        return f"{self.index}/{self.count}"


def parse_shard(text: str, environ: Mapping[str, str], count: int = 0) -> ShardSpec:
    """`text` is the flag's value; `count` is N from `--shards` or the sweep file (0: not given)."""
    if text == "auto":
        return _checked(_from_environment(environ, count))
    match = _EXPLICIT.fullmatch(text.strip())
    if match is None:
        raise ShiftbenchInputError(f"--shard: expected I/N (this process's shard, counting from 0, of N) or "
                                   f"auto, got {text!r}")
    spec = ShardSpec(int(match[1]), int(match[2]))
    if count and count != spec.count:
        raise ShiftbenchInputError(f"--shard {text}: the shard count {spec.count} differs from --shards / the sweep "
                                   f"file's shards = {count}; give one count")
    return _checked(spec)


def _checked(spec: ShardSpec) -> ShardSpec:
    if not 1 <= spec.count <= MAX_SHARDS:
        raise ShiftbenchInputError(f"{spec.source}: the shard count must be between 1 and {MAX_SHARDS}, "
                                   f"got {spec.count}")
    if not 0 <= spec.index < spec.count:
        raise ShiftbenchInputError(f"{spec.source}: shard {spec.index} of {spec.count} does not exist; shards count "
                                   f"from 0 to {spec.count - 1}")
    return spec


def _from_environment(environ: Mapping[str, str], count: int) -> ShardSpec:
    if "SLURM_ARRAY_TASK_ID" in environ:
        return _slurm(environ, count)
    if "JOB_COMPLETION_INDEX" in environ:
        index = _number(environ, "JOB_COMPLETION_INDEX")
        if not count:
            raise ShiftbenchInputError("--shard auto: JOB_COMPLETION_INDEX gives this pod's index but not the "
                                       "shard count; pass --shards N (the Job's completions) or set shards in "
                                       "the sweep file")
        return ShardSpec(index, count, "JOB_COMPLETION_INDEX")
    raise ShiftbenchInputError("--shard auto: neither SLURM_ARRAY_TASK_ID (a SLURM job array) nor "
                               "JOB_COMPLETION_INDEX (a Kubernetes Indexed Job) is set; pass --shard I/N")


def _slurm(environ: Mapping[str, str], count: int) -> ShardSpec:
    task = _number(environ, "SLURM_ARRAY_TASK_ID")
    first = _number(environ, "SLURM_ARRAY_TASK_MIN") if "SLURM_ARRAY_TASK_MIN" in environ else 0
    step = _number(environ, "SLURM_ARRAY_TASK_STEP") if "SLURM_ARRAY_TASK_STEP" in environ else 1
    if step < 1 or (task - first) % step:
        raise ShiftbenchInputError(f"--shard auto: SLURM_ARRAY_TASK_ID {task} is not on the array's steps "
                                   f"(min {first}, step {step}); pass --shard I/N")
    if not count:
        raise ShiftbenchInputError("--shard auto: the shard count comes from the sweep, not the array (an array "
                                   "resubmitted for one task has a count of 1); set shards = N in the sweep file "
                                   "or pass --shards N")
    given = _number(environ, "SLURM_ARRAY_TASK_COUNT") if "SLURM_ARRAY_TASK_COUNT" in environ else count
    if given != count:
        raise ShiftbenchInputError(f"--shard auto: this array has {given} task(s) (SLURM_ARRAY_TASK_COUNT) but the "
                                   f"sweep has {count} shards, so task {task} names no shard; rerun a failed task "
                                   f"with `scontrol requeue JOBID_{task}`, or run it as `--shard I/{count}`")
    return ShardSpec((task - first) // step, count, "SLURM_ARRAY_TASK_ID")


def _number(environ: Mapping[str, str], name: str) -> int:
    text = environ[name].strip()
    if not text.isdigit():
        raise ShiftbenchInputError(f"--shard auto: {name} must be a whole number, got {text!r}")
    return int(text)
