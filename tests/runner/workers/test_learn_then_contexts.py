"""A serving block's learn brings the next block's contexts back in the same round trip to the worker
(issue 37, item 9), but only when nothing else is asked in between: the method sees its calls in the
order it always did (a checkpoint's `state` before the next block's context), and a context that
fails inside the merged request is told as the next block's context, not as the learn."""

from __future__ import annotations

import sqlite3
from collections import Counter
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import orjson
import pytest

from runner.journal import open_journal
from runner.workers.handle import WorkerPlan
from runner.workers.process import Worker
from simulators.protocol import Scenario
from tests.fakes import ScriptModel, toy_decider, toy_scenario
from tests.runner.test_engine import context_of, create, make_engine, stream_of
from tests.runner.workers import guests
from tests.runner.workers.test_guest_runs import guest_file

PER_WINDOW, WINDOWS, CHECKPOINT_EVERY = 5, 2, 2


def expected_calls(scenario: Scenario, checkpoint_every: int) -> tuple[list[str], Counter[str]]:
    """The calls a sequential driver makes, one request each, and how many requests of each kind the
    merged protocol needs for them: written out from the protocol, not from the engine."""
    log: list[str] = []
    requests: Counter[str] = Counter()
    unsaved, merged = 0, False
    for window in range(WINDOWS):
        tasks = [t for t in scenario.serving if t.window == window]
        for index, task in enumerate(tasks):
            log.append(f"context {task.task_id}")
            requests["contexts"] += 0 if merged else 1
            log.append(f"learn {task.task_id}")
            unsaved += 1
            window_end = index == len(tasks) - 1
            checkpoint = window_end or unsaved >= checkpoint_every
            merged = not checkpoint
            requests["learn+contexts" if merged else "learn"] += 1
            if checkpoint:
                log.append("state")
                requests["state"] += 1
                unsaved = 0
        log.append("state")  # the window's frozen copy for its test set
        requests["state"] += 1
    return log[:-1], requests  # the last window-end checkpoint holds the log up to its own state


async def serve(tmp_path: Path, guest: str, checkpoint_every: int,
                monkeypatch: pytest.MonkeyPatch) -> tuple[dict[int, Counter[str]], Any, Scenario]:
    scenario = toy_scenario(windows=WINDOWS, serving_per_window=PER_WINDOW, test_per_window=1)
    stream = stream_of(scenario)
    file = guest_file(tmp_path)
    spec = getattr(guests, guest)
    plan = WorkerPlan(f"{file}:{guest}", {}, spec.name, reads=(str(file),))
    by_worker: dict[int, Counter[str]] = {}
    request = Worker.request

    async def counted(self: Worker, call: str, message: Mapping[str, Any], limit_s: float) -> Any:
        op = str(message["op"]) + ("+contexts" if "then_contexts" in message else "")
        by_worker.setdefault(id(self), Counter())[op] += 1
        return await request(self, call, message, limit_s)

    monkeypatch.setattr(Worker, "request", counted)
    model = ScriptModel(toy_decider(lambda r: context_of(r)["best"]))
    async with open_journal(tmp_path / "j.sqlite") as journal:
        await create(journal, scenario, stream)
        engine = make_engine(journal, model, 1, [], stream, method_specs=lambda name: spec,
                             method_plans=lambda name: plan, checkpoint_every=checkpoint_every)
        await engine.run([stream])
    return by_worker, engine, scenario


async def test_a_learn_brings_the_next_contexts_and_the_method_sees_its_calls_in_order(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    by_worker, engine, scenario = await serve(tmp_path, "CALL_LOG", CHECKPOINT_EVERY, monkeypatch)
    assert not engine.failures
    log, requests = expected_calls(scenario, CHECKPOINT_EVERY)
    with sqlite3.connect(tmp_path / "j.sqlite") as db:
        (state,) = db.execute("SELECT state FROM checkpoints WHERE label = 'latest'").fetchone()
    assert orjson.loads(state)["log"] == log
    serving = next(ops for ops in by_worker.values() if ops["learn"] or ops["learn+contexts"])
    assert {op: serving[op] for op in requests} == dict(requests)
    assert serving["contexts"] < PER_WINDOW * WINDOWS  # fewer round trips than one per block


async def test_a_context_failing_inside_a_learn_is_told_as_the_next_blocks_context(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _, engine, scenario = await serve(tmp_path, "RAISES_IN_CONTEXT", 32, monkeypatch)
    (failure,) = engine.failures.values()
    fifth = scenario.serving[guests.FAIL_AT]  # the first context asked once four records were learned
    assert failure.call == "context"
    assert failure.where == f"block {stream_of(scenario).unit_id(fifth)}"
    assert "ValueError: planted after record 4" in failure.line()
