"""Start or resume a sweep: resolve the dataset, plan, journal the run, drive the engine, end cleanly.

This is the layer that turns a config into a run; `runner.schedule.engine` runs the batch and `runner.schedule.episode`
runs one episode (STYLE.md's three layers).
"""

from __future__ import annotations

import os
import secrets
import signal
import sqlite3
import time
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass, replace
from pathlib import Path

import anyio
import orjson
from anyio import CancelScope

from methods.spec import ResolvedMethod
from runner.common.errors import RunAborted, sole_error
from runner.common.home import DEFAULT_HOME, default_journal
from runner.common.journal_flag import journal_flag
from runner.common.machine import machine_info
from runner.common.money import usd
from runner.common.version import code_version
from runner.config.fit import check_oracle_readable, scenarios_present
from runner.config.method_provenance import check_methods_unchanged, methods_journaled
from runner.config.plan import RunPart, Stream, pilot_note, plan_streams
from runner.config.prices import Price
from runner.config.run_dataset import check_same_dataset
from runner.config.settings import SweepConfig, config_from_json, config_hash, stored_config_hash
from runner.cost.budget import Budget
from runner.cost.budget_ledger import judge_holds
from runner.cost.pilot import pilot_projection
from runner.cost.pricing import cost_usd
from runner.display.live import Display, make_display
from runner.display.progress import RunProgress
from runner.journal import STOPPING, Batch, Journal, JournalFull, ModelCallRow, NewRun, UnitRow, open_journal
from runner.journal.housekeeping import run_writer
from runner.journal.meta_keys import machine_meta_key
from runner.journal.sweep_record import sweep_meta_key
from runner.models.batch_lanes import batch_prices, make_batcher, refuse_without_batch_api
from runner.models.journaled import note_served
from runner.models.probe import ProbeResult, probe_models
from runner.models.registry import ModelEntry, RetryTally, build_models, close_models, model_prices
from runner.models.stack import ClientStack
from runner.models.watched import CURRENT_STREAM
from runner.providers import RetryNotice
from runner.schedule.admission import TestAdmission
from runner.schedule.engine import Engine, StopControl
from runner.schedule.episode import EpisodeLimits
from runner.schedule.full_disk import finish_run, first_full, not_started, stopped_by_full_disk
from runner.schedule.guests import announce_guests, engine_method_options, settle_failures, worker_plans
from runner.schedule.judge import judge_factory
from runner.schedule.lease_keeper import LeaseKeeper, take_lease
from runner.schedule.paths import check_journal_target, dataset_root, interruptible, resolve_dataset, suite_root
from runner.schedule.starting_progress import starting_progress
from simulators.dataset import Dataset, load_dataset
from simulators.errors import ShiftbenchInputError

__all__ = ["DEFAULT_HOME", "RunOutcome", "create_run", "default_journal", "plan_sweep", "resolve_dataset",
           "resume_sweep", "start_sweep", "suite_root"]

GRACE_PERIOD_S = 60.0


@dataclass(frozen=True)
class RunOutcome:
    run_id: str
    status: str
    reason: str
    journal: Path


def _is_live(status: str) -> bool:
    """Its process still works on it: running, or stopping (in-flight work finishing)."""
    return status == "running" or status.startswith(STOPPING)


def _new_run_id() -> str:
    return time.strftime("r%Y%m%d-%H%M%S-") + secrets.token_hex(2)


