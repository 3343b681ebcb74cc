"""Run shiftbench's performance benchmarks, print a table per benchmark and record them as JSON.

    python -m bench.run_benchmarks                       # full: ~4 min on 2 cores
    python -m bench.run_benchmarks --quick               # bounded: < 60 s on 2 cores
    python -m bench.run_benchmarks --out bench/results/<name>.json
    python -m bench.run_benchmarks --only makespan,overhead --suite .shiftbench/suites/seed-0

1. offline    whole sweeps on the scripted model: episodes/s, and the journal's share
2. makespan   a learning sweep against the loopback mock at 50-100 ms a reply: concurrency 1 / 8 / 64
              vs the ideal, serving priority on and off
3. overhead   microseconds the client stack adds to a model call
4. journal    journal write throughput: group commit vs one transaction per episode
5. reference  the reference runner's scheduling policy vs shiftbench's, same engine and workload, block 12
6. worlds     microseconds a fresh world plus its grade cost per episode, per domain

The JSON carries the machine (cores, CPU, Python, platform, library versions) and the git commit,
because fast is a claim only with its machine and its code. Loopback (127.0.0.1) only.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import Any

import anyio
import orjson

from bench.journal_write import run_journal_write
from bench.machine import git_commit, load_average, machine_info
from bench.makespan import run_makespan
from bench.offline import run_offline
from bench.overhead import run_overhead
from bench.reference import run_reference
from bench.section import Section, render
from bench.world_cost import run_world_cost
from runner.journal import round_trip_us
from simulators.suite import build_suite

__all__ = ["BENCHMARKS", "main", "run_all"]

ROOT = Path(__file__).resolve().parent.parent

Benchmark = Callable[[Path, str], Awaitable[Section]]


async def _journal(suite: Path, mode: str) -> Section:
    return await run_journal_write(mode)


BENCHMARKS: dict[str, Benchmark] = {
    "offline": run_offline,
    "makespan": run_makespan,
    "overhead": run_overhead,
    "journal": _journal,
    "reference": run_reference,
    "worlds": run_world_cost,
}


async def run_all(mode: str, names: Sequence[str], suite: Path | None,
                  say: Callable[[str], None] = print) -> dict[str, Any]:
    """Run the named benchmarks in order; the built-in suite (seed 0) is built first unless given."""
    started, load_before = time.perf_counter(), load_average()
    sections: list[Section] = []
    with tempfile.TemporaryDirectory(prefix="shiftbench-bench-") as tmp:
        if suite is None:
            suite = Path(tmp) / "suite"
            say("Building the built-in suite (seed 0) ...")
            build_suite(suite, seed=0)
        for name in names:
            before = {"load_average": load_average(), "aiosqlite_round_trip_us": await round_trip_us()}
            section = await BENCHMARKS[name](suite, mode)
            section.conditions = {"before": before, "after": {"load_average": load_average(),
                                                              "aiosqlite_round_trip_us": await round_trip_us()}}
            sections.append(section)
            say(render(section) + "\n" + _conditions(section) + "\n")
    return {
        "mode": mode,
        "recorded_at": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        "total_s": round(time.perf_counter() - started, 1),
        "machine": machine_info(),
        "load_average": {"before": load_before, "after": load_average()},
        "git": git_commit(ROOT),
        "event_loop": "uvloop" if _has_uvloop() else "asyncio",
        "benchmarks": {name: section.as_json() for name, section in zip(names, sections, strict=True)},
    }


def _conditions(section: Section) -> str:
    hops = [section.conditions[k]["aiosqlite_round_trip_us"] for k in ("before", "after")]
    return f"  (aiosqlite round trip before / after: {hops[0]:.0f} / {hops[1]:.0f} us)"


def _has_uvloop() -> bool:
    try:
        import uvloop  # noqa: F401
    except ImportError:
        return False
    return True


def _names(text: str) -> list[str]:
    names = [n.strip() for n in text.split(",") if n.strip()]
    unknown = [n for n in names if n not in BENCHMARKS]
    if unknown or not names:
        raise argparse.ArgumentTypeError(f"unknown benchmark {unknown}; known: {', '.join(BENCHMARKS)}")
    return names


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m bench.run_benchmarks", description=__doc__.split("\n")[0])
    size = parser.add_mutually_exclusive_group()
    size.add_argument("--quick", action="store_true", help="smaller runs: < 60 s in all on 2 cores")
    size.add_argument("--smoke", action="store_true", help="tiny runs that only prove the scripts work")
    parser.add_argument("--out", type=Path, help="write the results here as JSON (e.g. bench/results/<name>.json)")
    parser.add_argument("--only", type=_names, default=list(BENCHMARKS),
                        help=f"comma-separated subset of {','.join(BENCHMARKS)}")
    parser.add_argument("--suite", type=Path, help="an already built suite directory (default: build seed 0)")
    return parser


def _run(mode: str, names: list[str], suite: Path | None) -> dict[str, Any]:
    """On uvloop, as the CLI runs sweeps, where it is installed."""
    options = {"use_uvloop": True} if _has_uvloop() else {}
    result: dict[str, Any] = anyio.run(run_all, mode, names, suite, backend_options=options)
    return result


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    mode = "quick" if args.quick else "smoke" if args.smoke else "full"
    suite = args.suite.resolve() if args.suite else None
    result = _run(mode, args.only, suite)
    machine = result["machine"]
    print(f"{mode} run: {result['total_s']} s on {machine['cores_usable']} cores ({machine['cpu']}), "
          f"Python {machine['python']}, {result['event_loop']}, commit {result['git']['commit'][:10]}"
          + (" (dirty tree)" if result["git"]["dirty"] else ""))
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_bytes(orjson.dumps(result, option=orjson.OPT_INDENT_2) + b"\n")
        print(f"Wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
