"""Proof on a real cluster: the SLURM recipes of docs/shards/ run verbatim on a single-node SLURM cluster.

    python -m bench.slurm_cluster [--scratch DIR] [--pilot 30] [--scenarios retail_l1,banking_l1,pitch_l1]
                                  [--full] [--victim 1]

Not part of CI (tests/bench/test_slurm_cluster.py runs it small where slurm-wlm and munge are installed,
and skips with the install line where they are not). Installs nothing: it finds Debian's slurm-wlm and
munge and starts munged, slurmctld and slurmd on 127.0.0.1 as processes it owns (`bench.slurm_daemons`),
stopped by their PIDs at the end. Then, as a cluster user would, in a work folder (the "shared
filesystem"), with the project's environment on PATH (activated):

1. `sbatch --export=ALL,SWEEP_FILE=sweep.toml docs/shards/slurm-shards.sbatch` (the array) and
   `sbatch --dependency=afterany:$ARRAY docs/shards/slurm-merge.sbatch` (the merge), the sweep file
   being docs/shards/sweep.toml cut to `--scenarios` and `--pilot` (`--full`: as it is);
2. `scancel` of one task mid-work: the `afterany` merge runs once the array has ended and refuses;
3. `scontrol requeue` of that task: it continues its shard; the merge submitted again succeeds, with
   its report and `verify` in its log;
4. `sbatch --array=I` of the finished sweep, with and without `shards` in the sweep file: refused, every
   journal byte-for-byte as it was;
5. the same sweep file as one process (`shiftbench run --config`), compared with the merge: episodes
   (every exported field but run id and wall clock), `scores_seal`, `verify`.
It prints each step with its time and the load average; the output goes in bench/README.md.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
import orjson

from bench.slurm_daemons import Cluster, not_ready, running_cluster
from runner.journal import read_only

__all__ = ["main"]

ROOT = Path(__file__).resolve().parent.parent
RECIPES = ROOT / "docs" / "shards"
SHARDS = 4
WAIT_S = 3600.0
POLL_S = 0.05
ENDED = ("COMPLETED", "FAILED", "CANCELLED", "TIMEOUT", "NODE_FAIL", "OUT_OF_MEMORY", "PREEMPTED")
WALL_CLOCK = ("run_id", "latency_s", "finished_at")


def say(text: str) -> None:
    print(text, flush=True)


def load() -> str:
    one, five, fifteen = os.getloadavg()
    return f"load {one:.2f} {five:.2f} {fifteen:.2f}"


def shiftbench_bin() -> Path:
    return Path(sys.executable).parent


def job_state(cluster: Cluster, job: str) -> tuple[str, str]:
    """(state, exit code) of one job or array task, as `scontrol show job` says."""
    text = cluster.command("scontrol", "-o", "show", "job", job).stdout
    state = re.search(r"\bJobState=(\S+)", text)
    code = re.search(r"\bExitCode=(\S+)", text)
    return (state[1] if state else "UNKNOWN", code[1] if code else "")


def wait_for(what: str, ready: Callable[[], bool], poll_s: float = 0.5, timeout: float = WAIT_S) -> float:
    started = time.monotonic()
    while not ready():
        if time.monotonic() - started > timeout:
            raise RuntimeError(f"{what}: still waiting after {timeout:.0f} s")
        time.sleep(poll_s)
    return time.monotonic() - started


def ended(cluster: Cluster, job: str) -> bool:
    return job_state(cluster, job)[0] in ENDED


def episodes(journal: Path) -> int:
    """Episodes a shard's journal holds (0 before it has any), read as `shiftbench runs` reads them."""
    if not journal.is_file() or journal.stat().st_size == 0:
        return 0

    async def count() -> int:
        async with read_only(journal) as reader:
            return sum([await reader.episode_count(run.run_id) for run in await reader.runs()])

    try:
        return anyio.run(count)
    except Exception:  # the schema not written yet, or a page mid-write: not yet
        return 0


