"""What one batch round costs the runner, against the same requests sent live: banking_l1's test tasks'
first-turn requests through `OpenAIBatches` / `AnthropicBatches` (build the item bodies, upload and
create, poll until ended, download and parse every result) and through the live clients (streamed, C
calls in flight), against the mock in a process of its own (its CPU is not counted).

    python -m bench.batch_api                          # 3 rounds, 1,000 items, both dialects
    python -m bench.batch_api --items 3210 --rounds 1  # one round the size of the built-in suite's test set

Reported per dialect and round: process CPU per item for the batch path (bodies + submit, and results)
and per live call; wall time of submit and of results; the polls a batch with no latency needed. Every
batched result is checked against the live answer's turn (the same tool call and text).
"""

from __future__ import annotations

import argparse
import json
import resource
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import anyio

from bench.machine import load_average, machine_info
from bench.mock_batch_state import BatchSettings
from bench.mock_server import mock_process
from bench.rounds import medians_by

__all__ = ["main"]

SCENARIO = "banking_l1"


def _cpu_s() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def _requests(suite: Path, count: int) -> list[Any]:
    from simulators.dataset import load_dataset
    from simulators.model_api import ModelRequest
    from simulators.protocol import Message

    scenario = load_dataset(suite, only=(SCENARIO,)).scenarios[SCENARIO]
    tasks = scenario.test
    return [ModelRequest(system=scenario.environment.system_prompt,
                         messages=(Message("user", f"{tasks[n % len(tasks)].instruction} (#{n})"),),
                         tools=scenario.environment.tools, max_output_tokens=1024) for n in range(count)]


async def _round(dialect: str, base_url: str, requests: list[Any], concurrency: int) -> dict[str, Any]:
    from runner.providers import AnthropicClient, OpenAICompatClient, make_http_client
    from runner.providers.batch_api import BatchItem
    from runner.providers.batch_backends import batch_backend

    async with make_http_client() as http:
        client: Any = (AnthropicClient("mock", base_url=base_url, api_key="k", http=http) if dialect == "anthropic"
                       else OpenAICompatClient("mock", base_url=base_url + "/v1", api_key="k", http=http))
        batches = batch_backend(client)
        assert batches is not None
        cpu, wall = _cpu_s(), time.perf_counter()
        items = [BatchItem(f"item-{n}", batches.body(r)) for n, r in enumerate(requests)]
        batch_id = await batches.submit(items, label=f"bench-{dialect}")
        submit_cpu, submit_wall = _cpu_s() - cpu, time.perf_counter() - wall
        polls = 1
        while not (await batches.status(batch_id)).ended:
            polls += 1
        cpu, wall = _cpu_s(), time.perf_counter()
        found = {r.custom_id: r async for r in batches.results(batch_id)}
        results_cpu, results_wall = _cpu_s() - cpu, time.perf_counter() - wall
        live = await _live(client, requests, concurrency)
    turns = [found[f"item-{n}"].response for n in range(len(requests))]
    same = sum(t is not None and t.turn.tool_calls[0].name == answer.turn.tool_calls[0].name
               for t, answer in zip(turns, live[0], strict=True))
    n = len(requests)
    return {"dialect": dialect, "items": n, "polls": polls, "same_turn_as_live": same,
            "submit_cpu_ms_per_item": round(1000 * submit_cpu / n, 4),
            "results_cpu_ms_per_item": round(1000 * results_cpu / n, 4),
            "batch_cpu_ms_per_item": round(1000 * (submit_cpu + results_cpu) / n, 4),
            "live_cpu_ms_per_call": round(1000 * live[1] / n, 4),
            "submit_wall_s": round(submit_wall, 3), "results_wall_s": round(results_wall, 3),
            "live_wall_s": round(live[2], 3)}


async def _live(client: Any, requests: list[Any], concurrency: int) -> tuple[list[Any], float, float]:
    answers: list[Any] = [None] * len(requests)
    left = iter(range(len(requests)))

    async def caller() -> None:
        for index in left:
            answers[index] = await client.respond(requests[index])

    cpu, wall = _cpu_s(), time.perf_counter()
    async with anyio.create_task_group() as group:
        for _ in range(concurrency):
            group.start_soon(caller)
    return answers, _cpu_s() - cpu, time.perf_counter() - wall


async def _main(args: argparse.Namespace) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="shiftbench-batch-api-") as tmp:
        suite = args.suite
        if suite is None:
            from simulators.suite import build_suite

            suite = Path(tmp) / "suite"
            build_suite(suite, seed=0)
        requests = _requests(suite, args.items)
        async with mock_process(0.0, 3, batch=BatchSettings(latency_s=0.0)) as base_url:
            for round_ in range(args.rounds):
                for dialect in args.dialects:
                    load = load_average()
                    row = {"round": round_, **await _round(dialect, base_url, requests, args.concurrency),
                           "load_1m": load[0] if load else None}
                    rows.append(row)
                    print(json.dumps(row), flush=True)
    return rows


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.batch_api")
    parser.add_argument("--items", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--concurrency", type=int, default=32, help="live calls in flight")
    parser.add_argument("--dialects", nargs="+", default=["openai", "anthropic"], choices=["openai", "anthropic"])
    parser.add_argument("--suite", type=Path, help="a built suite (default: build seed 0 into a temp folder)")
    args = parser.parse_args(argv)
    rows = anyio.run(_main, args)
    medians = medians_by(rows, "dialect", ("submit_cpu_ms_per_item", "results_cpu_ms_per_item",
                                           "batch_cpu_ms_per_item", "live_cpu_ms_per_call", "submit_wall_s",
                                           "results_wall_s", "live_wall_s"))
    print(json.dumps({"medians": medians, "machine": machine_info()}, indent=1))


if __name__ == "__main__":
    main()
