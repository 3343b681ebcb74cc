"""The handlers of `shiftbench data replay | check --gold | fetch` (their parser is `runner.cli.data`).

- `replay DIR --scenario S --task ID (--gold | --actions FILE|-) [--json]`: the calls on a fresh world
  for one task; each observation, the final state hash, and the grade (reward, details, judge).
- `check DIR --gold`: every task's gold through the graders, and ids that point at nothing; lists
  each failing task; exit 1 if any.
- `fetch [--to DIR] [--ref COMMIT] [--url URL]`: the official export, verified (`runner.datasets.official`).
"""

from __future__ import annotations

import sys
from pathlib import Path

import anyio
import orjson

from runner.datasets.official import PINNED_COMMIT, fetch_official
from simulators.dataset import load_dataset
from simulators.errors import ShiftbenchInputError
from simulators.integrity import Problem, dangling_ids, gold_problems
from simulators.protocol import Scenario, Task
from simulators.registry import get_domain
from simulators.replay import ReplayCall, ReplayResult, gold_calls, parse_calls, replay

__all__ = ["run_check_gold", "run_fetch", "run_replay"]


def _task(scenario: Scenario, task_id: str) -> Task:
    for task in (*scenario.serving, *scenario.test):
        if task.task_id == task_id:
            return task
    raise ShiftbenchInputError(f"--task: scenario {scenario.name} has no task '{task_id}'")


def _calls(scenario: Scenario, task: Task, gold: bool, actions: str | None) -> list[ReplayCall]:
    if gold:
        return gold_calls(scenario, task)
    if actions is None:
        raise ShiftbenchInputError("data replay: give --gold or --actions FILE (or - for stdin)")
    if actions == "-":
        return parse_calls(sys.stdin.buffer.read(), "--actions -")
    path = Path(actions)
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise ShiftbenchInputError(f"--actions {path}: cannot be read ({exc.strerror})") from exc
    return parse_calls(raw, f"--actions {path}")


def run_replay(directory: Path, scenario_name: str, task_id: str, gold: bool, actions: str | None,
               as_json: bool) -> int:
    scenario = load_dataset(directory, only=[scenario_name]).scenarios[scenario_name]
    task = _task(scenario, task_id)
    calls = _calls(scenario, task, gold, actions)
    result: ReplayResult = anyio.run(replay, scenario, task, get_domain(scenario.domain), calls)
    if as_json:
        print(orjson.dumps(result.as_json(), option=orjson.OPT_INDENT_2).decode())
        return 0
    for number, step in enumerate(result.steps, start=1):
        arguments = orjson.dumps(dict(step.arguments)).decode()
        print(f"[{number}] {step.name}({arguments})\n    -> {step.observation}")
    if not result.finished:
        print("(no accepted finish: the episode is graded as unfinished)")
    print(f"state hash {result.state_hash}")
    details = orjson.dumps(dict(result.grade.details), option=orjson.OPT_SORT_KEYS).decode()
    print(f"reward {result.grade.reward:.2f}  judge {result.grade.judge}\ndetails {details}")
    return 0


async def _problems(directory: Path) -> tuple[int, list[Problem]]:
    dataset = load_dataset(directory)
    problems: list[Problem] = []
    tasks = 0
    for scenario in dataset.scenarios.values():
        tasks += len(scenario.serving) + len(scenario.test)
        problems += dangling_ids(scenario)
        problems += await gold_problems(scenario)
    return tasks, problems


def run_check_gold(directory: Path) -> int:
    tasks, problems = anyio.run(_problems, directory)
    for problem in problems:
        print(problem.line())
    verdict = "all gold scores 1.0" if not problems else f"{len(problems)} problem(s)"
    print(f"checked {tasks} tasks: {verdict}")
    return 1 if problems else 0


def run_fetch(target: Path, commit: str | None, url: str | None) -> int:
    outcome = fetch_official(target, commit or PINNED_COMMIT, url)
    print(f"Wrote the export of {outcome.commit} to {outcome.target}\nfingerprint {outcome.fingerprint}")
    return 0
