"""`shiftbench methods check SPEC`: a method's conformance to the protocol's rules, before money is spent.

A stream (by default the built-in suite's retail_l1, 10 serving and 10 test tasks a window, on the
offline scripted model; `--pilot 0` the whole scenario) is played once with the method learning as a
run would (`play`), a line per window as it goes; then each check (`checks`, and `guest`'s: the same in
its worker, instances independent, time per call) replays the recorded blocks on fresh instances and
prints PASS or FAIL with its first evidence. The method's exceptions are FAIL lines naming its own
frame, never a traceback. The exit code is 1 on any FAIL, 0 when all pass.

Arrows: method_check -> schedule (the episode loop), models, config, providers, workers, common (the
terminal width its lines wrap to).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from methods.base import PublicScenario
from methods.spec import ResolvedMethod, absolute_spec
from runner.common.tables import wrap_prose
from runner.config.methods import resolver
from runner.config.plan import plan_streams
from runner.config.settings import SweepConfig
from runner.method_check.checks import CHECKS, CheckResult, context_check
from runner.method_check.guest import check_boundary, check_independent, guarded, time_check
from runner.method_check.play import Opener, play
from runner.models.registry import build_models, close_models
from runner.schedule.guests import source_tree
from runner.schedule.stream_methods import method_setup
from runner.schedule.sweep import resolve_dataset
from runner.workers.failure import MethodFailure, describe_exception
from runner.workers.handle import InProcessMethod, MethodHandle, MethodLimits, WorkerPlan, open_worker_method
from simulators.errors import ShiftbenchInputError
from simulators.model_api import ModelClient
from simulators.protocol import Scenario
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
    limits: MethodLimits = MethodLimits()
    """A play's time and size limits, as a run's flags set them."""


async def check_method(request: CheckRequest, say: Callable[[str], None]) -> tuple[ResolvedMethod, list[CheckResult]]:
    where = "methods check"
    method = resolver(in_process=False)(absolute_spec(request.spec, Path.cwd()), request.options, where, None)
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
    limits = request.limits
    try:
        try:
            played = await play(method.spec, scenario, get_domain(scenario.domain), client,
                                method.spec.block_size or config.block_size, stream.serving, stream.test,
                                _opener(method, scenario, limits), say)
        except MethodFailure as failure:
            return method, [CheckResult("plays the stream", False, str(failure))]
        except Exception as exc:  # shiftbench's own method's, while the stream played in this process
            return method, [CheckResult("plays the stream", False, str(describe_exception("play", exc)))]
        results = [await guarded(check)(played) for check in _checks(limits, request)]
    finally:
        await close_models(models)
    return method, results


def _opener(method: ResolvedMethod, scenario: Scenario, limits: MethodLimits) -> Opener:
    """Fresh instances where a run puts them: a user's method in a worker of its own each, under the run's
    boundary and limits; shiftbench's own in this process."""
    spec = method.spec
    if method.source.origin == "registry":
        async def here(client: ModelClient) -> MethodHandle:
            return InProcessMethod(spec.build(method_setup(spec, scenario, client)), limits)

        return here
    target = method.source.target if method.source.origin == "entry_point" else method.source.spec
    plan = WorkerPlan(target, dict(method.options), method.name, tuple(source_tree(method)))

    async def guest(client: ModelClient) -> MethodHandle:
        return await open_worker_method(plan, scenario.name, scenario.domain, PublicScenario.of(scenario),
                                        client if spec.uses_model else None, limits)

    return guest


def _checks(limits: MethodLimits, request: CheckRequest) -> list[Any]:
    return [check_boundary, *CHECKS, check_independent, time_check(limits), context_check(request.context_tokens)]


def render_checks(results: list[CheckResult], width: int | None = None) -> str:
    """A line per check; at a terminal's `width` its evidence wraps under itself (a pipe: one line each)."""
    names = max(len(r.name) for r in results)
    lines = [wrap_prose(f"{'PASS' if r.passed else 'FAIL'}  {r.name:<{names}}  {r.evidence}", width,
                        " " * (len("PASS  ") + names + 2)) for r in results]
    failed = sum(not r.passed for r in results)
    lines.append(f"{len(results) - failed} passed, {failed} failed")
    return "\n".join(lines)
