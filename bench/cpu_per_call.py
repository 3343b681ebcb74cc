"""CPU per model call: process CPU the runner spends per HTTP call, and its wall time against the ideal.

The workload (issue 14, item 5): `blind` on banking_l1's 178 test tasks against the loopback mock
(`tool_loop`: 3 turns an episode, each reply `latency` late), C calls in flight, through the real
OpenAI-compatible client and the whole client stack and journal, as a sweep runs them.

    python -m bench.cpu_per_call                     # 3 rounds, C=32, 100 ms replies
    python -m bench.cpu_per_call --rounds 1 --layers client

Each measurement is a fresh child process, so its process CPU (user + system, every thread: the
journal's writer thread counts) is the runner's alone; the mock runs in a process of its own and its
CPU is not counted. Every child runs N and then 2N episodes (or calls) and reports the CPU of each;
the marginal CPU per call is (cpu(2N) - cpu(N)) / N calls, which removes start-up (imports, the
dataset, the journal's creation, the first connections). `total_ms_per_call` is the whole process's
CPU over the 2N run's calls (start-up included) for comparison with figures measured that way.

Layers: `sweep` (the engine over a stream of test episodes: methods, journal, stack, provider client)
and `client` (the provider client alone, C callers each sending a banking_l1 first-turn request).
Ideal wall = calls x latency / C (every call is in flight for exactly the mock's delay).

`--inspect-python PATH` adds the same workload through Inspect (bench/inspect_side.py, run by the
Python of a separate venv with `inspect-ai openai`), against the same mock, in the same rounds.
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import anyio

from bench.machine import load_average
from bench.mock_server import mock_process
from bench.rounds import medians_by

__all__ = ["main"]

SCENARIO = "banking_l1"
TURNS = 3
PRICE = {"input": 1.0, "cached_input": 0.25, "cache_write": 1.25, "output": 4.0}
_ROOT = Path(__file__).resolve().parent.parent


def _cpu_s() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def _config(suite: Path, base_url: str, concurrency: int) -> Any:
    from runner.config.settings import SweepConfig

    endpoint = {"kind": "openai-compatible", "model": "mock", "base_url": f"{base_url}/v1",
                "max_concurrency": concurrency, "stream": True}
    return SweepConfig(models=("mock",), methods=("blind",), scenarios=(SCENARIO,), dataset=str(suite),
                       concurrency=concurrency, model_concurrency=concurrency,
                       endpoints={"mock": endpoint}, prices={"mock": PRICE}).validate("bench")


async def _sweep(suite: Path, base_url: str, concurrency: int, episodes: int, journal: Path) -> dict[str, Any]:
    from bench.harness import run_streams
    from runner.config.plan import Stream
    from simulators.dataset import load_dataset

    dataset = load_dataset(suite, only=(SCENARIO,))
    scenario = dataset.scenarios[SCENARIO]
    tasks = scenario.test[:episodes]
    if len(tasks) < episodes:
        raise SystemExit(f"{SCENARIO} has only {len(scenario.test)} test tasks; ask for fewer episodes")
    config = _config(suite, base_url, concurrency)
    stream = Stream("mock", "blind", scenario, (), tasks)
    started_cpu, started = _cpu_s(), time.perf_counter()
    run = await run_streams(config, dataset, [stream], journal)
    return {"calls": run.journaled_calls, "episodes": run.episodes, "cpu_s": _cpu_s() - started_cpu,
            "wall_s": time.perf_counter() - started, "engine_wall_s": run.wall_s}


async def _client(suite: Path, base_url: str, concurrency: int, calls: int) -> dict[str, Any]:
    from runner.models.registry import build_models, close_models
    from simulators.dataset import load_dataset
    from simulators.model_api import ModelRequest
    from simulators.protocol import Message

    scenario = load_dataset(suite, only=(SCENARIO,)).scenarios[SCENARIO]
    requests = [ModelRequest(system=scenario.environment.system_prompt, messages=(Message("user", t.instruction),),
                             tools=scenario.environment.tools, domain=t.domain) for t in scenario.test]
    models = build_models(_config(suite, base_url, concurrency))
    client = models["mock"].client
    left = iter(range(calls))

    async def caller() -> None:
        for index in left:
            await client.respond(requests[index % len(requests)])

    started_cpu, started = _cpu_s(), time.perf_counter()
    try:
        async with anyio.create_task_group() as group:
            for _ in range(concurrency):
                group.start_soon(caller)
    finally:
        await close_models(models)
    return {"calls": calls, "cpu_s": _cpu_s() - started_cpu, "wall_s": time.perf_counter() - started}


async def _child(layer: str, suite: Path, base_url: str, concurrency: int, size: int) -> dict[str, Any]:
    """N then 2N in one process: the difference is the marginal cost, start-up is in the first."""
    startup = _cpu_s()
    runs = []
    with tempfile.TemporaryDirectory(prefix="shiftbench-cpu-") as tmp:
        for index, n in enumerate((size, 2 * size)):
            if layer == "sweep":
                runs.append(await _sweep(suite, base_url, concurrency, n, Path(tmp) / f"j{index}.sqlite"))
            else:
                runs.append(await _client(suite, base_url, concurrency, n))
    return {"startup_cpu_s": startup, "runs": runs, "process_cpu_s": _cpu_s()}


def _spawn(args: list[str], command: Sequence[str] = (sys.executable, "-m", "bench.cpu_per_call")) -> dict[str, Any]:
    done = subprocess.run([*command, *args], cwd=_ROOT, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"child failed: {done.stderr[-2000:]}")
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def _summary(layer: str, child: dict[str, Any], concurrency: int, latency: float) -> dict[str, Any]:
    small, big = child["runs"]
    marginal = (big["cpu_s"] - small["cpu_s"]) / max(1, big["calls"] - small["calls"])
    ideal = big["calls"] * latency / concurrency
    wall = big.get("engine_wall_s", big["wall_s"])
    return {"layer": layer, "calls": big["calls"], "marginal_ms_per_call": round(1000 * marginal, 3),
            "run_ms_per_call": round(1000 * big["cpu_s"] / big["calls"], 3),
            "total_ms_per_call": round(1000 * (child["process_cpu_s"] - small["cpu_s"]) / big["calls"], 3),
            "wall_s": round(wall, 3), "ideal_s": round(ideal, 3), "wall_over_ideal": round(wall / ideal, 3)}


def _inspect_spec(suite: Path, path: Path) -> None:
    """What the Inspect side needs of the workload: banking_l1's system prompt, tools and test tasks."""
    from simulators.dataset import load_dataset

    scenario = load_dataset(suite, only=(SCENARIO,)).scenarios[SCENARIO]
    path.write_text(json.dumps({"system": scenario.environment.system_prompt, "tools": list(scenario.environment.tools),
                                "instructions": [t.instruction for t in scenario.test]}), encoding="utf-8")


