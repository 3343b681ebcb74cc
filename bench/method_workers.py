"""What a user's method pays for running in a worker process: start, memory, round trips, a whole sweep.

    python -m bench.method_workers [--workers 8] [--trips 200] [--sweep] [--pairs 3] [--method-workers 4,8]
                                   [--scenarios ...]

It starts `--workers` workers of the notes example (examples/notes_method) one after another from the
workers' fork server, and reports the start time per worker (build included), each worker's RSS and
PSS (/proc: PSS shares pages copied-on-write from the fork server among the processes that hold them,
so it is the figure that adds up), and the median round trip of a `context` of one task and of a
`learn` of one record. `--sweep` then times offline sweeps (`shiftbench run`, scripted model, the
built-in suite's `--scenarios`, `--methods-per-scenario` user-method streams per scenario) with workers
and with `--methods-in-process`, as `--pairs` interleaved pairs (so both sides of a pair meet the same
machine), each with the peak and mean PSS of the runner and every process under it (sampled every
0.2 s). Load averages are printed beside every figure: the machine is shared.
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
    return {"start": "fork server", "workers": workers, "load": _load(),
            "start_s_first": starts[0], "start_s_median_rest": statistics.median(starts[1:] or starts),
            "rss_mib_median": statistics.median(rss) / 1024, "pss_mib_median": statistics.median(pss) / 1024,
            "context_ms_median": statistics.median(contexts) * 1000,
            "learn_ms_median": statistics.median(learns) * 1000,
            "context_ms_p95": sorted(contexts)[int(0.95 * len(contexts))] * 1000}


def _tree(pid: int) -> list[int]:
    """`pid` and every process under it."""
    parents: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                parent = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, ValueError, IndexError):
                continue
            parents.setdefault(parent, []).append(int(entry.name))
    found, todo = [], [pid]
    while todo:
        current = todo.pop()
        found.append(current)
        todo.extend(parents.get(current, []))
    return found


def _pss_mib(pid: int) -> float:
    total = 0
    for member in _tree(pid):
        try:
            total += _kib(member, "smaps_rollup", "Pss")
        except OSError:
            continue  # it ended between the listing and the read
    return total / 1024


def _sweep(in_process: bool, suite: Path, scenarios: str, per_scenario: int, bound: int = 0) -> dict[str, object]:
    methods = ",".join(f"n{i}={NOTES}:NOTES" for i in range(per_scenario))
    with tempfile.TemporaryDirectory() as folder:
        command = [sys.executable, "-m", "runner.cli", "run", "--dataset", str(suite), "--scenarios", scenarios,
                   "--methods", methods, "--journal", f"{folder}/j.sqlite", "--display", "none",
                   *(["--methods-in-process"] if in_process else ["--method-workers", str(bound)])]
        began = time.perf_counter()
        process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=folder)
        samples, most = [], 0
        while process.poll() is None:
            samples.append(_pss_mib(process.pid))
            most = max(most, len(_tree(process.pid)))
            time.sleep(0.2)
        wall = time.perf_counter() - began
    side = "in-process" if in_process else f"workers (--method-workers {bound})"
    return {"sweep": side, "wall_s": round(wall, 1), "exit": process.returncode,
            "pss_mib_peak": round(max(samples or [0]), 1),
            "pss_mib_mean": round(statistics.mean(samples or [0]), 1), "processes_peak": most, "load_after": _load()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workers", type=int, default=8)
    parser.add_argument("--trips", type=int, default=200)
    parser.add_argument("--sweep", action="store_true", help="also time offline sweeps with and without workers")
    parser.add_argument("--pairs", type=int, default=3, help="interleaved (workers, in-process) pairs")
    parser.add_argument("--scenarios", default="banking_l1,pitch_l1,retail_l1")
    parser.add_argument("--methods-per-scenario", type=int, default=4)
    parser.add_argument("--suite", default="", help="a built dataset (default: the built-in suite, seed 0)")
    parser.add_argument("--method-workers", default="0",
                        help="comma-separated bounds: each pair runs the workers sweep at each (0: the default)")
    parser.add_argument("--inner", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.inner:
        print(orjson.dumps(anyio.run(_measure, args.workers, args.trips)).decode())
        return
    done = subprocess.run([sys.executable, "-m", "bench.method_workers", "--inner", "--workers", str(args.workers),
                           "--trips", str(args.trips)], capture_output=True, text=True, cwd=ROOT, check=True)
    print(done.stdout.strip().splitlines()[-1])
    if args.sweep:
        suite = (Path(args.suite) if args.suite else ROOT / ".shiftbench" / "suites" / "seed-0").resolve()
        sides = [(True, 0), *((False, int(bound)) for bound in args.method_workers.split(","))]
        for pair in range(args.pairs):
            for in_process, bound in sides if pair % 2 == 0 else sides[::-1]:  # no side always goes first
                figures = _sweep(in_process, suite, args.scenarios, args.methods_per_scenario, bound)
                print(orjson.dumps({"pair": pair + 1, **figures}).decode(), flush=True)


if __name__ == "__main__":
    main()