def digests(folder: Path) -> dict[str, str]:
    return {str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*")) if p.is_file()}


def sweep_file(work: Path, scenarios: str, pilot: int, full: bool) -> Path:
    text = (RECIPES / "sweep.toml").read_text()
    if not full:
        text += f"scenarios = {orjson.dumps(scenarios.split(',')).decode()}\npilot = {pilot}\n"
    path = work / "sweep.toml"
    path.write_text(text)
    return path


class Bench:
    def __init__(self, cluster: Cluster, work: Path, victim: int) -> None:
        self.cluster, self.work, self.victim = cluster, work, victim
        self.env = {**cluster.env, "PATH": f"{shiftbench_bin()}{os.pathsep}{os.environ.get('PATH', '')}"}
        self.env.pop("SHIFTBENCH", None)

    def sbatch(self, *args: str) -> str:
        shown = " ".join(a.replace(str(RECIPES), "docs/shards") for a in args)
        done = subprocess.run(["sbatch", "--parsable", *args], capture_output=True, text=True, cwd=self.work,
                              env=self.env, timeout=120)
        if done.returncode != 0:
            raise RuntimeError(f"sbatch {shown}: {done.stderr.strip()}")
        job = done.stdout.strip().split(";")[0]
        say(f"  $ sbatch {shown}  -> job {job}")
        return job

    def shiftbench(self, *args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(["shiftbench", *args], capture_output=True, text=True, cwd=self.work, env=self.env,
                              timeout=WAIT_S)

    def why(self, task: int) -> str:
        """A task's end in one line: its log's last line, else slurmd's last error (a job that never got to
        write its log: a script slurmd could not run, a user it could not become)."""
        log = self.work / f"shiftbench-shard-{task}.log"
        if log.is_file() and log.read_text().strip():
            last = self.log_tail(log.name)
            return "it finished first; give a larger --pilot" if "Next:" in log.read_text() else f"{log.name}: {last}"
        errors = [ln for ln in (self.cluster.folder / "slurmd.log").read_text(errors="replace").splitlines()
                  if "error" in ln.lower()]
        return f"no job log; slurmd: {errors[-1].strip() if errors else 'no error logged'}"

    def log_tail(self, name: str, lines: int = 1) -> str:
        return "\n".join((self.work / name).read_text().strip().splitlines()[-lines:])

    def run(self, sweep: Path) -> dict[str, Any]:
        figures: dict[str, Any] = {}
        started = time.monotonic()
        array = self.sbatch(f"--export=ALL,SWEEP_FILE={sweep.name}", str(RECIPES / "slurm-shards.sbatch"))
        merge = self.sbatch(f"--dependency=afterany:{array}", str(RECIPES / "slurm-merge.sbatch"))
        victim_job, victim_journal = f"{array}_{self.victim}", self.work / "journals" / f"shard-{self.victim}.sqlite"
        def mid_work() -> bool:
            state = job_state(self.cluster, victim_job)[0]
            if state in ENDED:
                raise RuntimeError(f"task {victim_job} ended ({state}) before it could be cancelled mid-work: "
                                   f"{self.why(self.victim)}")
            return state == "RUNNING" and episodes(victim_journal) >= 5

        wait_for(f"task {victim_job} mid-work", mid_work, POLL_S)
        self.cluster.command("scancel", victim_job)
        wait_for(f"task {victim_job} cancelled", lambda: ended(self.cluster, victim_job))
        figures["cancelled_at"] = episodes(victim_journal)
        say(f"  $ scancel {victim_job}  (at {figures['cancelled_at']} episodes)  [{load()}]")
        wait_for(f"merge {merge}", lambda: ended(self.cluster, merge))
        figures["first_merge"] = (job_state(self.cluster, merge), self.log_tail("shiftbench-merge.log"))
        say(f"  merge {merge}: {figures['first_merge'][0][0]} exit {figures['first_merge'][0][1]}: "
            f"{figures['first_merge'][1]}")
        self.cluster.command("scontrol", "requeue", victim_job)
        say(f"  $ scontrol requeue {victim_job}")
        wait_for(f"task {victim_job} requeued", lambda: job_state(self.cluster, victim_job)[0] != "CANCELLED",
                 timeout=300)
        wait_for(f"task {victim_job} finished", lambda: ended(self.cluster, victim_job))
        continued = [line for line in (self.work / f"shiftbench-shard-{self.victim}.log").read_text().splitlines()
                     if "continues run" in line or line.startswith("array task")]
        say("  task log (appended): " + " | ".join(continued))
        merge = self.sbatch(f"--dependency=afterany:{array}", str(RECIPES / "slurm-merge.sbatch"))
        wait_for(f"merge {merge}", lambda: ended(self.cluster, merge))
        figures["merge"] = job_state(self.cluster, merge)
        figures["cluster_s"] = time.monotonic() - started
        merge_log = (self.work / "shiftbench-merge.log").read_text()
        figures["merged_line"] = next((ln for ln in merge_log.splitlines() if ln.startswith("Merged ")), "")
        figures["verify_line"] = next((ln for ln in merge_log.splitlines() if "re-grade" in ln), "")
        say(f"  merge {merge}: {figures['merge'][0]} exit {figures['merge'][1]}: {figures['merged_line']}")
        say(f"  array + requeue + merges: {figures['cluster_s']:.1f} s  [{load()}]")
        figures["reruns"] = [self.rerun_one(sweep), self.rerun_one(self.no_shards(sweep))]
        return figures

    def no_shards(self, sweep: Path) -> Path:
        path = self.work / "sweep-no-shards.toml"
        path.write_text(re.sub(r"^shards = \d+\n", "", sweep.read_text(), flags=re.M))
        return path

    def rerun_one(self, sweep: Path) -> tuple[str, str, bool]:
        """`sbatch --array=I` of the finished sweep: its state, its log's last line, journals unchanged."""
        before = digests(self.work / "journals")
        job = self.sbatch(f"--array={self.victim}", f"--export=ALL,SWEEP_FILE={sweep.name}",
                          str(RECIPES / "slurm-shards.sbatch"))
        task = f"{job}_{self.victim}"
        wait_for(f"rerun {task}", lambda: ended(self.cluster, task))
        state, code = job_state(self.cluster, task)
        line = self.log_tail(f"shiftbench-shard-{self.victim}.log")
        unchanged = digests(self.work / "journals") == before
        say(f"  rerun {task} ({sweep.name}): {state} exit {code}: {line}  [journals unchanged: {unchanged}]")
        return f"{state} {code}", line, unchanged

    def compare(self, sweep: Path) -> dict[str, Any]:
        started = time.monotonic()
        one = self.work / "one.sqlite"
        done = self.shiftbench("run", "--config", sweep.name, "--journal", str(one), "--display", "none")
        one_s = time.monotonic() - started
        if done.returncode != 0:
            raise RuntimeError(f"one-process run: {done.stderr.strip()}")
        merged = self.work / "journals" / "merged.sqlite"
        runs = {name: orjson.loads(self.shiftbench("runs", "--json", "--journal", str(path)).stdout)[0]["run_id"]
                for name, path in (("merged", merged), ("one", one))}
        exported = {}
        for name, path in (("merged", merged), ("one", one)):
            out = self.work / f"export-{name}"
            self.shiftbench("export", runs[name], "--out", str(out), "--journal", str(path))
            exported[name] = [{k: v for k, v in orjson.loads(line).items() if k not in WALL_CLOCK}
                              for line in (out / f"{runs[name]}.jsonl").read_bytes().splitlines()]
        seals = {name: orjson.loads(self.shiftbench("report", runs[name], "--json", "--journal", str(path)).stdout)
                 ["scores_seal"]["sha256"] for name, path in (("merged", merged), ("one", one))}
        verified = self.shiftbench("verify", runs["merged"], "--journal", str(merged))
        same = sum(a == b for a, b in zip(exported["merged"], exported["one"], strict=False))
        fields = sorted(exported["one"][0]) if exported["one"] else []
        say(f"  one process: {one_s:.1f} s  [{load()}]")
        say(f"  episodes: {same:,} of {len(exported['one']):,} identical (merged {len(exported['merged']):,}) in "
            f"{len(fields)} fields ({', '.join(fields)}; not {', '.join(WALL_CLOCK)})")
        say(f"  scores_seal: merged {seals['merged'][:16]}, one process {seals['one'][:16]}: "
            f"{'equal' if seals['merged'] == seals['one'] else 'DIFFERENT'}")
        say(f"  verify merged: exit {verified.returncode}: {verified.stdout.strip().splitlines()[-1:]}")
        return {"identical": same, "episodes": len(exported["one"]), "merged_episodes": len(exported["merged"]),
                "seal_equal": seals["merged"] == seals["one"], "verify": verified.returncode, "one_s": one_s}


def hold(cluster: Cluster) -> int:
    """Keep the daemons up for commands typed in other shells; Ctrl-C (or SIGTERM) stops them by PID."""
    say(f"  in another shell: export SLURM_CONF={cluster.folder / 'slurm.conf'}   then sinfo, sbatch ... as in "
        "docs/shards/README.md; Ctrl-C here stops the cluster")
    try:
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.slurm_cluster", description=__doc__.split("\n")[0])
    parser.add_argument("--scratch", type=Path, help="where the cluster and the work folder go (default: a new "
                                                     "temporary folder)")
    parser.add_argument("--scenarios", default="retail_l1,banking_l1,pitch_l1")
    parser.add_argument("--pilot", type=int, default=30)
    parser.add_argument("--full", action="store_true", help="docs/shards/sweep.toml as it is (the whole suite)")
    parser.add_argument("--victim", type=int, default=1, help="the array task cancelled and requeued")
    parser.add_argument("--hold", action="store_true", help="only start the cluster and keep it up until Ctrl-C, "
                                                            "for docs/shards/'s recipes typed by hand")
    args = parser.parse_args(argv)
    # SIGTERM (a timeout, a kill) unwinds like Ctrl-C, so the daemons are stopped by their PIDs on the way out
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    lacking = not_ready(args.scratch or Path(tempfile.gettempdir()))
    if lacking:
        print(f"bench.slurm_cluster: {lacking}", file=sys.stderr)
        return 2
    if shutil.which("shiftbench", path=str(shiftbench_bin())) is None:
        print(f"bench.slurm_cluster: no shiftbench beside {sys.executable}, so the jobs could not run it: run this "
              "with the project's environment's python (.venv/bin/python, after pip install -e .)", file=sys.stderr)
        return 2
    scratch = args.scratch or Path(tempfile.mkdtemp(prefix="shiftbench-slurm-"))
    work = scratch / "work"
    work.mkdir(parents=True, exist_ok=True)
    say(f"bench.slurm_cluster in {scratch}  [{load()}]")
    started = time.monotonic()
    with running_cluster(scratch / "cluster") as cluster:
        say(f"  cluster up in {time.monotonic() - started:.1f} s: node {cluster.node}, {cluster.cpus} CPUs, "
            f"{cluster.memory_mb:,} MB; munged, slurmctld, slurmd on 127.0.0.1")
        if args.hold:
            return hold(cluster)
        sweep = sweep_file(work, args.scenarios, args.pilot, args.full)
        bench = Bench(cluster, work, args.victim)
        figures = bench.run(sweep)
        figures.update(bench.compare(sweep))
    say(f"  daemons stopped; total {time.monotonic() - started:.1f} s  [{load()}]")
    (scratch / "figures.json").write_bytes(orjson.dumps(figures, option=orjson.OPT_INDENT_2))
    good = (figures["merge"][0] == "COMPLETED" and figures["seal_equal"] and figures["verify"] == 0
            and figures["identical"] == figures["episodes"] == figures["merged_episodes"]
            and all(state == "FAILED 2:0" and unchanged for state, _, unchanged in figures["reruns"]))
    return 0 if good else 1


if __name__ == "__main__":
    raise SystemExit(main())
