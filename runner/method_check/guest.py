"""The checks of a method as a guest: what a run's worker, limits and fresh instances would show.

- worker: for a user's method, the played stream replayed in the worker a run would give it (the same
  process, boundary and frames), every context and state compared with the instance in this process: a
  method that finds something in the runner's frames (`inspect.stack()`), or that only works with the
  runner's modules at hand, behaves differently there, and the first difference is the evidence;
- independent: a fresh instance built after another has learned the whole stream starts as one built
  before it did (class- or module-level state would carry one stream's notes into another's);
- time: the slowest `context` and `learn` of the play against the run's default limits.
Every check turns the method's exception into a FAIL naming its own frame (`guarded`), never a traceback.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

import orjson

from methods.base import PublicScenario, context_for
from runner.method_check.checks import Check, CheckResult, _asked_after, _difference, copies
from runner.method_check.play import Played
from runner.workers.failure import MethodFailure, describe_exception, json_problem
from runner.workers.handle import MethodLimits, WorkerPlan, open_worker_method
from simulators.model_api import ModelClient

__all__ = ["check_independent", "guarded", "time_check", "worker_check"]


def guarded(check: Check) -> Check:
    """`check`, with the method's exception (or its failure in a worker) as a FAIL line."""
    async def run(played: Played) -> CheckResult:
        try:
            return await check(played)
        except MethodFailure as failure:
            return CheckResult(_name(check), False, str(failure))
        except Exception as exc:  # the method's own code, called by the check
            return CheckResult(_name(check), False, str(describe_exception("the check", exc)))

    return run


_NAMES = {"check_worker": "the same in its worker", "check_state": "state is JSON",
          "check_restore": "load(state()) restores", "check_labels": "context ignores labels",
          "check_tests": "test tasks do not teach", "check_learn": "learn is deterministic",
          "check_independent": "instances are independent", "check_time": "time per call",
          "check_calls": "model calls", "check_context": "largest context"}
"""Each check's name as its own result names it, for the FAIL line of a check the method broke."""


def _name(check: Callable[..., Awaitable[CheckResult]]) -> str:
    function = getattr(check, "__name__", "check")
    return _NAMES.get(function, function.removeprefix("check_").replace("_", " "))


def _state(method: object) -> bytes:
    value = method.state()  # type: ignore[attr-defined]
    problem = json_problem(value)
    if problem is not None:
        raise MethodFailure("state", f"state() is not JSON: {problem}")
    return orjson.dumps(value, option=orjson.OPT_SORT_KEYS)


async def check_independent(played: Played) -> CheckResult:
    name = "instances are independent"
    if copies(played) or not played.blocks:
        return CheckResult(name, True, "no JSON state or no serving stream: nothing one instance could share")
    before = _state(played.fresh())
    learner = played.fresh()
    for block in played.blocks:
        await learner.learn(block.records)
    after = _state(played.fresh())
    if after != before:
        return CheckResult(name, False, f"a new instance built after another learned {len(played.blocks)} blocks "
                                        f"starts from what it learned (class- or module-level state?): "
                                        f"{_difference(before.decode(), after.decode())}")
    return CheckResult(name, True, f"a fresh instance starts the same before and after another learned "
                                   f"{len(played.blocks)} blocks")


def time_check(limits: MethodLimits) -> Check:
    async def check_time(played: Played) -> CheckResult:
        name = "time per call"
        slowest_context = max(played.context_s, default=0.0)
        slowest_learn = max(played.learn_s, default=0.0)
        evidence = (f"slowest context {slowest_context:.3f} s of {len(played.context_s)} "
                    f"(limit {limits.context_s:g} s), slowest learn {slowest_learn:.3f} s of {len(played.learn_s)} "
                    f"(limit {limits.learn_s:g} s)")
        return CheckResult(name, slowest_context <= limits.context_s and slowest_learn <= limits.learn_s, evidence)

    return check_time


def worker_check(plan: WorkerPlan, client: ModelClient | None, limits: MethodLimits) -> Check:
    async def check_worker(played: Played) -> CheckResult:
        name = "the same in its worker"
        scenario = played.scenario
        guest = await open_worker_method(plan, scenario.name, scenario.domain, PublicScenario.of(scenario),
                                         client if played.spec.uses_model else None, limits)
        live, compared = played.fresh(), 0
        try:
            for number in range(len(played.blocks) + 1):
                if number:
                    records = played.blocks[number - 1].records
                    await live.learn(records)
                    await guest.learn(records)
                tasks = _asked_after(played, number)
                theirs = await guest.contexts(tasks)
                for task, got in zip(tasks, theirs, strict=True):
                    want, compared = context_for(live, task), compared + 1
                    if want != got:
                        return CheckResult(name, False, f"the context of {task.task_id} differs in its worker from "
                                                        f"this process (does it look outside what it is handed?): "
                                                        f"{_difference(want, got)}")
                if not copies(played):
                    here = _state(live)
                    there = orjson.dumps(await guest.state(), option=orjson.OPT_SORT_KEYS)
                    if here != there:
                        difference = _difference(here.decode(), there.decode())
                        return CheckResult(name, False, f"state() after block {number} differs in its worker "
                                                        f"from this process: {difference}")
        finally:
            await guest.close()
        return CheckResult(name, True, f"{compared} contexts and {len(played.blocks) + 1} states the same in a worker "
                                       f"process ({guest.boundary})")

    return check_worker
