"""Drive the engine over a list of streams with meters on the journal, the methods and the models.

This is `runner.schedule.sweep`'s driving layer without the probe, the display and the signal handling: the
same `Engine`, `ClientStack` and journal, so what is timed is what a sweep runs. The meters wrap, they
never replace: a `JournalMeter` observes the journal (`Journal.observe`) and times the commits its
callers wait for and the reads, next to the writer's own time inside transactions; `MethodMeter` times
the method calls the engine makes (context, learn, state); `ModelMeter` times the model calls.
"""

from __future__ import annotations

import time
from collections import defaultdict
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from methods.base import Method, MethodSetup, MethodSpec
from methods.registry import get_method_spec
from runner.config.plan import Stream
from runner.config.settings import SweepConfig
from runner.display.progress import RunProgress
from runner.journal import Batch, Journal, StreamEpisodes, open_journal
from runner.models.registry import ModelEntry, build_models, close_models, model_prices
from runner.models.stack import ClientStack
from runner.providers.priority import CALL_PRIORITY
from runner.schedule.engine import Engine, stream_progress
from runner.schedule.sweep import create_run  # the run and its units, exactly as a sweep journals them
from simulators.dataset import Dataset
from simulators.model_api import ModelClient, ModelRequest, ModelResponse
from simulators.protocol import JSON, TaskView
from simulators.record import EpisodeRecord

__all__ = ["CallSpan", "Drive", "EngineRun", "JournalMeter", "MethodMeter", "ModelMeter", "StackFactory", "Waits",
           "engine_run", "run_streams", "wait_ms"]

_SERVING = "|serving|"


def _payload_bytes(params: Sequence[Any]) -> int:
    return sum(len(p) for p in params if isinstance(p, bytes | str))


@dataclass
class Waits:
    count: int = 0
    seconds: float = 0.0

    def add(self, seconds: float) -> None:
        self.count += 1
        self.seconds += seconds

    @property
    def mean_ms(self) -> float:
        return round(1000 * self.seconds / self.count, 3) if self.count else 0.0


class JournalMeter:
    """A `JournalObserver`: how long callers waited for commits (block checkpoints, model calls of
    serving units, everything else) and reads, bytes handed over, checkpoint bytes; with the journal's
    own counters (transactions, batches, the writer's time inside them)."""

    def __init__(self, journal: Journal) -> None:
        self.journal = journal
        self.waits: dict[str, Waits] = defaultdict(Waits)
        """checkpoint (a serving block's commit), serving_call (a serving unit's model call), other, read."""
        self.bytes = 0
        self.checkpoints = 0
        self.checkpoint_bytes = 0
        journal.observe(self)

    def _kind(self, batch: Batch) -> str:
        kind = "other"
        for statement in batch.statements:
            size = _payload_bytes(statement.params)
            self.bytes += size
            if statement.kind == "checkpoint":
                kind = "checkpoint"
                self.checkpoints += 1
                self.checkpoint_bytes += size
            elif statement.kind == "model_call" and kind == "other" and _SERVING in str(statement.params[1]):
                kind = "serving_call"
        for _sql, rows in batch.many:
            self.bytes += sum(_payload_bytes(row) for row in rows)
        return kind

    def committed(self, batch: Batch, waited_s: float) -> None:
        self.waits[self._kind(batch)].add(waited_s)

    def enqueued(self, batch: Batch) -> None:
        """Not awaited by its caller beyond the hand-over, so only the bytes are counted."""
        self._kind(batch)

    def read(self, seconds: float) -> None:
        self.waits["read"].add(seconds)

    def stats(self) -> dict[str, Any]:
        commits = [w for k, w in self.waits.items() if k != "read"]
        calls, waited = sum(w.count for w in commits), sum(w.seconds for w in commits)
        return {"transactions": self.journal.commits, "batches": self.journal.batches,
                "batches_per_transaction": round(self.journal.batches / max(1, self.journal.commits), 2),
                "commit_wait_s": round(waited, 3), "mean_commit_ms": round(1000 * waited / max(1, calls), 3),
                "waits": {k: {"count": w.count, "seconds": round(w.seconds, 3), "mean_ms": w.mean_ms}
                          for k, w in sorted(self.waits.items())},
                "writer_s": round(self.journal.writer_s, 3),
                "mb_written": round(self.bytes / 1e6, 2), "checkpoints": self.checkpoints,
                "checkpoint_mb": round(self.checkpoint_bytes / 1e6, 2)}