async def start_sweep(config: SweepConfig, journal_path: Path, display: str = "auto",
                      say: Callable[[str], None] = print, part: RunPart | None = None) -> RunOutcome:
    """Check everything that can be checked before spending anything (models, keys, prices, dataset,
    a probe of each model), then journal the run and drive it (only `part`'s streams, under its id)."""
    check_journal_target(journal_path)
    config = scenarios_present(config)
    worker_plans(config, config.resolved_methods(), _kept_from_methods(journal_path, config))  # refused: none written
    tally = RetryTally()
    models = build_models(config, tally)
    try:
        # Nothing exists yet, so Ctrl-C may stop this at once (the engine's own handler comes later).
        with interruptible():
            prices, probes, dataset, streams = await _checked_plan(config, models, say)
        run_id = _new_run_id() if part is None else part.run_id
        if part is not None:
            streams = [stream for stream in streams if stream.stream_id in part.stream_ids]
        started = False
        try:
            async with open_journal(journal_path) as journal:
                keeper = await take_lease(journal, run_id)  # of two processes creating one run, one goes on
                await create_run(journal, run_id, config, dataset, streams, part.meta if part is not None else {})
                started = True
                # Said only once the run exists: a journal that cannot be created names no run id.
                say(f"Journal: {journal_path}  (run {run_id})")
                return await _drive(journal, run_id, config, streams, models, prices, tally, display, say,
                                    _probe_rows(run_id, probes, prices), keeper)
        except JournalFull as full:
            # Before the run's first row nothing started; after it (the writer's last flush as the journal
            # closes), the run exists and stopped, resumable, so it is said as such.
            raise (stopped_by_full_disk(full, run_id) if started else not_started(full)) from None
    finally:
        await close_models(models)


async def _checked_plan(config: SweepConfig, models: dict[str, ModelEntry], say: Callable[[str], None]
                        ) -> tuple[dict[str, Price | None], list[ProbeResult], Dataset, list[Stream]]:
    prices = model_prices(config, models)
    batch_prices(config, models, prices)  # a model asked to batch that cannot is refused before anything
    # A dataset that is already there is read (and checked) before the probe; the built-in suite is
    # built only after it: a run that cannot start writes nothing.
    root = dataset_root(config)
    dataset = load_dataset(root, only=config.scenarios) if root is not None else None
    if dataset is not None:
        check_oracle_readable(config, dataset)
        plan_sweep(config, dataset)
    await refuse_without_batch_api(config, models, batch_prices(config, models, prices))  # free, before the probe
    probes = await probe_models(models.values(), say)
    dataset = dataset or resolve_dataset(config, say)
    check_oracle_readable(config, dataset)
    note = pilot_note(config.pilot, [dataset.scenarios[name] for name in config.scenarios])
    if note is not None:
        say(note)
    return prices, probes, dataset, plan_sweep(config, dataset)


async def resume_sweep(run_id: str, journal_path: Path, display: str = "auto",
                       say: Callable[[str], None] = print, budget: float | None = None,
                       meta: Mapping[str, str] | None = None, accept_method_change: bool = False) -> RunOutcome:
    """Continue a run in place: the streams it planned (a shard's only). `budget` replaces the run's cap
    (a run stopped by its cap resumes with a higher one); everything that decides results must be as it
    was, methods' sources included unless `accept_method_change` (then the change is journaled). `meta`
    rows are journaled once every check has passed."""
    check_journal_target(journal_path)
    async with open_journal(journal_path, create=False) as journal:
        config, dataset = await _load_run(journal, journal_path, run_id)
        if budget is not None:
            config = replace(config, budget=budget).validate("--budget")
        tally = RetryTally()
        models = build_models(config, tally)
        try:
            prices = model_prices(config, models)
            batch_prices(config, models, prices)
            planned = {row.stream_id for row in await journal.read.streams_of_run(run_id)}
            streams = [stream for stream in plan_sweep(config, dataset) if stream.stream_id in planned]
            changed = await check_methods_unchanged(journal.read, run_id, config.resolved_methods(),
                                                    accept_method_change)
            await _check_budget_left(journal, run_id, config.budget)
            # Said only now: every refusal (an unknown, finished or running run, a cap below the spend, a
            # changed method, an unpriced model) comes before anything suggests a resume.
            say(f"Journal: {journal_path}  (resuming run {run_id})")
            await refuse_without_batch_api(config, models, batch_prices(config, models, prices))
            probes = await probe_models(models.values(), say)
            if changed.names:
                say(f"Resuming with the changed source of {', '.join(changed.names)} (recorded in the run's "
                    "provenance)")
            # Only now, with every check passed, is anything written: a refused resume changes nothing.
            batch = changed.journal(_probe_rows(run_id, probes, prices), run_id)
            if budget is not None:
                batch.run_config(run_id, orjson.dumps(asdict(config)).decode(), budget)
            for key, value in (meta or {}).items():
                batch.set_meta(key, value)
            return await _drive(journal, run_id, config, streams, models, prices, tally, display, say, batch)
        finally:
            await close_models(models)


