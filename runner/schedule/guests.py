"""A sweep's methods as guests: where each runs, its limits, and how a run ends when some failed.

A method whose code is not shiftbench's own (a file, a module, an entry point, the `slb:` adapter) runs
in a worker process per instance (`runner.workers`) unless the sweep says `methods_in_process`;
shiftbench's registry methods run in the runner's process (they are the runner's own code, and a worker
would add a process per stream for nothing). A run whose streams all ended but some with
`method_error` ends `failed` (exit 1), its reason naming them; each failed stream's line is said once.
A resume says once which streams failed before, and marks a failure `resolved` when its stream now
got through.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

from methods.spec import ResolvedMethod
from runner.common.journal_flag import resume_command
from runner.config.settings import SweepConfig
from runner.journal import Batch, Journal
from runner.schedule.method_errors import StreamFailure, journaled_failures
from runner.workers.boundary import PROCESS_ONLY, landlock_abi
from runner.workers.handle import MethodLimits, WorkerPlan

__all__ = ["announce_guests", "engine_method_options", "settle_failures", "source_tree", "worker_plans"]


def worker_plans(config: SweepConfig, methods: Mapping[str, ResolvedMethod]) -> dict[str, WorkerPlan]:
    """The methods that run in workers, by name (none under `methods_in_process`)."""
    if config.methods_in_process:
        return {}
    return {name: WorkerPlan(resolved.source.spec, dict(resolved.options), name,
                             (*source_tree(resolved), *config.method_reads))
            for name, resolved in methods.items() if resolved.source.origin != "registry"}


def source_tree(resolved: ResolvedMethod) -> list[str]:
    """The folder a worker's method may read its own code from: a file's folder; for a module or an entry
    point, the import path entry that holds its top package (so its distribution's metadata too)."""
    target = resolved.source.target.rsplit(":", 1)[0]
    if target.endswith(".py"):
        return [str(Path(target).parent)]
    module = sys.modules.get(target.split(".")[0])
    found = getattr(module, "__file__", None)
    if not found:
        return []
    location = Path(found).resolve()
    holders = [entry for entry in sys.path if entry and location.is_relative_to(Path(entry).resolve())]
    return [max(holders, key=len)] if holders else [str(location.parent)]


def engine_method_options(config: SweepConfig, methods: Mapping[str, ResolvedMethod]) -> dict[str, Any]:
    """The Engine's keyword arguments for its methods: their specs, plans, limits and spec texts."""
    plans = worker_plans(config, methods)
    shown = {name: resolved.source.spec for name, resolved in methods.items()}
    plan_of: Callable[[str], WorkerPlan | None] = plans.get
    return {"method_specs": lambda name: methods[name].spec, "method_plans": plan_of,
            "method_limits": MethodLimits(config.method_context_limit, config.method_learn_limit),
            "method_shown": lambda name: shown.get(name, name)}


async def announce_guests(journal: Journal, run_id: str, workers: bool,
                          say: Callable[[str], None]) -> dict[str, StreamFailure]:
    """Said once before the run: that workers run without Landlock where the kernel has none, and (a
    resume) each stream that stopped with `method_error` before and is not resolved."""
    if workers and landlock_abi() <= 0:
        say(f"boundary: {PROCESS_ONLY} (this kernel has no Landlock): user methods run in worker processes that "
            "can still read and write what you can")
    failed = {stream: f for stream, f in (await journaled_failures(journal.read, run_id)).items() if not f.resolved}
    for failure in failed.values():
        say(f"{failure.stream_id} stopped here before; {failure.line()}")
    return failed


async def settle_failures(journal: Journal, run_id: str, failures: Mapping[str, StreamFailure],
                          before: Mapping[str, StreamFailure], status: str, reason: str) -> tuple[str, str]:
    """The run's end once its streams' failures are counted: a run that otherwise completed ends
    `failed`; a stream that failed before and got through now is resolved. (Each failure's line is said
    by the caller once the dashboard is gone.)"""
    got_through = [f for stream, f in before.items() if stream not in failures and status == "completed"]
    if got_through:
        batch = Batch()
        for failure in got_through:
            replace(failure, resolved=True).journal_into(batch, run_id)
        await journal.commit(batch)
    if not failures or status != "completed":
        return status, reason
    streams = ", ".join(sorted(failures))
    return "failed", (f"{len(failures)} stream(s) stopped by their method (method_error): {streams}; fix the method "
                      f"and `{resume_command(run_id, journal)} --accept-method-change` continues them")