def wait_ms(journal_stats: Mapping[str, Any], kind: str) -> float:
    """The mean wait of one kind of journal call, from `JournalMeter.stats()`; 0 if none was made."""
    return float(journal_stats["waits"].get(kind, {}).get("mean_ms", 0.0))


@dataclass
class MethodMeter:
    seconds: dict[str, float] = field(default_factory=lambda: defaultdict(float))
    calls: dict[str, int] = field(default_factory=lambda: defaultdict(int))

    def specs(self, base: Callable[[str], MethodSpec] = get_method_spec) -> Callable[[str], MethodSpec]:
        def spec(name: str) -> MethodSpec:
            inner = base(name)
            return replace(inner, build=lambda setup: self._build(inner, setup))
        return spec

    def _build(self, spec: MethodSpec, setup: MethodSetup) -> Method:
        return _TimedMethod(spec.build(setup), self)

    def add(self, what: str, started: float) -> None:
        self.seconds[what] += time.perf_counter() - started
        self.calls[what] += 1

    def stats(self) -> dict[str, Any]:
        return {f"{k}_s": round(v, 3) for k, v in sorted(self.seconds.items())}


class _TimedMethod:
    def __init__(self, inner: Method, meter: MethodMeter) -> None:
        self._inner = inner
        self._meter = meter

    def context(self, task: TaskView) -> str:
        started = time.perf_counter()
        try:
            return self._inner.context(task)
        finally:
            self._meter.add("context", started)

    async def learn(self, records: Sequence[EpisodeRecord]) -> None:
        started = time.perf_counter()
        try:
            await self._inner.learn(records)
        finally:
            self._meter.add("learn", started)

    def state(self) -> JSON:
        started = time.perf_counter()
        try:
            return self._inner.state()
        finally:
            self._meter.add("state", started)

    def load(self, state: JSON) -> None:
        started = time.perf_counter()
        try:
            self._inner.load(state)
        finally:
            self._meter.add("load", started)


@dataclass(frozen=True)
class CallSpan:
    """One model call inside the gate (it holds a call slot throughout), perf_counter seconds."""

    started: float
    ended: float
    priority: int


@dataclass
class ModelMeter:
    """Time inside model calls. For the in-process scripted model this is the simulated agent's CPU,
    a cost a real model moves off the machine. Each call's span and priority too: the call timeline
    (bench/timeline.py) shows when slots sat idle."""

    calls: int = 0
    seconds: float = 0.0
    spans: list[CallSpan] = field(default_factory=list)

    def wrap(self, entries: Mapping[str, ModelEntry]) -> dict[str, ModelEntry]:
        return {name: replace(entry, client=_TimedModel(entry.client, self)) for name, entry in entries.items()}


class _TimedModel:
    def __init__(self, inner: ModelClient, meter: ModelMeter) -> None:
        self._inner = inner
        self._meter = meter

    @property
    def name(self) -> str:
        return self._inner.name

    async def respond(self, request: ModelRequest) -> ModelResponse:
        started = time.perf_counter()
        try:
            return await self._inner.respond(request)
        finally:
            ended = time.perf_counter()
            self._meter.calls += 1
            self._meter.seconds += ended - started
            self._meter.spans.append(CallSpan(started, ended, CALL_PRIORITY.get()))


StackFactory = Callable[..., ClientStack]
"""ClientStack or a subclass (the makespan benchmark's no-priority variant)."""

Drive = Callable[[Engine, list[Stream]], Awaitable[None]]
"""What schedules the streams over the engine's pieces: `Engine.run` (shiftbench's scheduler) by default,
or another policy over the same engine (bench/reference.py)."""