def _probe_rows(run_id: str, probes: list[ProbeResult], prices: dict[str, Price | None]) -> Batch:
    """The probes as the run's calls with purpose `probe`: priced, so the budget and the report see them."""
    batch = Batch()
    for probe in probes:
        usage = probe.response.usage
        batch.model_call(ModelCallRow(
            run_id, "probe", "", "probe", probe.model, "", "ok", probe.response.attempts, False, usage.input_tokens,
            usage.cached_input_tokens, usage.cache_write_tokens, usage.output_tokens,
            cost_usd(usage, prices.get(probe.model)), probe.latency_s, time.time(), "", replica=probe.response.replica))
        note_served(batch, run_id, probe.model, probe.response.served_model)
    return batch


async def _check_budget_left(journal: Journal, run_id: str, cap: float | None) -> None:
    spent = (await journal.read.spend(run_id)).total + await journal.read.lost_usd(run_id)
    if cap is not None and spent >= cap:
        raise ShiftbenchInputError(f"--budget: run {run_id} already spent ${spent:.4f} of its {usd(cap)} cap; "
                                   f"resume with a higher one (`shiftbench resume {run_id} --budget USD"
                                   f"{journal_flag(journal.path)}`)")


def plan_sweep(config: SweepConfig, dataset: Dataset) -> list[Stream]:
    """Every stream of the sweep, in plan order (a shard splits this very list)."""
    scenarios = [dataset.scenarios[name] for name in config.scenarios]
    return plan_streams(config.models, config.methods, scenarios,
                        learns=config.learns(), pilot=config.pilot, repeats=config.repeats,
                        replicas=config.replicas)


async def create_run(journal: Journal, run_id: str, config: SweepConfig, dataset: Dataset,
                     streams: list[Stream], meta: Mapping[str, str] | None = None,
                     methods: Mapping[str, ResolvedMethod] | None = None) -> None:
    """Journal a new run and its planned units (and `meta` rows, in the same transaction), exactly as
    `start_sweep` does (bench/ and tests too), with its methods' provenance (`methods`; None: the
    config's, resolved)."""
    now = time.time()
    run = NewRun(run_id, now, now, orjson.dumps(asdict(config)).decode(), config_hash(config), str(dataset.root),
                 dataset.fingerprint, orjson.dumps(dict(dataset.file_hashes)).decode(), code_version(), config.budget,
                 os.getpid())
    units = (UnitRow(run_id, unit.unit_id, stream.stream_id, stream.model, stream.method, stream.scenario.name,
                     unit.phase, unit.task.window, unit.seq, unit.task.task_id, unit.task.timestamp, unit.task.category,
                     unit.task.evaluator.family, unit.repetition, stream.replica)
             for stream in streams for unit in stream.units())
    batch = Batch().new_run(run, units).set_meta(machine_meta_key(run_id), machine_info())
    for key, value in (meta or {}).items():
        batch.set_meta(key, value)
    resolved = config.resolved_methods() if methods is None else methods
    await journal.commit(methods_journaled(batch, run_id, resolved))


async def _load_run(journal: Journal, journal_path: Path, run_id: str) -> tuple[SweepConfig, Dataset]:
    row = await journal.read.run(run_id)
    if row is None:
        raise ShiftbenchInputError(f"{journal_path}: no run '{run_id}'; `shiftbench runs{journal_flag(journal_path)}` "
                                   "lists the runs there")
    if row.status == "completed":
        raise ShiftbenchInputError(f"run {run_id} is already complete; `shiftbench report {run_id}"
                                   f"{journal_flag(journal_path)}` shows it")
    if await journal.read.meta(sweep_meta_key(run_id)) is not None:
        raise ShiftbenchInputError(f"run {run_id} is a merge of shard journals; run the unfinished shards' "
                                   "commands again, then merge again")
    writer = await run_writer(journal.read, row, os.getpid())
    if writer is not None:
        raise ShiftbenchInputError(f"run {run_id} is still running in {writer}; stop it first (Ctrl-C) or wait "
                                   "for it to end (if its host is down, until its lease lapses)")
    config = config_from_json(row.config)
    if stored_config_hash(row.config) != row.config_hash:
        raise ShiftbenchInputError(f"{journal_path}: run {run_id}'s stored config does not match its hash; "
                                   "the journal was edited, start a new run")
    dataset = load_dataset(row.dataset_path, only=config.scenarios)
    check_same_dataset(run_id, row.dataset_path, orjson.loads(row.dataset_files), row.dataset_fingerprint, dataset)
    return config, dataset


