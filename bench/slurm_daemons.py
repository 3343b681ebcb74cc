"""A real single-node SLURM cluster on 127.0.0.1, for `bench.slurm_cluster`: Debian's slurm-wlm and munge,
found (never installed), configured in a scratch folder and run as processes this one owns.

munged, slurmctld and slurmd run in the foreground (`-F`, `-D`) as children of this process, on ports
picked free, with every file (key, configuration, state, spool, logs, PID files) in the scratch folder:
nothing under /etc, /run or /var is read or written, and no systemd unit is involved. They are stopped
by their own PIDs when the block ends (SIGTERM, then SIGKILL after a grace period). The node is this
machine as it is (its CPUs and memory), `proctrack/linuxproc` and `task/none` (no cgroups needed),
`select/cons_tres` counting cores and memory, so `--cpus-per-task` and `--mem` are honoured as on a
cluster. Commands (`sbatch`, `scontrol`, ...) find it through SLURM_CONF in `Cluster.env`.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import time
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path

__all__ = ["INSTALL", "TOOLS", "Cluster", "missing_tools", "not_ready", "running_cluster"]

TOOLS = ("munged", "slurmctld", "slurmd", "sbatch", "scontrol", "squeue", "scancel", "sinfo")
INSTALL = "apt-get install -y slurm-wlm munge"
SBIN = ("/usr/sbin", "/usr/bin", "/sbin", "/bin")
START_TIMEOUT_S = 120.0
STOP_GRACE_S = 10.0


def _find(tool: str) -> str | None:
    return shutil.which(tool) or shutil.which(tool, path=os.pathsep.join(SBIN))


def missing_tools() -> list[str]:
    return [tool for tool in TOOLS if _find(tool) is None]


RECIPE_CPUS, RECIPE_MEMORY_MB = 2, 4096 + 1024
"""What docs/shards/ asks of a node: a shard task's `--cpus-per-task=2 --mem=4G`, the merge's `--mem=1G`."""


def not_ready(scratch: Path) -> str | None:
    """What this machine lacks for a one-node cluster running the recipes, in one line (None: nothing).
    Said before any daemon starts: each of these otherwise shows only as jobs that never start or fail."""
    missing = missing_tools()
    if missing:
        return f"{', '.join(missing)} not found; install them: {INSTALL}"
    if os.geteuid() != 0:
        return ("slurmd starts every job as its user, which only root may do: run this as root (sudo -E env "
                "PATH=\"$PATH\" python -m bench.slurm_cluster)")
    cpus, memory_mb = os.cpu_count() or 1, _memory_mb()
    if cpus < RECIPE_CPUS or memory_mb < RECIPE_MEMORY_MB:
        return (f"this machine has {cpus} CPUs and {memory_mb:,} MB for jobs; the recipes ask {RECIPE_CPUS} CPUs "
                f"and 4 GB a shard task and 1 GB for the merge ({RECIPE_MEMORY_MB:,} MB): run it on a larger machine")
    probe = scratch if scratch.exists() else scratch.parent
    if os.statvfs(probe).f_flag & os.ST_NOEXEC:
        return (f"{probe} is on a filesystem mounted noexec, and slurmd runs each job's script from its spool "
                "there: give --scratch DIR on another filesystem")
    return None


@dataclass(frozen=True)
class Cluster:
    folder: Path
    node: str
    cpus: int
    memory_mb: int
    env: dict[str, str]
    """The environment for SLURM's commands: SLURM_CONF pointing at this cluster's configuration."""

    def command(self, *args: str, cwd: Path | None = None, check: bool = True) -> subprocess.CompletedProcess[str]:
        tool = _find(args[0]) or args[0]
        done = subprocess.run([tool, *args[1:]], capture_output=True, text=True, env=self.env, cwd=cwd, timeout=120)
        if check and done.returncode != 0:
            raise RuntimeError(f"{' '.join(args)}: exit {done.returncode}: {done.stderr.strip()}")
        return done


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _memory_mb() -> int:
    pages, size = os.sysconf("SC_PHYS_PAGES"), os.sysconf("SC_PAGE_SIZE")
    return int(pages * size / 2**20 * 0.9)  # slurmd refuses a node configured with more than it finds


def _configuration(folder: Path, node: str, cpus: int, memory_mb: int) -> str:
    return "\n".join([
        "ClusterName=shiftbench-bench",
        f"SlurmctldHost={node}(127.0.0.1)",
        f"SlurmctldPort={_free_port()}", f"SlurmdPort={_free_port()}",
        "SlurmUser=root" if os.geteuid() == 0 else f"SlurmUser={os.environ.get('USER', 'root')}",
        "AuthType=auth/munge", "CredType=cred/munge",
        # cred_expire is also how long a requeued job waits before it may start again (120 s by default)
        f"AuthInfo=socket={folder / 'munge.sock'},cred_expire=10",
        f"StateSaveLocation={folder / 'state'}", f"SlurmdSpoolDir={folder / 'spool'}",
        f"SlurmctldPidFile={folder / 'slurmctld.pid'}", f"SlurmdPidFile={folder / 'slurmd.pid'}",
        "ProctrackType=proctrack/linuxproc", "TaskPlugin=task/none",
        "SelectType=select/cons_tres", "SelectTypeParameters=CR_Core_Memory",
        "JobAcctGatherType=jobacct_gather/none", "AccountingStorageType=accounting_storage/none",
        "MpiDefault=none", "ReturnToService=2", "SchedulerParameters=sched_interval=1",
        "MinJobAge=3600",  # finished jobs stay visible to `scontrol show job` for the whole bench
        f"NodeName={node} NodeAddr=127.0.0.1 CPUs={cpus} RealMemory={memory_mb} State=UNKNOWN",
        f"PartitionName=bench Nodes={node} Default=YES MaxTime=INFINITE State=UP", ""])


@contextmanager
def _daemon(command: list[str], log: Path, env: dict[str, str]) -> Iterator[subprocess.Popen[bytes]]:
    with log.open("ab") as out:
        process = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT, env=env, start_new_session=True)
    try:
        yield process
    finally:
        if process.poll() is None:
            process.send_signal(signal.SIGTERM)
            try:
                process.wait(timeout=STOP_GRACE_S)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait(timeout=STOP_GRACE_S)


def _wait_for(what: str, ready: Callable[[], bool], daemons: list[subprocess.Popen[bytes]], folder: Path) -> None:
    deadline = time.monotonic() + START_TIMEOUT_S
    while not ready():
        ended = [d.args[0] for d in daemons if d.poll() is not None]
        if ended or time.monotonic() > deadline:
            why = f"ended: {', '.join(map(str, ended))}" if ended else "timed out"
            raise RuntimeError(f"{what}: not ready ({why}); see the logs in {folder}")
        time.sleep(0.2)


@contextmanager
def running_cluster(folder: Path) -> Iterator[Cluster]:
    """munged, slurmctld and slurmd started in `folder` (made here), stopped by their PIDs on exit."""
    folder.mkdir(parents=True, exist_ok=True)
    for sub in ("state", "spool"):
        (folder / sub).mkdir(exist_ok=True)
    key = folder / "munge.key"
    key.write_bytes(os.urandom(1024))
    key.chmod(0o600)
    node, cpus, memory_mb = socket.gethostname().split(".")[0], os.cpu_count() or 1, _memory_mb()
    conf = folder / "slurm.conf"
    conf.write_text(_configuration(folder, node, cpus, memory_mb))
    env = {**os.environ, "SLURM_CONF": str(conf)}
    cluster = Cluster(folder, node, cpus, memory_mb, env)
    with ExitStack() as stack:
        munged = stack.enter_context(_daemon(
            [_find("munged") or "munged", "-F", "-f", f"--key-file={key}", f"--socket={folder / 'munge.sock'}",
             f"--pid-file={folder / 'munged.pid'}", f"--seed-file={folder / 'munged.seed'}",
             f"--log-file={folder / 'munged.log'}"], folder / "munged.out", env))
        _wait_for("munged", (folder / "munge.sock").exists, [munged], folder)
        ctld = stack.enter_context(_daemon([_find("slurmctld") or "slurmctld", "-D", "-i", "-f", str(conf)],
                                           folder / "slurmctld.log", env))
        _wait_for("slurmctld", lambda: cluster.command("scontrol", "ping", check=False).returncode == 0,
                  [munged, ctld], folder)
        slurmd = stack.enter_context(_daemon([_find("slurmd") or "slurmd", "-D", "-f", str(conf), "-N", node],
                                             folder / "slurmd.log", env))
        _wait_for("slurmd", lambda: "idle" in cluster.command("sinfo", "-h", "-o", "%T", check=False).stdout,
                  [munged, ctld, slurmd], folder)
        yield cluster