async def engine_run(engine: Engine, streams: list[Stream]) -> None:
    await engine.run(streams)


@dataclass(frozen=True)
class StreamTimes:
    stream_id: str
    serving: int
    test: int
    serving_turns: int
    test_turns: int
    serving_done_s: float
    """Since the engine started: when the last serving episode was journaled (0 without serving)."""
    done_s: float


@dataclass(frozen=True)
class EngineRun:
    wall_s: float
    episodes: int
    serving: int
    test: int
    turns: int
    streams: tuple[StreamTimes, ...]
    journal: dict[str, Any]
    methods: dict[str, Any]
    model_calls: int
    model_s: float
    journaled_calls: int
    """Rows in model_calls: every paid call (the scripted model's are not journaled one by one)."""
    spans: tuple[CallSpan, ...] = ()
    """With `time_models`: every model call's span, in seconds since the engine started."""

    @property
    def episodes_per_s(self) -> float:
        return self.episodes / self.wall_s if self.wall_s > 0 else 0.0


async def run_streams(config: SweepConfig, dataset: Dataset, streams: list[Stream], journal_path: Path,
                      stack: StackFactory = ClientStack, time_models: bool = False,
                      drive: Drive = engine_run) -> EngineRun:
    """Journal a run of `streams` (as a sweep does) and drive the engine over it; time the engine only."""
    models = build_models(config)
    model_meter = ModelMeter()
    try:
        prices = model_prices(config, models)
        agents = model_meter.wrap(models) if time_models else models
        async with open_journal(journal_path) as journal:
            run_id = "bench"
            await create_run(journal, run_id, config, dataset, streams)
            meter = JournalMeter(journal)
            progress = RunProgress(run_id=run_id, journal_path=str(journal_path))
            for stream in streams:
                progress.streams[stream.stream_id] = stream_progress(stream)
            # As a sweep does: only units with cached answers read the cache (none, on a fresh run).
            clients = stack(run_id=run_id, journal=journal, progress=progress, models=agents,
                            prices=prices, budget=None, concurrency=config.concurrency,
                            model_concurrency=config.model_concurrency,
                            replayable=await journal.read.cached_units(run_id))
            methods = MethodMeter()
            engine = Engine(run_id=run_id, journal=journal, progress=progress, clients=clients,
                            block_size=config.block_size, max_episode_attempts=config.max_episode_attempts,
                            method_specs=methods.specs())
            started_wall, started = time.time(), time.perf_counter()
            await drive(engine, streams)
            wall = time.perf_counter() - started
            journal_stats = meter.stats()
            journal.observe(None)
            times = _stream_times(await journal.read.stream_episodes(run_id), started_wall)
            journaled_calls = await journal.read.model_call_count(run_id)
    finally:
        await close_models(models)
    return EngineRun(wall_s=wall, episodes=sum(t.serving + t.test for t in times),
                     serving=sum(t.serving for t in times), test=sum(t.test for t in times),
                     turns=sum(t.serving_turns + t.test_turns for t in times), streams=times,
                     journal=journal_stats, methods=methods.stats(), model_calls=model_meter.calls,
                     model_s=model_meter.seconds, journaled_calls=journaled_calls,
                     spans=tuple(CallSpan(c.started - started, c.ended - started, c.priority)
                                 for c in model_meter.spans))


def _stream_times(rows: list[StreamEpisodes], started_wall: float) -> tuple[StreamTimes, ...]:
    by_stream: dict[str, dict[bool, tuple[int, int, float]]] = defaultdict(dict)
    for row in rows:
        by_stream[row.stream_id][row.phase == "serving"] = (row.episodes, row.turns,
                                                            row.last_finished_at - started_wall)
    times = []
    for stream_id, parts in sorted(by_stream.items()):
        served = parts.get(True, (0, 0, 0.0))
        tested = parts.get(False, (0, 0, 0.0))
        times.append(StreamTimes(stream_id, served[0], tested[0], served[1], tested[1], served[2],
                                 max(served[2], tested[2])))
    return tuple(times)
