"""The checks of a method as a guest: what a run's worker, limits and fresh instances would show.

- boundary: where every play of the method ran (a user's: a worker under the run's boundary);
- independent: a fresh instance built after another has learned the whole stream starts as one built
  before it did (class- or module-level state would carry one stream's notes into another's; in a
  worker of its own each instance has its own process, so this shows only for shiftbench's own);
- time: the slowest `context` and `learn` of the play against the run's default limits (a call past
  its limit has already stopped the play, its worker ended).
Every check turns the method's exception (or its failure in a worker) into a FAIL line (`guarded`),
never a traceback.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from runner.method_check.checks import Check, CheckResult, _difference, copies, state_bytes
from runner.method_check.play import Played
from runner.workers.failure import MethodFailure, describe_exception
from runner.workers.handle import MethodLimits

__all__ = ["check_boundary", "check_independent", "guarded", "time_check"]


def guarded(check: Check) -> Check:
    """`check`, with the method's exception (or its failure in a worker) as a FAIL line; every instance
    the check opened is closed after it."""
    async def run(played: Played) -> CheckResult:
        try:
            return await check(played)
        except MethodFailure as failure:
            return CheckResult(_name(check), False, str(failure))
        except Exception as exc:  # the method's own code, called by the check in this process
            return CheckResult(_name(check), False, str(describe_exception("the check", exc)))
        finally:
            await played.close_all()

    return run


_NAMES = {"check_boundary": "runs as a guest", "check_state": "state is JSON",
          "check_restore": "load(state()) restores", "check_labels": "context ignores labels",
          "check_tests": "test tasks do not teach", "check_learn": "learn is deterministic",
          "check_independent": "instances are independent", "check_time": "time per call",
          "check_calls": "model calls", "check_context": "largest context"}
"""Each check's name as its own result names it, for the FAIL line of a check the method broke."""


def _name(check: Callable[..., Awaitable[CheckResult]]) -> str:
    function = getattr(check, "__name__", "check")
    return _NAMES.get(function, function.removeprefix("check_").replace("_", " "))


async def check_boundary(played: Played) -> CheckResult:
    name = "runs as a guest"
    if played.boundary == "in-process":
        return CheckResult(name, True, "shiftbench's own method: played in this process, as a run plays it")
    return CheckResult(name, True, f"every play in a worker process of its own, as a run's: {played.boundary}")


async def check_independent(played: Played) -> CheckResult:
    name = "instances are independent"
    if copies(played) or not played.blocks:
        return CheckResult(name, True, "no JSON state or no serving stream: nothing one instance could share")
    before = await state_bytes(await played.fresh())
    learner = await played.fresh()
    for block in played.blocks:
        await learner.learn(block.records)
    after = await state_bytes(await played.fresh())
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
