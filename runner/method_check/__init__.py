"""`shiftbench methods check SPEC`: a method's conformance to the protocol's rules, before money is spent.

A stream (by default the built-in suite's retail_l1, 10 serving and 10 test tasks a window, on the
offline scripted model; `--pilot 0` the whole scenario) is played once with the method learning as a
run would (`play`), a line per window as it goes; then each check (`checks`, and `guest`'s: the same in
its worker, instances independent, time per call) replays the recorded blocks on fresh instances and
prints PASS or FAIL with its first evidence. The method's exceptions are FAIL lines naming its own
frame, never a traceback. The exit code is 1 on any FAIL, 0 when all pass.

Arrows: method_check -> schedule (the episode loop), models, config, providers, workers.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from methods.spec import ResolvedMethod, absolute_spec, resolve_method
from runner.config.plan import plan_streams
from runner.config.settings import SweepConfig
from runner.method_check.checks import CHECKS, CheckResult, context_check, freeze
from runner.method_check.guest import check_independent, guarded, time_check, worker_check
from runner.method_check.play import Played, play
from runner.models.registry import build_models, close_models
from runner.schedule.guests import source_tree
from runner.schedule.sweep import resolve_dataset
from runner.workers.failure import MethodFailure, describe_exception
from runner.workers.handle import MethodLimits, WorkerPlan
from simulators.errors import ShiftbenchInputError
from simulators.registry import get_domain

__all__ = ["CheckRequest", "check_method", "render_checks"]


@dataclass(frozen=True)
class CheckRequest:
    spec: str
    options: Mapping[str, Any]
    scenario: str = "retail_l1"
    model: str = "scripted"
    dataset: str = ""
    seed: int = 0
    pilot: int = 10
    """Serving and test tasks per window; 0: the whole scenario."""
    context_tokens: int = 128_000


async def check_method(request: CheckRequest, say: Callable[[str], None]) -> tuple[ResolvedMethod, list[CheckResult]]:
    where = "methods check"
    method = resolve_method(absolute_spec(request.spec, Path.cwd()), request.options, where)
    config = replace(SweepConfig(), models=(request.model,), methods=("blind",), scenarios=(request.scenario,),
                     dataset=request.dataset, seed=request.seed).validate("flags")
    dataset = resolve_dataset(config, say)
    if request.scenario not in dataset.scenarios:
        raise ShiftbenchInputError(f"--scenario: the dataset has no scenario '{request.scenario}'; it has "
                                   f"{', '.join(dataset.scenarios)}")
    scenario = dataset.scenarios[request.scenario]
    stream, = plan_streams([request.model], [method.name], [scenario], learns=lambda name: method.spec.learns,
                           pilot=request.pilot)
    whole, = plan_streams([request.model], [method.name], [scenario], learns=lambda name: method.spec.learns)
    say(f"methods check {method.name} ({method.source.origin}: {method.source.target}) on {scenario.name}: "
        f"{len(stream.serving)} of its {len(whole.serving)} serving and {len(stream.test)} of its {len(whole.test)} "
        f"test tasks" + (f" (--pilot {request.pilot} a window; 0 plays it all)" if request.pilot else "")
        + f", model {request.model}")
    models = build_models(config)
    client = models[request.model].client
    try:
        try:
            played = await play(method.spec, scenario, get_domain(scenario.domain), client,
                                method.spec.block_size or config.block_size, stream.serving, stream.test, freeze, say)
        except MethodFailure as failure:
            return method, [CheckResult("plays the stream", False, str(failure))]
        except Exception as exc:  # the method's, while the stream played
            return method, [CheckResult("plays the stream", False, str(describe_exception("play", exc)))]
        results = [await guarded(check)(played) for check in _checks(method, played, client, request)]
    finally:
        await close_models(models)
    return method, results


def _checks(method: ResolvedMethod, played: Played, client: Any, request: CheckRequest) -> list[Any]:
    limits = MethodLimits()
    checks: list[Any] = [*CHECKS, check_independent, time_check(limits), context_check(request.context_tokens)]
    if method.source.origin != "registry":  # shiftbench's own run in the runner's process
        plan = WorkerPlan(method.source.spec, dict(method.options), method.name, tuple(source_tree(method)))
        checks.insert(0, worker_check(plan, client, limits))
    return checks


def render_checks(results: list[CheckResult]) -> str:
    width = max(len(r.name) for r in results)
    lines = [f"{'PASS' if r.passed else 'FAIL'}  {r.name:<{width}}  {r.evidence}" for r in results]
    failed = sum(not r.passed for r in results)
    lines.append(f"{len(results) - failed} passed, {failed} failed")
    return "\n".join(lines)
