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

from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from methods.spec import ResolvedMethod
from runner.common.journal_flag import resume_command
from runner.common.tables import terminal_width, wrap_prose
from runner.config.settings import SweepConfig
from runner.journal import Batch, Journal
from runner.schedule.method_errors import StreamFailure, journaled_failures
from runner.schedule.stream_slots import StreamSlots
from runner.workers.boundary import PROCESS_ONLY, forbidden, landlock_abi
from runner.workers.handle import MethodLimits, WorkerPlan
from runner.workers.in_process_guard import GIVES_UP
from runner.workers.resolve import code_reads
from simulators.errors import ShiftbenchInputError

__all__ = ["announce_guests", "engine_method_options", "method_limits", "settle_failures", "source_tree",
           "worker_plans"]


def worker_plans(config: SweepConfig, methods: Mapping[str, ResolvedMethod],
                 kept: Sequence[Path] = ()) -> dict[str, WorkerPlan]:
    """The methods that run in workers, by name (none under `methods_in_process`). `kept`: what no
    worker may read (the run's journal, its dataset): a read root that holds one is refused."""
    if config.methods_in_process:
        return {}
    plans = {}
    for name, resolved in methods.items():
        if resolved.source.origin == "registry":
            continue
        own = source_tree(resolved)
        _refuse_exposing(own, f"--methods {name}", kept, own=True)
        _refuse_exposing(config.method_reads, "--method-reads", kept)
        # An entry point is named to the worker by its value (module:NAME): finding it by name would read the
        # metadata of every import path entry, which the worker may not.
        spec = resolved.source.target if resolved.source.origin == "entry_point" else resolved.source.spec
        plans[name] = WorkerPlan(spec, dict(resolved.options), name,
                                 (*own, *config.method_reads), config.method_env)
    return plans


def _refuse_exposing(roots: Sequence[str], flag: str, kept: Sequence[Path], own: bool = False) -> None:
    for root in roots:
        path = Path(root).resolve()
        for secret in (*kept, *forbidden()):
            if secret.resolve().is_relative_to(path):
                what = "shiftbench's own code" if secret in forbidden() else str(secret)
                fix = ("name the method by its file (./file.py:NAME) or move it out of that folder" if own
                       else "name a folder that does not hold it")
                raise ShiftbenchInputError(f"{flag}: {path} holds {what}, which a method must not read; {fix}")


def source_tree(resolved: ResolvedMethod) -> list[str]:
    """What a worker's method may read of its own code: a file; for a module or an entry point, its top
    package's folder (or its one file) and its distribution's metadata, never the whole import path
    entry that holds it (a project folder with the journal in it). Found without importing it."""
    return code_reads(resolved.source.target)


def engine_method_options(config: SweepConfig, methods: Mapping[str, ResolvedMethod],
                          kept: Sequence[Path] = ()) -> dict[str, Any]:
    """The Engine's keyword arguments for its methods: their specs, plans, limits and spec texts."""
    plans = worker_plans(config, methods, kept)
    shown = {name: resolved.source.spec for name, resolved in methods.items()}
    plan_of: Callable[[str], WorkerPlan | None] = plans.get
    return {"method_specs": lambda name: methods[name].spec, "method_plans": plan_of,
            "method_limits": method_limits(config), "stream_slots": StreamSlots(config.method_workers),
            "method_shown": lambda name: shown.get(name, name)}


def method_limits(config: SweepConfig) -> MethodLimits:
    return MethodLimits(config.method_context_limit, config.method_learn_limit, config.method_memory,
                        config.method_output_size, config.method_state_size, config.method_context_size)


async def announce_guests(journal: Journal, run_id: str, workers: bool,
                          say: Callable[[str], None], in_process: bool = False) -> dict[str, StreamFailure]:
    """Said once before the run: that workers run without Landlock where the kernel has none, and (a
    resume) each stream that stopped with `method_error` before and is not resolved."""
    if in_process:
        say(wrap_prose(GIVES_UP, terminal_width()))
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
