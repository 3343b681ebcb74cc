"""Memory over a long sweep (issue 38, item 4): the RSS of `shiftbench run` (the quickstart: built-in
suite, offline scripted model, blind and oracle) when 10%, 50% and 90% of its units are journaled.

The run is a real subprocess of the CLI in a scratch folder; the built-in suite is built there first
by a warm-up run of one scenario, not measured. Progress is read from the run's own new journal by a
read-only connection (episodes over units), every 50 ms, and the run's VmRSS is read from /proc at the
first poll past each mark. Goal: RSS at 90% at most 1.2x the RSS at 10%.

    .venv/bin/python -m bench.memory_flat [--repeats N]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from runner.journal.journaled_share import journaled_share

__all__ = ["sample_run"]

MARKS = (0.1, 0.5, 0.9)
SHIFTBENCH = [sys.executable, "-m", "runner.cli"]


def _rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def sample_run(folder: Path, args: list[str], name: str) -> dict[str, float]:
    """RSS (MB) of one run at each mark of its journaled units and of its wall time, its peak, its wall."""
    journal = folder / f"{name}.sqlite"
    started = time.perf_counter()
    process = subprocess.Popen([*SHIFTBENCH, "run", "--display", "none", "--journal", str(journal), *args],
                               cwd=folder, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    samples: list[tuple[float, float, float]] = []  # (seconds, progress, RSS MB) once the units exist
    while process.poll() is None:
        done = journaled_share(journal)
        try:
            rss = _rss_mb(process.pid)
        except OSError:
            break
        if done is not None:
            samples.append((time.perf_counter(), done, rss))
        time.sleep(0.05)
    _, errors = process.communicate()
    if process.returncode != 0 or not samples:
        raise SystemExit(f"shiftbench run failed ({process.returncode}): {errors.decode()[-400:]}")
    return {"wall_s": round(time.perf_counter() - started, 1), **_marks(samples),
            "peak_mb": round(max(rss for _, _, rss in samples), 1)}


def _marks(samples: list[tuple[float, float, float]]) -> dict[str, float]:
    """By units: the first sample past each share journaled. By time: the first sample past each share of
    the span from the units' creation to the last sample; before the fix, finished episodes waited
    unjournaled, so the first 10% of units were journaled only once nearly the whole sweep was in memory."""
    first, last = samples[0][0], samples[-1][0]
    found: dict[str, float] = {}
    for mark in MARKS:
        by_units = next((rss for _, done, rss in samples if done >= mark), samples[-1][2])
        by_time = next(rss for t, _, rss in samples if t - first >= mark * (last - first))
        found[f"units_{int(mark * 100)}_mb"] = round(by_units, 1)
        found[f"time_{int(mark * 100)}_mb"] = round(by_time, 1)
    found["units_90_over_10"] = round(found["units_90_mb"] / found["units_10_mb"], 2)
    found["time_90_over_10"] = round(found["time_90_mb"] / found["time_10_mb"], 2)
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    options = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="memory-flat-") as scratch:
        folder = Path(scratch)
        sample_run(folder, ["--scenarios", "retail_l1"], "warm-up")  # builds the suite
        rows = [sample_run(folder, [], f"run-{i}") for i in range(options.repeats)]
    load = os.getloadavg()[0]
    print(json.dumps({"nproc": os.cpu_count(), "load_1m": round(load, 2), "runs": rows}, indent=1))


if __name__ == "__main__":
    main()