async def _parent(args: argparse.Namespace) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="shiftbench-cpu-suite-") as tmp:
        suite = args.suite
        if suite is None:
            from simulators.suite import build_suite

            suite = Path(tmp) / "suite"
            build_suite(suite, seed=0)
        layers = list(args.layers)
        if args.inspect_python:
            _inspect_spec(suite, Path(tmp) / "inspect.json")
            layers.append("inspect")
        async with mock_process(args.latency, TURNS) as base_url:
            for round_ in range(args.rounds):
                for layer in layers:
                    size = args.episodes * TURNS // 2 if layer == "client" else args.episodes // 2
                    load = load_average()
                    common = ["--base-url", base_url, "--concurrency", str(args.concurrency), "--size", str(size)]
                    if layer == "inspect":
                        command = (args.inspect_python, str(_ROOT / "bench" / "inspect_side.py"))
                        child = await anyio.to_thread.run_sync(
                            _spawn, ["--spec", str(Path(tmp) / "inspect.json"), *common], command)
                    else:
                        child = await anyio.to_thread.run_sync(_spawn, ["--child", layer, "--suite", str(suite),
                                                                        *common])
                    row = {"round": round_, **_summary(layer, child, args.concurrency, args.latency),
                           "load_1m": load[0] if load else None}
                    rows.append(row)
                    print(json.dumps(row), flush=True)
    return rows


def _medians(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return medians_by(rows, "layer", ("marginal_ms_per_call", "run_ms_per_call", "total_ms_per_call", "wall_s",
                                      "ideal_s", "wall_over_ideal"))


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.cpu_per_call")
    parser.add_argument("--episodes", type=int, default=178, help="episodes of the 2N run (N is half)")
    parser.add_argument("--concurrency", type=int, default=32)
    parser.add_argument("--latency", type=float, default=0.1, help="the mock's reply delay, seconds")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--layers", nargs="+", default=["sweep", "client"], choices=["sweep", "client"])
    parser.add_argument("--suite", type=Path, help="a built suite (default: build seed 0 into a temp folder)")
    parser.add_argument("--inspect-python", help="the python of a venv with inspect-ai and openai: adds Inspect")
    parser.add_argument("--child", choices=["sweep", "client"], help=argparse.SUPPRESS)
    parser.add_argument("--base-url", help=argparse.SUPPRESS)
    parser.add_argument("--size", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    options = {"use_uvloop": True}
    if args.child:
        result = anyio.run(_child, args.child, args.suite, args.base_url, args.concurrency, args.size,
                           backend_options=options)
        print(json.dumps(result))
        return
    rows = anyio.run(_parent, args, backend_options=options)
    print(json.dumps({"medians": _medians(rows)}))


if __name__ == "__main__":
    main()
