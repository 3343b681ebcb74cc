"""`shiftbench methods check SPEC`: a method's conformance to the protocol's rules, before money is spent.

A small stream (by default the built-in suite's retail_l1, 3 serving and 3 test tasks a window, on the
offline scripted model) is played once with the method learning as a run would (`play`); then each
check (`checks`) replays the recorded blocks on fresh instances and prints PASS or FAIL with its first
evidence. The exit code is 1 on any FAIL, 0 when all pass.

Arrows: method_check -> schedule (the episode loop), models, config, providers.
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
from runner.method_check.play import play
from runner.models.registry import build_models, close_models
from runner.schedule.sweep import resolve_dataset
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
    pilot: int = 3
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
    models = build_models(config)
    try:
        played = await play(method.spec, scenario, get_domain(scenario.domain), models[request.model].client,
                            method.spec.block_size or config.block_size, stream.serving, stream.test, freeze)
        results = [await check(played) for check in (*CHECKS, context_check(request.context_tokens))]
    finally:
        await close_models(models)
    say(f"methods check {method.name} ({method.source.origin}: {method.source.target}) on {scenario.name}: "
        f"{len(stream.serving)} serving and {len(stream.test)} test tasks, model {request.model}")
    return method, results


def render_checks(results: list[CheckResult]) -> str:
    width = max(len(r.name) for r in results)
    lines = [f"{'PASS' if r.passed else 'FAIL'}  {r.name:<{width}}  {r.evidence}" for r in results]
    failed = sum(not r.passed for r in results)
    lines.append(f"{len(results) - failed} passed, {failed} failed")
    return "\n".join(lines)
