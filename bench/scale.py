"""Benchmark 6: cost as the work grows. The full offline sweep (blind, oracle, icl_full, rag, tabular on
all nine scenarios, scripted model), run by the real CLI in a process of its own, once per suite seed,
one after another into ONE journal (so the k-th run starts on a journal that already holds k-1 full
suites): wall time and peak RSS of each run, journal bytes per episode; then a run killed (SIGKILL) at
about 80% and `resume`d on that journal: the time from starting `resume` to its first new episode.

    python -m bench.scale --seeds 10 --paired --out bench/results/scale.json

Seeds are not the same work (seed 9's suite costs ~6% more than seed 0's on an empty journal), so
"N seeds against one seed's time" needs each seed's own one-seed time: with `--paired`, each seed is
also run alone into a fresh journal right after its run into the shared one (interleaved, so a load
change hits both), and the growth the shared journal causes is the sum of shared runs over the sum of
the fresh ones. Each child's peak RSS and CPU time (user + system) are the kernel's (`wait4` rusage);
episode counts and the journal's growth come from the journal's public reader.
"""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import anyio
import orjson

from bench.machine import git_commit, load_average, machine_info
from runner.journal import read_only
from simulators.suite import build_suite

__all__ = ["METHODS", "main", "run_scale"]

METHODS = "blind,oracle,icl_full,rag,tabular"
ROOT = Path(__file__).resolve().parent.parent
KILL_AT = 0.8
POLL_S = 0.02


def _cli(*args: str) -> list[str]:
    return [sys.executable, "-m", "runner.cli", *args]


def _run_args(suite: Path, journal: Path, methods: str, pilot: int) -> list[str]:
    args = ["run", "--models", "scripted", "--methods", methods, "--dataset", str(suite), "--journal", str(journal),
            "--display", "none"]
    return _cli(*args, *(["--pilot", str(pilot)] if pilot else []))


def _measured(argv: list[str]) -> tuple[float, int, float]:
    """(wall s, peak RSS bytes, CPU s) of one child process."""
    started = time.perf_counter()
    with tempfile.TemporaryFile() as errors:
        child = subprocess.Popen(argv, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=errors)
        _pid, status, usage = os.wait4(child.pid, 0)
        child.returncode = os.waitstatus_to_exitcode(status)
        wall = time.perf_counter() - started
        if child.returncode != 0:
            errors.seek(0)
            said = errors.read().decode(errors="replace")[-2000:]
            raise RuntimeError(f"{' '.join(argv[3:5])} exited {child.returncode}: {said}")
    return wall, usage.ru_maxrss * 1024, usage.ru_utime + usage.ru_stime


def _journal_bytes(journal: Path) -> int:
    return sum(p.stat().st_size for p in journal.parent.glob(journal.name + "*"))


async def _runs(journal: Path) -> list[tuple[str, int]]:
    async with read_only(journal) as reader:
        return [(run.run_id, await reader.episode_count(run.run_id)) for run in await reader.runs()]


async def _episodes(journal: Path, run_id: str) -> int:
    async with read_only(journal) as reader:
        return await reader.episode_count(run_id)


def _new_run_id(before: list[tuple[str, int]], after: list[tuple[str, int]]) -> str:
    new = {r for r, _ in after} - {r for r, _ in before}
    if len(new) != 1:
        raise RuntimeError(f"expected one new run in the journal, found {sorted(new)}")
    return new.pop()


