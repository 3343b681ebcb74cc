"""Benchmark 6: what one episode's world costs the benchmark itself, per domain.

A full offline sweep runs ~15,000 episodes, each on a fresh world (`Domain.new_world`) graded at its
end (`Domain.grade`: a gold replay and a state hash for retail and banking, the offline judge for
pitch). Measured over every serving and test task of one scenario per domain, the world fresh and the
grade given the task's gold finish, in microseconds per episode: the median of interleaved rounds.
The first world of a scenario builds its shared index, so it is made once before the clock starts.
"""

from __future__ import annotations

import time
from pathlib import Path

from bench.machine import load_average
from bench.rounds import medians_by
from bench.section import Row, Section
from simulators.dataset import load_dataset
from simulators.protocol import JSON, Scenario, Task
from simulators.registry import get_domain

__all__ = ["run_world_cost"]

SCENARIOS = ("retail_l2", "banking_l3", "pitch_l3")
ROUNDS = {"full": 5, "quick": 3, "smoke": 1}


def gold_finish(task: Task) -> dict[str, JSON]:
    """The finish an agent that got the task right would send (what the grade then checks)."""
    answer = task.evaluator.answer
    if task.scenario.startswith("pitch"):
        return {"pitch": str(answer)}
    if isinstance(answer, dict) and answer.get("kind") == "refuse":
        return {"decision": "refuse", "reason": answer["reasons"][0]}
    if isinstance(answer, dict) and answer.get("kind") == "value":
        return {"answer": answer["expect"]}
    return {} if answer is None else {"answer": answer}


async def episode_us(scenario: Scenario, tasks: tuple[Task, ...]) -> float:
    domain = get_domain(scenario.domain)
    domain.new_world(scenario.environment, tasks[0])
    started = time.perf_counter()
    for task in tasks:
        world = domain.new_world(scenario.environment, task)
        await domain.grade(scenario.environment, task, world, gold_finish(task), None)
    return (time.perf_counter() - started) / len(tasks) * 1e6


async def run_world_cost(suite: Path, mode: str) -> Section:
    started = time.perf_counter()
    dataset = load_dataset(suite, only=SCENARIOS)
    rows: list[Row] = []
    for _ in range(ROUNDS[mode]):
        for name in SCENARIOS:
            scenario = dataset.scenarios[name]
            tasks = (*scenario.serving, *scenario.test)
            if mode == "smoke":
                tasks = tasks[:50]
            rows.append({"scenario": name, "episodes": len(tasks), "us_per_episode": await episode_us(scenario, tasks),
                         "load_1m": (load_average() or [None])[0]})
    section = Section("worlds", "new_world + grade per episode, gold finish, every task of one scenario per domain "
                      "(median of rounds)", ["scenario", "episodes", "us_per_episode", "load_1m"],
                      medians_by(rows, "scenario", ["episodes", "us_per_episode"]))
    section.seconds = time.perf_counter() - started
    return section