def _kept_from_methods(journal: Journal | Path, config: SweepConfig) -> list[Path]:
    """What no worker may read: the journal (and its -wal, -shm beside it) and the dataset (the built-in
    suite's folder, built or not)."""
    path = journal.path if isinstance(journal, Journal) else journal
    return [Path(path).resolve(), Path(config.dataset).resolve() if config.dataset else suite_root(config)]


async def _drive(journal: Journal, run_id: str, config: SweepConfig, streams: list[Stream],
                 models: dict[str, ModelEntry], prices: dict[str, Price | None], tally: RetryTally,
                 display_kind: str, say: Callable[[str], None], first: Batch,
                 keeper: LeaseKeeper | None = None) -> RunOutcome:
    """`first`: the rows every check passed for (probes, a resume's new cap), journaled with the start.
    `keeper`: the run's lease when taken already (a new run's); a resume takes it here."""
    # Only now, with every check passed, is the run this process's: a refused resume leaves it as it was.
    try:
        if keeper is None:
            row = await journal.read.run(run_id)
            keeper = await take_lease(journal, run_id, row is not None and _is_live(row.status), row.pid if row else 0)
        await journal.commit(first.run_started(run_id, os.getpid()))
    except JournalFull as full:
        raise stopped_by_full_disk(full, run_id) from None
    progress = await starting_progress(journal, run_id, streams)

    def count_retry(notice: RetryNotice) -> None:
        progress.retries, progress.rate_limited = tally.retries, tally.rate_limited
        waiting = CURRENT_STREAM.get()
        if waiting is not None and notice.status == 429:
            waiting.quota_until = max(waiting.quota_until, progress.clock() + notice.wait_s)

    tally.listeners.append(count_retry)
    progress.endpoints = list({id(b): b for e in models.values() for b in e.breakers()}.values())
    progress.pools = list({id(e.router): e.router for e in models.values() if e.router is not None}.values())
    budget = await _budget(journal, run_id, config.budget, progress)
    cached = await journal.read.cached_units(run_id)
    batched = batch_prices(config, models, prices)
    clients = ClientStack(run_id=run_id, journal=journal, progress=progress, models=models, prices=prices,
                          budget=budget, concurrency=config.concurrency, model_concurrency=config.model_concurrency,
                          replayable=cached, batcher=make_batcher(config, models, batched, run_id, journal, say),
                          batch_prices=batched)
    progress.batchers = [clients.batcher] if clients.batcher is not None else []
    settings = config.batching()
    engine = Engine(run_id=run_id, journal=journal, progress=progress, clients=clients,
                    block_size=config.block_size, max_episode_attempts=config.max_episode_attempts,
                    judges=judge_factory(config.judge, clients), limits=EpisodeLimits(max_turns=config.max_turns),
                    admission=TestAdmission(batched.__contains__, settings.max_items, settings.start),
                    **engine_method_options(config, config.resolved_methods(), _kept_from_methods(journal, config)))
    users = [name for name, m in config.resolved_methods().items() if m.source.origin != "registry"]
    before = await announce_guests(journal, run_id, any(engine.method_plans(s.method) for s in streams), say,
                                   in_process=config.methods_in_process and bool(users))
    display = make_display(display_kind, progress)
    status, reason = "running", ""
    display.start()
    try:
        status, reason = await _run_engine(engine, streams, display, keeper)
        status, reason = await settle_failures(journal, run_id, engine.failures, before, status, reason)
        if status == "budget_exhausted" and budget is not None:
            # Said once everything in flight has settled: the spend the run really ended at.
            again = f"`shiftbench resume {run_id} --budget USD{journal_flag(journal.path)}`"
            reason = (f"budget cap {usd(budget.cap)} reached{engine.budget_stop.why}: ${budget.spent:.4f} spent in "
                      f"all; resume with a higher cap ({again})")
    except JournalFull as full:
        stopped = stopped_by_full_disk(full, run_id)
        status, reason = "interrupted", str(stopped)
        raise stopped from None
    finally:
        progress.status = status
        display.stop()
        if keeper.lost is None:  # a run another process took over is that process's to end
            await finish_run(journal, run_id, status, reason)
            await keeper.give_up()
    for failure in engine.failures.values():  # one line per stream its method stopped, the dashboard gone
        say(failure.line())
    # How the run ended is said once, by the report every command prints after it (`run`, `resume`).
    if config.pilot:
        ran = [stream for stream in streams if stream.stream_id not in engine.failures]  # a failed one has no figures
        say(await pilot_projection(journal, run_id, ran, config, budget, status))
    return RunOutcome(run_id, status, reason, journal.path)