async def _kill_at(argv: list[str], journal: Path, target: int) -> str:
    """Start a run, SIGKILL it once `target` episodes are journaled; its run id."""
    before = await _runs(journal)
    child = await anyio.open_process(argv, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    run_id = None
    try:
        while run_id is None and child.returncode is None:
            await anyio.sleep(POLL_S)
            after = await _runs(journal)
            if len(after) > len(before) and dict(after)[_new_run_id(before, after)] >= target:
                run_id = _new_run_id(before, after)
    finally:
        if child.returncode is None:
            child.send_signal(signal.SIGKILL)
        code = await child.wait()
    if run_id is None or code == 0:  # it finished before the signal: nothing left to resume
        raise RuntimeError("the run ended before it could be killed: use a larger suite (or no --pilot)")
    return run_id


async def _resume_start(journal: Path, run_id: str) -> dict[str, Any]:
    """Seconds from starting `resume` to its first new episode, and the resume's whole wall time."""
    done = await _episodes(journal, run_id)
    started = time.perf_counter()
    errors = journal.with_name("resume.stderr")
    with errors.open("wb") as sink:
        child = await anyio.open_process(_cli("resume", run_id, "--journal", str(journal), "--display", "none"),
                                         cwd=ROOT, stdout=subprocess.DEVNULL, stderr=sink)
        first = None
        async with read_only(journal) as reader:
            while child.returncode is None and first is None:
                if await reader.episode_count(run_id) > done:
                    first = time.perf_counter() - started
                await anyio.sleep(POLL_S)
        code = await child.wait()
    if code != 0 or first is None:
        said = errors.read_text(errors="replace")[-2000:]
        raise RuntimeError(f"resume exited {code} (first new episode at {first}): {said}")
    return {"episodes_before": done, "first_new_episode_s": round(first, 2),
            "resume_wall_s": round(time.perf_counter() - started, 2)}


async def _fresh(suite: Path, methods: str, pilot: int) -> dict[str, Any]:
    """The same seed alone, into a journal of its own that is deleted afterwards."""
    with tempfile.TemporaryDirectory(prefix="shiftbench-fresh-", dir=suite.parent) as tmp:
        wall, rss, cpu = await anyio.to_thread.run_sync(
            _measured, _run_args(suite, Path(tmp) / "journal.sqlite", methods, pilot))
    return {"fresh_wall_s": round(wall, 2), "fresh_cpu_s": round(cpu, 2), "fresh_peak_rss_mb": round(rss / 1e6, 1)}


async def run_scale(seeds: int, methods: str, pilot: int, paired: bool = False,
                    say: Any = print) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="shiftbench-scale-") as tmp:
        suites = [Path(tmp) / f"seed-{seed}" for seed in range(seeds)]
        for seed, suite in enumerate(suites):
            build_suite(suite, seed=seed)
        journal = Path(tmp) / "journal.sqlite"
        rows: list[dict[str, Any]] = []
        for seed, suite in enumerate(suites):
            before, size_before = await _runs(journal) if journal.exists() else [], _journal_bytes(journal)
            wall, rss, cpu = await anyio.to_thread.run_sync(_measured, _run_args(suite, journal, methods, pilot))
            after = await _runs(journal)
            run_id = _new_run_id(before, after)
            episodes = dict(after)[run_id]
            growth = _journal_bytes(journal) - size_before
            rows.append({"seed": seed, "episodes": episodes, "wall_s": round(wall, 2), "cpu_s": round(cpu, 2),
                         "episodes_per_s": round(episodes / wall, 1), "peak_rss_mb": round(rss / 1e6, 1),
                         "journal_mb_before": round(size_before / 1e6, 1),
                         "journal_mb": round(_journal_bytes(journal) / 1e6, 1),
                         "journal_bytes_per_episode": round(growth / episodes), "load": load_average(),
                         **(await _fresh(suite, methods, pilot) if paired else {})})
            say(orjson.dumps(rows[-1]).decode())
        target = int(KILL_AT * rows[0]["episodes"])
        run_id = await _kill_at(_run_args(suites[0], journal, methods, pilot), journal, target)
        resume = {"journal_mb": round(_journal_bytes(journal) / 1e6, 1), **await _resume_start(journal, run_id)}
        say(orjson.dumps(resume).decode())
    return {"recorded_at": time.strftime("%Y-%m-%dT%H:%M:%S%z"), "machine": machine_info(),
            "git": git_commit(ROOT), "methods": methods, "pilot": pilot, "runs": rows, "resume": resume,
            "cumulative": _cumulative(rows)}


def _cumulative(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The sweep over the first N seeds: its wall, CPU, episodes and peak RSS; wall against seed 0's, and
    (when paired) against the same seeds each run alone on a fresh journal."""
    out = []
    for n in range(1, len(rows) + 1):
        part = rows[:n]
        wall, cpu = sum(r["wall_s"] for r in part), sum(r["cpu_s"] for r in part)
        row = {"seeds": n, "episodes": sum(r["episodes"] for r in part), "wall_s": round(wall, 1),
               "cpu_s": round(cpu, 1), "wall_over_seed0": round(wall / rows[0]["wall_s"], 2),
               "peak_rss_mb": max(r["peak_rss_mb"] for r in part)}
        if all("fresh_wall_s" in r for r in part):
            fresh_wall, fresh_cpu = sum(r["fresh_wall_s"] for r in part), sum(r["fresh_cpu_s"] for r in part)
            # n x the mean one-seed time of these seeds: what n seeds would cost if the journal's size
            # did not matter
            row.update({"fresh_wall_s": round(fresh_wall, 1), "fresh_cpu_s": round(fresh_cpu, 1),
                        "wall_over_one_seed": round(n * wall / fresh_wall, 2),
                        "cpu_over_one_seed": round(n * cpu / fresh_cpu, 2)})
        out.append(row)
    return out


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.scale", description=__doc__.split("\n")[0])
    parser.add_argument("--seeds", type=int, default=3, help="suite seeds 0..N-1, one full sweep each")
    parser.add_argument("--methods", default=METHODS, help=f"comma-separated (default {METHODS})")
    parser.add_argument("--pilot", type=int, default=0, help="only the first N tasks of each window (smoke)")
    parser.add_argument("--paired", action="store_true",
                        help="also run each seed alone on a fresh journal, interleaved (doubles the time)")
    parser.add_argument("--out", type=Path, help="write the results here as JSON")
    args = parser.parse_args(argv)
    result: dict[str, Any] = anyio.run(run_scale, args.seeds, args.methods, args.pilot, args.paired)
    for row in result["cumulative"]:
        print(orjson.dumps(row).decode())
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_bytes(orjson.dumps(result, option=orjson.OPT_INDENT_2) + b"\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
