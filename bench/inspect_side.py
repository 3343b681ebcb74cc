"""The workload of bench/cpu_per_call.py through Inspect (inspect-ai), for the side-by-side figure.

Run by `cpu_per_call --inspect-python PATH` with the Python of a separate venv that has
`inspect-ai openai` (Inspect is not a dependency of the runner): one Inspect task whose samples are
banking_l1's test tasks, each three model calls (the mock's `tool_loop` asks for two tool calls,
then `finish`), every tool answered "ok"; the OpenAI provider against the same loopback mock,
chat completions, `max_connections` = the concurrency, twice as many samples in flight, no display, logs in a temp
folder. N then 2N samples in one process, as the shiftbench child does; prints one JSON line.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import sys
import tempfile
import time
from collections.abc import Sequence
from typing import Any

TURNS = 3


def _cpu_s() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def _run(spec: dict[str, Any], base_url: str, concurrency: int, samples: int, log_dir: str) -> dict[str, Any]:
    from inspect_ai import Task
    from inspect_ai import eval as inspect_eval
    from inspect_ai.dataset import Sample
    from inspect_ai.model import ChatMessageSystem, ChatMessageTool, ChatMessageUser, get_model
    from inspect_ai.solver import Generate, TaskState, solver
    from inspect_ai.tool import ToolInfo, ToolParams

    tools = [ToolInfo(name=t["function"]["name"], description=t["function"].get("description", ""),
                      parameters=ToolParams.model_validate(t["function"]["parameters"])) for t in spec["tools"]]

    @solver
    def three_calls() -> Any:
        async def solve(state: TaskState, generate: Generate) -> TaskState:
            model = get_model()
            for _ in range(TURNS):
                output = await model.generate(state.messages, tools=tools)
                state.messages.append(output.message)
                for call in output.message.tool_calls or []:
                    state.messages.append(ChatMessageTool(content="ok", tool_call_id=call.id, function=call.function))
            state.output = output
            return state
        return solve

    dataset = [Sample(id=i, input=[ChatMessageSystem(content=spec["system"]), ChatMessageUser(content=text)])
               for i, text in enumerate(spec["instructions"][:samples])]
    task = Task(dataset=dataset, solver=three_calls())
    started_cpu, started = _cpu_s(), time.perf_counter()
    # Chat completions (Inspect's OpenAI provider would use the Responses API, which the mock does not speak).
    logs = inspect_eval(task, model="openai/mock", model_base_url=f"{base_url}/v1", model_args={"responses_api": False},
                        display="none",
                        log_dir=log_dir, max_connections=concurrency, max_samples=2 * concurrency, score=False)
    wall, cpu = time.perf_counter() - started, _cpu_s() - started_cpu
    if logs[0].status != "success":
        raise SystemExit(f"inspect run failed: {str(logs[0].error)[-1500:]}")
    return {"calls": samples * TURNS, "episodes": samples, "cpu_s": cpu, "wall_s": wall}


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="inspect_side.py")
    parser.add_argument("--spec", required=True, help="JSON: system, tools, instructions")
    parser.add_argument("--base-url", required=True)
    parser.add_argument("--concurrency", type=int, default=32)
    parser.add_argument("--size", type=int, required=True, help="samples of the first run (the second has 2x)")
    args = parser.parse_args(argv)
    os.environ.setdefault("OPENAI_API_KEY", "none")
    startup = _cpu_s()
    with open(args.spec, encoding="utf-8") as file:
        spec = json.load(file)
    with tempfile.TemporaryDirectory(prefix="inspect-side-") as log_dir:
        runs = [_run(spec, args.base_url, args.concurrency, n, log_dir) for n in (args.size, 2 * args.size)]
    print(json.dumps({"startup_cpu_s": startup, "runs": runs, "process_cpu_s": _cpu_s()}))
    sys.stdout.flush()


if __name__ == "__main__":
    main()