async def _budget(journal: Journal, run_id: str, cap: float | None, progress: RunProgress) -> Budget | None:
    """The run's cap, starting from what the run already spent: all its journaled calls, and the worst
    case of each call a killed process had in flight (`runner.cost.budget_ledger`)."""
    progress.budget_usd = cap
    spent = (await journal.read.spend(run_id)).total + await judge_holds(journal, run_id)
    progress.spent_usd = spent
    if cap is None:
        return None
    return Budget(cap, spent=spent)


async def _run_engine(engine: Engine, streams: list[Stream], display: Display,
                      keeper: LeaseKeeper) -> tuple[str, str]:
    """Run to the end, the lease renewed meanwhile; map how it ended to the run's status. Ctrl-C: stop
    dispatching and let what is in flight finish (up to a grace period); a second Ctrl-C cancels it."""
    try:
        async with anyio.create_task_group() as group:
            resume = f"shiftbench resume {engine.run_id}{journal_flag(engine.journal.path)}"
            group.start_soon(_watch_signals, engine.stop, group.cancel_scope, display, resume)
            group.start_soon(_refresh, display)
            group.start_soon(keeper.renew_forever)
            await engine.run(streams)
            group.cancel_scope.cancel()
    except BaseExceptionGroup as group_error:
        clash = group_error.subgroup(sqlite3.IntegrityError)
        if clash is not None:  # a row another writer journaled first: say who, never a traceback
            raise await keeper.explain(_first_leaf(clash)) from None
        full = first_full(group_error)
        if full is not None:  # the disk is full: the run stops however else its streams ended
            raise full from None
        aborted, other = group_error.split(RunAborted)
        if aborted is not None and other is None:
            return "failed", str(sole_error(_first_leaf(aborted)))
        raise sole_error(group_error) from None
    except RunAborted as exc:
        return "failed", str(exc)
    if engine.stop.requested:
        return engine.stop.status, engine.stop.reason
    return "completed", ""


def _first_leaf(error: BaseException) -> BaseException:
    while isinstance(error, BaseExceptionGroup):
        error = error.exceptions[0]
    return error


async def _refresh(display: Display) -> None:
    while True:
        display.refresh()
        await anyio.sleep(0.25)


async def _watch_signals(stop: StopControl, scope: CancelScope, display: Display, resume: str) -> None:
    with anyio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as signals:
        async for _ in signals:
            if stop.requested:
                display.message("Cancelling in-flight episodes; the journal stays resumable.")
                scope.cancel()
                return
            stop.request(f"stopped by signal; `{resume}` continues it")
            display.message(f"Stopping: finishing in-flight episodes (up to {GRACE_PERIOD_S:.0f} s). "
                            "Ctrl-C again to cancel them.")
            scope.deadline = anyio.current_time() + GRACE_PERIOD_S
