"""What a command costs before it does anything: process CPU of `--help`, `runs`, `show` and `report`,
and what `import runner.cli` imports (`python -X importtime`).

    python -m bench.cli_start                       # this checkout, 5 rounds
    python -m bench.cli_start --source /tmp/old     # another checkout's source (e.g. `git archive main`)

Each command runs in a fresh interpreter (`python -m runner.cli ...`, as the console script does) against
a journal of one small offline run made first in a scratch folder; its CPU (user + system, from the
children's rusage) is the median of the rounds. The machine's load average is printed beside it: on the
shared 2-core machine a figure means little without it.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from bench.machine import load_average


def _env(source: Path | None) -> dict[str, str]:
    env = dict(os.environ)
    if source is not None:
        env["PYTHONPATH"] = str(source)
    return env


def _cpu(argv: list[str], cwd: Path, env: dict[str, str]) -> float:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run([sys.executable, "-m", "runner.cli", *argv], cwd=cwd, env=env, check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def import_time_ms(cwd: Path, env: dict[str, str]) -> tuple[float, int]:
    """(cumulative ms of `import runner.cli`, modules it imported) as `-X importtime` reports them."""
    done = subprocess.run([sys.executable, "-X", "importtime", "-c", "import runner.cli"], cwd=cwd, env=env,
                          check=True, capture_output=True, text=True)
    rows = [line.split("|") for line in done.stderr.splitlines() if line.startswith("import time:")][1:]
    total = next(int(row[1]) for row in rows if row[2].strip() == "runner.cli")
    return total / 1000, len(rows)


def measure(rounds: int, source: Path | None) -> dict[str, object]:
    env = _env(source)
    with tempfile.TemporaryDirectory(prefix="cli-start-") as scratch:
        cwd = Path(scratch)
        subprocess.run([sys.executable, "-m", "runner.cli", "run", "--methods", "blind", "--scenarios", "retail_l1",
                        "--pilot", "2", "--display", "none"], cwd=cwd, env=env, check=True, capture_output=True)
        listed = subprocess.run([sys.executable, "-m", "runner.cli", "runs", "--json"], cwd=cwd, env=env,
                                check=True, capture_output=True, text=True).stdout
        run_id = json.loads(listed)[0]["run_id"]
        commands = {"--help": ["--help"], "runs": ["runs"], "show": ["show", run_id, "--limit", "3"],
                    "report": ["report", run_id]}
        cpu = {name: round(statistics.median(_cpu(argv, cwd, env) for _ in range(rounds)), 3)
               for name, argv in commands.items()}
        import_ms, modules = import_time_ms(cwd, env)
    return {"cpu_s_median": cpu, "rounds": rounds, "import_runner_cli_ms": round(import_ms, 1),
            "modules_imported": modules, "load_average": load_average(), "source": str(source or "this checkout")}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--source", type=Path, help="another checkout's source folder, put first on PYTHONPATH")
    args = parser.parse_args(argv)
    print(json.dumps(measure(args.rounds, args.source), indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
