"""What every audit replay shares: the recorded run, its episodes, and an engine to replay them with.

`open_replay` loads a run from the journal (its config and dataset, refused with one line if the
dataset changed), plans its streams as the run did, and builds the audit's client stack: calls are
journaled, priced and budgeted under the audit's id, and a request the recording already paid for is
answered from the run's response cache (`replay_from`), so a replay's prefix costs nothing. The
method's context for an episode comes from the same engine that ran it (`Engine.method_as_of`).

An audit's id names the run, the audit's kind and spec, and the code version: running the same audit
again resumes it (finished cases are skipped), a new code version starts afresh.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path

import anyio
import orjson

from runner.common.journal_flag import journal_flag
from runner.common.version import code_version
from runner.config.plan import Stream, plan_streams
from runner.config.run_dataset import dataset_of_run
from runner.config.settings import SweepConfig, config_from_json
from runner.cost.budget import Budget, BudgetExhausted
from runner.display.progress import RunProgress
from runner.journal import AuditCaseRow, AuditRow, Batch, Journal, open_journal
from runner.models.registry import ModelEntry, build_models, close_models, model_prices
from runner.models.stack import ClientStack
from runner.schedule.engine import Engine
from runner.schedule.episode import EpisodeLimits
from runner.schedule.guests import engine_method_options
from simulators.dataset import Dataset
from simulators.errors import ShiftbenchInputError
from simulators.protocol import JSON, Task
from simulators.record import EpisodeRecord

__all__ = ["CASES_IN_FLIGHT", "Recorded", "Replay", "audit_id_for", "open_replay"]

CASES_IN_FLIGHT = 8
"""Audit cases replayed at once."""


@dataclass(frozen=True)
class Recorded:
    """One journaled episode of the run, with its stream and task."""

    unit_id: str
    stream: Stream
    task: Task
    record: EpisodeRecord


@dataclass
class Replay:
    run_id: str
    audit_id: str
    journal: Journal
    config: SweepConfig
    engine: Engine
    episodes: list[Recorded]
    done: dict[str, tuple[str, bytes]] = field(default_factory=dict)
    """Case id -> (verdict, details) already journaled by an earlier attempt of this audit."""

    async def context(self, episode: Recorded) -> str:
        method = await self.engine.method_as_of(episode.stream, episode.task)
        try:
            (text,) = await method.contexts([episode.task])
        finally:
            await method.close()
        return text

    async def finish(self, status: str) -> None:
        await self.journal.commit(Batch().audit_status(self.audit_id, status))

    async def save(self, case_id: str, verdict: str, details: object) -> None:
        await self.journal.commit(Batch().audit_case(AuditCaseRow(self.audit_id, case_id, verdict,
                                                                    orjson.dumps(details), time.time())))

    async def run_cases(self, case_id: Callable[[Recorded], str],
                        case: Callable[[Recorded], Awaitable[tuple[str, dict[str, JSON]]]]) -> str:
        """Run every recorded episode's case not journaled yet, CASES_IN_FLIGHT at a time, journaling each
        verdict as it comes; the first budget refusal starts no new case. The audit's status, journaled."""
        limiter = anyio.CapacityLimiter(CASES_IN_FLIGHT)
        stopped: list[str] = []

        async def one(episode: Recorded) -> None:
            async with limiter:
                if stopped:
                    return
                try:
                    verdict, details = await case(episode)
                except BudgetExhausted:
                    stopped.append("budget_exhausted")
                    return
                await self.save(case_id(episode), verdict, details)

        async with anyio.create_task_group() as group:
            for episode in self.episodes:
                if case_id(episode) not in self.done:
                    group.start_soon(one, episode)
        status = stopped[0] if stopped else "completed"
        await self.finish(status)
        return status


def audit_id_for(run_id: str, kind: str, spec: object) -> str:
    payload = orjson.dumps({"run": run_id, "kind": kind, "spec": spec, "code": code_version()},
                           option=orjson.OPT_SORT_KEYS)
    return f"{run_id}~{kind}~{hashlib.sha256(payload).hexdigest()[:12]}"


@asynccontextmanager
async def open_replay(journal_path: Path, run_id: str, kind: str, spec: object, budget: float | None = None,
                      check: Callable[[list[Recorded]], None] | None = None) -> AsyncIterator[Replay]:
    """`check` refuses bad input against the recorded episodes before anything is written."""
    async with open_journal(journal_path, create=False) as journal:
        config, dataset = await _load(journal, journal_path, run_id)
        audit_id = audit_id_for(run_id, kind, spec)
        models = build_models(config)
        try:
            engine = await _engine(journal, run_id, audit_id, config, models, budget)
            episodes = await _episodes(journal, run_id, config, dataset)
            if check is not None:
                check(episodes)
            await journal.commit(Batch().audit(AuditRow(audit_id, run_id, kind, orjson.dumps(spec).decode(),
                                                        code_version(), time.time(), "running")))
            done = await journal.read.audit_cases(audit_id)
            yield Replay(run_id, audit_id, journal, config, engine, episodes, done)
        finally:
            await close_models(models)


async def _load(journal: Journal, path: Path, run_id: str) -> tuple[SweepConfig, Dataset]:
    row = await journal.read.run(run_id)
    if row is None:
        raise ShiftbenchInputError(f"{path}: no run '{run_id}'; `shiftbench runs{journal_flag(path)}` lists the runs "
                                   "there")
    return config_from_json(row.config), dataset_of_run(
        row, "an audit replays the recorded tasks, restore the dataset first")


async def _engine(journal: Journal, run_id: str, audit_id: str, config: SweepConfig,
                  models: dict[str, ModelEntry], cap: float | None) -> Engine:
    progress = RunProgress(run_id=audit_id, journal_path=str(journal.path))
    budget = None
    if cap is not None:
        spent = (await journal.read.spend(audit_id)).total
        if spent >= cap:
            raise ShiftbenchInputError(f"--budget: audit {audit_id} already spent ${spent:.4f} of ${cap:.2f}; "
                                       "give a higher --budget")
        budget = Budget(cap, spent=spent)
    clients = ClientStack(run_id=audit_id, journal=journal, progress=progress, models=models,
                          prices=model_prices(config, models), budget=budget, concurrency=config.concurrency,
                          model_concurrency=config.model_concurrency, replay_from=run_id)
    methods = config.resolved_methods()
    return Engine(run_id=run_id, journal=journal, progress=progress, clients=clients,
                  block_size=config.block_size, max_episode_attempts=config.max_episode_attempts,
                  limits=EpisodeLimits(max_turns=config.max_turns),
                  **engine_method_options(config, methods, (Path(journal.path),)))


async def _episodes(journal: Journal, run_id: str, config: SweepConfig, dataset: Dataset) -> list[Recorded]:
    scenarios = [dataset.scenarios[name] for name in config.scenarios]
    streams = plan_streams(config.models, config.methods, scenarios,
                           learns=config.learns(), pilot=config.pilot,
                           replicas=config.replicas)
    units = {stream.unit_id(unit.task): (stream, unit.task) for stream in streams for unit in stream.units()}
    found = []
    for row in await journal.read.recorded_episodes(run_id):
        if row.unit_id in units:
            stream, task = units[row.unit_id]
            found.append(Recorded(row.unit_id, stream, task, EpisodeRecord.from_json(orjson.loads(row.record))))
    return found
