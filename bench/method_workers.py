"""What a user's method pays for running in a worker process: start, memory, round trips, a whole sweep.

    python -m bench.method_workers [--workers 8] [--trips 200] [--sweep]

For each start method (forkserver with the worker's modules preloaded, spawn) it starts `--workers`
workers of the notes example (examples/notes_method) one after another, and reports the start time
per worker (build included), each worker's RSS and PSS (/proc: PSS shares pages copied-on-write from
the forkserver among the processes that hold them, so it is the figure that adds up), and the median
round trip of a `context` of one task and of a `learn` of one record. Each start method is measured in
a fresh interpreter (the start method is read when `runner.workers.process` is imported). `--sweep`
then times an offline sweep (`shiftbench run`, scripted model, the built-in suite's three L1 scenarios,
four user-method streams per scenario) with workers and with `--methods-in-process`. Load averages are
printed beside every figure: the machine is shared.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import anyio
import orjson

ROOT = Path(__file__).resolve().parents[1]
NOTES = ROOT / "examples" / "notes_method" / "shiftbench_notes" / "notes.py"


def _load() -> str:
    return "load {:.2f} {:.2f} {:.2f}".format(*os.getloadavg())


def _kib(pid: int, path: str, key: str) -> int:
    for line in Path(f"/proc/{pid}/{path}").read_text().splitlines():
        if line.startswith(key + ":"):
            return int(line.split()[1])
    return 0


async def _measure(workers: int, trips: int) -> dict[str, object]:
    from methods.base import PublicScenario
    from runner.workers.handle import MethodLimits, WorkerPlan, open_worker_method
    from runner.workers.process import START_METHOD
    from simulators.protocol import Evaluator, Task
    from simulators.record import EpisodeRecord

    public = PublicScenario("retail_l1", "retail", "l1", "You are a retail agent.", {"policy.md": "x" * 4000}, ())
    plan = WorkerPlan(f"{NOTES}:NOTES", {}, "notes", reads=(str(NOTES.parent),))
    task = Task("t1", "retail_l1", "retail", "l1", "serving", 1, 1, "fully_specified", "Return order 1234, please.",
                Evaluator("s", "f", (), None, {}))
    record = EpisodeRecord(task.view(), 1, (), 1.0, None, "finish")
    starts, handles = [], []
    for _ in range(workers):
        began = time.perf_counter()
        handles.append(await open_worker_method(plan, "retail_l1", "retail", public, None, MethodLimits()))
        starts.append(time.perf_counter() - began)
    pids = [h.worker.process.pid for h in handles]
    rss = [_kib(pid, "status", "VmRSS") for pid in pids]
    pss = [_kib(pid, "smaps_rollup", "Pss") for pid in pids]
    first = handles[0]
    contexts, learns = [], []
    for _ in range(trips):
        began = time.perf_counter()
        await first.contexts([task])
        contexts.append(time.perf_counter() - began)
        began = time.perf_counter()
        await first.learn([record])
        learns.append(time.perf_counter() - began)
    for handle in handles:
        await handle.close()
    return {"start_method": START_METHOD, "workers": workers, "load": _load(),
            "start_s_first": starts[0], "start_s_median_rest": statistics.median(starts[1:] or starts),
            "rss_mib_median": statistics.median(rss) / 1024, "pss_mib_median": statistics.median(pss) / 1024,
            "context_ms_median": statistics.median(contexts) * 1000,
            "learn_ms_median": statistics.median(learns) * 1000,
            "context_ms_p95": sorted(contexts)[int(0.95 * len(contexts))] * 1000}


def _sweep(in_process: bool, suite: Path) -> tuple[float, str, int]:
    methods = ",".join(f"n{i}={NOTES}:NOTES" for i in range(4))
    with tempfile.TemporaryDirectory() as folder:
        command = [sys.executable, "-m", "runner.cli", "run", "--dataset", str(suite), "--scenarios",
                   "banking_l1,pitch_l1,retail_l1", "--methods", methods, "--journal", f"{folder}/j.sqlite",
                   "--display", "none", *(["--methods-in-process"] if in_process else [])]
        began = time.perf_counter()
        done = subprocess.run(command, capture_output=True, text=True, cwd=folder, check=False)
        return time.perf_counter() - began, _load(), done.returncode


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workers", type=int, default=8)
    parser.add_argument("--trips", type=int, default=200)
    parser.add_argument("--sweep", action="store_true", help="also time an offline sweep with and without workers")
    parser.add_argument("--suite", default="", help="a built dataset (default: the built-in suite, seed 0)")
    parser.add_argument("--inner", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.inner:
        print(orjson.dumps(anyio.run(_measure, args.workers, args.trips)).decode())
        return
    for start in ("forkserver", "spawn"):
        env = {**os.environ, "SHIFTBENCH_WORKER_START": start}
        done = subprocess.run([sys.executable, "-m", "bench.method_workers", "--inner", "--workers", str(args.workers),
                               "--trips", str(args.trips)], capture_output=True, text=True, env=env, cwd=ROOT,
                              check=True)
        print(done.stdout.strip().splitlines()[-1])
    if args.sweep:
        suite = Path(args.suite) if args.suite else ROOT / ".shiftbench" / "suites" / "seed-0"
        for in_process in (False, True):
            wall, load, code = _sweep(in_process, suite.resolve())
            label = "in-process" if in_process else "workers"
            print(orjson.dumps({"sweep": label, "wall_s": round(wall, 1), "exit": code, "load_after": load}).decode())


if __name__ == "__main__":
    main()
