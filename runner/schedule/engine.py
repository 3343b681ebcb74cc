"""Run a batch of streams: serving strictly in order, test sets fanned out, everything journaled.

Per stream (model, method, scenario, replica; a replica of `--replicas K` is a stream like any other,
its model and method calls carrying the replica's sampling seed):
- serving tasks run block by block (block size 1 by default); a block's episodes run concurrently
  against the method state frozen before the block; then `learn`, then ONE transaction journals the
  block's episodes (with the method checkpoint every CHECKPOINT_EVERY serving episodes and at window
  ends). The next block starts once that transaction is handed to the writer, and is itself handed
  over only after it is committed: the writer commits in arrival order, so the journal always holds a
  prefix of the serving blocks, and a crash loses at most the last two (a resume runs them again).
- when a window's serving part has been learned from, its test set starts against a frozen copy of
  the method state and runs concurrently with the next window's serving; with `--repeats K` each test
  task is K units against that same frozen state (serving stays one stream).
All streams run at once. Resume skips journaled units and restores the method (`stream_methods`: its
checkpoints, freezing, block size, where it runs). A method's failure stops its own stream only, with
`method_error` (`method_errors`); every other stream runs on. Under a cap, an episode starts only while
the room left pays for it beside those in flight (`budget_stop`), which then finish.
"""

from __future__ import annotations

import gc
from collections.abc import Callable, Sequence
from contextlib import AbstractAsyncContextManager, nullcontext
from dataclasses import dataclass, field

import anyio
import anyio.abc
import orjson

from methods.base import Method, MethodSpec
from methods.registry import get_method_spec
from runner.common.errors import RunAborted
from runner.common.journal_flag import resume_command
from runner.config.plan import Stream, Unit, window_tasks
from runner.cost.budget import EPISODE_AGE, BudgetExhausted
from runner.display.progress import RunProgress
from runner.journal import Batch, CheckpointKey, Handed, Journal
from runner.models.stack import ClientStack
from runner.providers.priority import SERVING, TEST, ServingClaim
from runner.providers.taxonomy import InfrastructureError
from runner.schedule.admission import TEST_EPISODES_IN_FLIGHT, TestAdmission
from runner.schedule.budget_stop import BudgetStop
from runner.schedule.engine_rows import audit_row, episode_rows, stream_progress
from runner.schedule.episode import EpisodeLimits, EpisodeResult, run_episode
from runner.schedule.in_flight import EpisodesInFlight
from runner.schedule.method_errors import StreamFailure, located, stream_failure
from runner.schedule.method_time import save_times
from runner.schedule.stop_control import JudgeFactory, StopControl, offline_judge
from runner.schedule.stream_methods import Frozen, StreamMethods, close_all
from runner.schedule.stream_slots import StreamSlots
from runner.workers.failure import MethodFailure
from runner.workers.handle import MethodHandle, MethodLimits, WorkerPlan
from simulators.domain import Domain
from simulators.protocol import Task
from simulators.registry import get_domain

__all__ = ["TEST_EPISODES_IN_FLIGHT", "Engine", "JudgeFactory", "StopControl", "audit_row", "offline_judge",
           "stream_progress"]

RETRY_PAUSE_S = 2.0
CHECKPOINT_EVERY = 32
"""Serving episodes between two method checkpoints (and one at every window end). A full state after
every block cost rag 3 GB of writes over 1,272 serving episodes (bench/); in between, the journaled
episodes are the checkpoint: a resume loads the last state and replays `learn` on them."""


@dataclass
class Engine:
    run_id: str
    journal: Journal
    progress: RunProgress
    clients: ClientStack
    block_size: int
    max_episode_attempts: int
    judges: JudgeFactory = offline_judge
    stop: StopControl = field(default_factory=StopControl)
    domains: Callable[[str], Domain] = get_domain
    method_specs: Callable[[str], MethodSpec] = get_method_spec
    checkpoint_every: int = CHECKPOINT_EVERY
    limits: EpisodeLimits = field(default_factory=EpisodeLimits)
    method_plans: Callable[[str], WorkerPlan | None] = lambda name: None
    """A method's worker plan (a user's method); None: it runs in the runner's process."""
    method_limits: MethodLimits = field(default_factory=MethodLimits)
    method_shown: Callable[[str], str] = lambda name: name
    """A method's spec as its failure line names it."""
    failures: dict[str, StreamFailure] = field(default_factory=dict)
    """Streams stopped by their method, by stream id."""
    admission: TestAdmission = field(default_factory=TestAdmission)
    """When test sets start and how many test episodes run at once (`--batch tests` changes both)."""
    in_flight: EpisodesInFlight = field(default_factory=EpisodesInFlight)
    stream_slots: StreamSlots = field(default_factory=StreamSlots)  # streams holding an offline worker at once
    _unsaved: dict[str, int] = field(default_factory=dict)
    """Per stream, serving episodes learned from since its last checkpoint."""
    _handed: dict[str, Handed] = field(default_factory=dict)
    """Per stream, its last serving block handed to the writer (maybe not committed yet)."""
    methods: StreamMethods = field(init=False)
    budget_stop: BudgetStop = field(init=False)
    """Whether a new episode fits under the cap (waiting for room), each episode's start order."""

    def __post_init__(self) -> None:
        self.stop.progress = self.progress
        self.budget_stop = BudgetStop(self.run_id, self.journal, self.stop, self.clients)
        self.methods = StreamMethods(self.run_id, self.journal, self.clients, self.method_specs, self.block_size,
                                     self.method_plans, self.method_limits)

    async def run(self, streams: Sequence[Stream]) -> None:
        # What exists now (the dataset, the methods, the clients) lives for the whole run: frozen, the
        # cycle collector stops re-scanning it at every full collection (~0.1 ms CPU per model call
        # with the built-in suite loaded). Unfrozen after, so nothing made before stays uncollectable.
        gc.freeze()
        self.admission.serving_streams(len(streams))
        try:
            async with self._batches(), anyio.create_task_group() as group:
                for stream in streams:
                    bounded = self.method_plans(stream.method) is not None and self.clients.models[stream.model].offline
                    group.start_soon(self.stream_slots.run, bounded, self.progress.streams[stream.stream_id],
                                     self._run_stream, stream)
        finally:
            gc.unfreeze()

    def _batches(self) -> AbstractAsyncContextManager[object]:
        """The run's provider batches (`--batch tests`) are collected and polled while its streams run."""
        batcher = self.clients.batcher
        return batcher.running() if batcher is not None else nullcontext()

    # ----------------------------------------------------------------------------------------- stream

    async def _run_stream(self, stream: Stream) -> None:
        live = self.progress.streams[stream.stream_id]
        done = await self._done_units(stream)
        try:
            method, window_states, unsaved = await self.methods.restore(stream)
        except MethodFailure as failure:
            self.admission.served()
            await self._method_failed(stream, "restoring its method", failure)
            return
        self._unsaved[stream.stream_id] = unsaved
        try:
            async with anyio.create_task_group() as tests:
                try:
                    await self._serve_stream(stream, method, window_states, done, tests)
                except MethodFailure as failure:
                    tests.cancel_scope.cancel()  # the stream stops: its test sets too
                    await self._method_failed(stream, failure.where or "serving", failure)
                    return
                finally:
                    self.admission.served()
                await self._serving_durable(stream)  # a failed commit stops the run here, not silently
                live.phase = "testing"
        finally:
            await close_all(method, window_states)
            await save_times(self.journal, self.run_id, stream.stream_id, self.methods.times.get(stream.stream_id))
        if stream.stream_id not in self.failures:
            live.phase = "stopped" if self.stop.requested else "done"

    async def _serve_stream(self, stream: Stream, method: MethodHandle, window_states: dict[int, Frozen],
                            done: set[str], tests: anyio.abc.TaskGroup) -> None:
        live = self.progress.streams[stream.stream_id]
        with self.clients.serving_claim(stream.model) as claim:  # given back once serving is over
            for number, window in enumerate(stream.windows(), start=1):
                live.window, live.window_number = window, number
                ran = await self._serve_window(stream, method, window, done, claim)
                if ran is None:
                    break  # stopping
                if ran:
                    window_states[window] = await self.methods.freeze(stream, method)
                pending = [unit for task in window_tasks(stream.test, window)
                           for unit in stream.test_units(task) if unit.unit_id not in done]
                if pending:
                    state = await self.methods.window_state(stream, window, window_states)
                    tests.start_soon(self._run_test_set, stream, state, pending, self._handed.get(stream.stream_id),
                                     tests.cancel_scope)

    async def _method_failed(self, stream: Stream, where: str, failure: MethodFailure) -> None:
        """Stop `stream` (only it) with `method_error`, journaled; the first failure is the one told."""
        if stream.stream_id in self.failures:
            return
        told = stream_failure(stream.stream_id, stream.method, self.method_shown(stream.method), where, failure)
        self.failures[stream.stream_id] = told
        live = self.progress.streams[stream.stream_id]
        live.phase = "method_error"
        with anyio.CancelScope(shield=True):
            await self.journal.commit(told.journal_into(Batch(), self.run_id))

    async def _serve_window(self, stream: Stream, method: MethodHandle, window: int, done: set[str],
                            claim: ServingClaim) -> bool | None:
        """Serve one window's blocks; True if any ran here, None if the run is stopping."""
        ran = False
        blocks = self.methods.blocks(stream, window_tasks(stream.serving, window))
        ahead: list[str] | None = None  # the next block's contexts, when the last learn brought them
        for index, block in enumerate(blocks):
            if all(stream.unit_id(t) in done for t in block):
                continue
            if not await self._may_start(stream, len(block)):
                return None
            self.progress.streams[stream.stream_id].phase = "serving"
            following = blocks[index + 1] if index + 1 < len(blocks) else []
            ahead = await self._serve_block(stream, method, block, claim, ahead, following)
            ran = True
        return ran

    async def _serve_block(self, stream: Stream, method: MethodHandle, block: list[Task], claim: ServingClaim,
                           contexts: list[str] | None, following: list[Task]) -> list[str] | None:
        """Run, learn, journal. A block cut short (the budget ran out) is neither learned from nor
        journaled: a resume runs it again, its answered calls replayed from the response cache.
        `claim`: a slot for each episode still running, and one kept through learn and the hand-over.
        `contexts`: the block's, if the last learn brought them; `following`: the window's next block
        ([] at the window's end). Returns the next block's contexts when its learn could bring them."""
        live = self.progress.streams[stream.stream_id]
        if contexts is None:
            contexts = await located(method.contexts(block), _block_name(stream, block), live)
        results: list[EpisodeResult | None] = [None] * len(block)
        claim.hold(len(block))

        async def one(i: int) -> None:
            try:
                results[i] = await self.attempt(stream, block[i], contexts[i], SERVING)
            finally:
                claim.hold(max(1, claim.slots - 1))

        async with anyio.create_task_group() as group:
            for i in range(len(block)):
                group.start_soon(one, i)
        finished = [r for r in results if r is not None]
        if len(finished) < len(block):
            for task in block:  # not journaled: the block runs again on resume
                self.progress.streams[stream.stream_id].episode_ended(stream.unit_id(task), self.progress.clock(),
                                                                     finished=False)
            return None
        window_end = not following
        unsaved = self._unsaved.get(stream.stream_id, 0) + len(block)
        checkpoint = window_end or unsaved >= self.checkpoint_every
        # Nothing may be asked between the learn and the next block's contexts (a state, a stop) for
        # them to come in one round trip: the method sees its calls in the order it always did.
        ahead = [] if checkpoint or self.stop.requested else following
        learned = f"learn after {stream.unit_id(block[-1])}"
        try:
            next_contexts = await located(method.learn_then_contexts([r.record for r in finished], ahead),
                                          lambda f: _block_name(stream, ahead) if f.call == "context" else learned,
                                          live)
        except BudgetExhausted as exc:
            await self.budget_stop.refused(exc)
            return None
        batch = Batch(urgent=True)
        for task, result in zip(block, finished, strict=True):
            self.episode_rows(batch, stream, task, result)
        if checkpoint:
            state = orjson.dumps(await located(method.state(), f"checkpoint after {stream.unit_id(block[-1])}"))
            position = block[-1].timestamp
            batch.checkpoint(self.run_id, stream.stream_id, CheckpointKey.latest(), position, state)
            if window_end:
                batch.checkpoint(self.run_id, stream.stream_id, CheckpointKey.window_end(block[-1].window), position,
                                 state)
            unsaved = 0
        # The block before must be committed before this one is handed over: if its commit failed, this
        # one (learned on top of it) must never reach the journal without it.
        await self._serving_durable(stream)
        self._handed[stream.stream_id] = await self.journal.hand_over(batch)
        self._unsaved[stream.stream_id] = unsaved
        live.serving_done += len(block)
        for task in block:
            live.episode_ended(stream.unit_id(task), self.progress.clock())
        return next_contexts if ahead else None

    # ------------------------------------------------------------------------------------------- tests

    async def _serving_durable(self, stream: Stream) -> None:
        handed = self._handed.pop(stream.stream_id, None)
        if handed is not None:
            await handed.durable()

    async def _run_test_set(self, stream: Stream, state: Frozen, units: list[Unit], serving: Handed | None,
                            stream_scope: anyio.CancelScope) -> None:
        """`serving`: the window's last serving block, committed before any test episode of it starts, so a
        journaled test episode always has its window's serving in the journal too. A method's failure
        here stops the whole stream (`stream_scope`)."""
        if serving is not None:
            await serving.durable(observe=False)
        await self.admission.may_start(stream.model)
        window = units[0].task.window
        try:
            frozen = await self.methods.thaw(stream, state)
        except MethodFailure as failure:
            await self._method_failed(stream, f"test set of window {window}", failure)
            stream_scope.cancel()
            return
        batched = self.clients.batcher.models if self.clients.batcher is not None else frozenset()
        limiter = self.in_flight.around(self.admission.limiter(stream.model), stream.model, batched)
        live = self.progress.streams[stream.stream_id]
        try:
            try:
                # The frozen method's contexts in one request: they depend on its frozen state only, and a
                # worker's round trip per test task cost more than the offline episode it serves.
                contexts = dict(zip([u.unit_id for u in units], await frozen.contexts([u.task for u in units]),
                                    strict=True))
            finally:
                # It is asked nothing more, so its worker ends now rather than after the test episodes: a
                # test set's worker held its memory for as long as its episodes took (bench/README.md).
                await close_all(frozen, {})
        except MethodFailure as failure:
            await self._method_failed(stream, f"test set of window {window}", failure)
            stream_scope.cancel()
            return

        async def one(unit: Unit) -> None:
            async with limiter:
                if not await self._may_start(stream, 1, stream.model in batched):
                    return
                context = contexts.pop(unit.unit_id)  # a finished episode keeps no context in memory
                result = await self.attempt(stream, unit.task, context, TEST, unit.unit_id)
                if result is None:
                    return
                batch = Batch()
                self.episode_rows(batch, stream, unit.task, result, unit.unit_id)
                await self.journal.commit(batch)
                live.record_test(unit.task.category, result.grade.reward)
                live.episode_ended(unit.unit_id, self.progress.clock())

        async with anyio.create_task_group() as group:
            for unit in units:
                group.start_soon(one, unit)

    # ---------------------------------------------------------------------------------------- episodes

    async def attempt(self, stream: Stream, task: Task, context: str, priority: int,
                       unit_id: str | None = None) -> EpisodeResult | None:
        """Run an episode. A provider failure's class decides what follows (runner.providers.taxonomy): the
        episode runs again only when the class says so and its failed request still has attempts left
        (the same body would be sent again), else the run stops with the class's message. None: the
        budget cap stopped it before a call was sent (the run then stops dispatching)."""
        unit_id = unit_id or stream.unit_id(task)
        age = self.budget_stop.spend.begin()
        token = EPISODE_AGE.set(age)  # its calls wait for budget room in the order episodes started
        result = None
        try:
            result = await self._attempt_episode(stream, task, context, priority, unit_id)
        finally:
            EPISODE_AGE.reset(token)
            self.budget_stop.spend.ended(age, finished=result is not None)
        if result is None:
            self.progress.streams[stream.stream_id].episode_ended(unit_id, self.progress.clock(), finished=False)
        return result

    async def _attempt_episode(self, stream: Stream, task: Task, context: str, priority: int,
                               unit_id: str) -> EpisodeResult | None:
        domain = self.domains(stream.scenario.domain)
        live = self.progress.streams[stream.stream_id]
        for attempt in range(1, self.max_episode_attempts + 1):
            try:
                model = self.clients.client(stream.model, unit_id, stream.stream_id, "agent", priority,
                                            stream.sampling_seed)
                judge = self.judges(stream, unit_id, priority)
                return await run_episode(task, stream.scenario.environment, domain, model, context, judge,
                                         self.limits)
            except BudgetExhausted as exc:
                await self.budget_stop.refused(exc)
                return None
            except InfrastructureError as exc:
                if exc.policy.outcome != "requeue" or exc.attempts_left <= 0 or attempt == self.max_episode_attempts:
                    raise RunAborted(f"{unit_id}: {exc.headline(resume_command(self.run_id, self.journal))}") from exc
                self.progress.episodes_requeued += 1
                live.episode_ended(unit_id, self.progress.clock(), finished=False)  # its turns start over
                await anyio.sleep(RETRY_PAUSE_S * attempt)
        raise AssertionError("unreachable")

    async def _may_start(self, stream: Stream, episodes: int, batched: bool = False) -> bool:
        """Whether `episodes` new episodes of `stream` may start: not stopping, its method not failed, and
        room under the cap for them beside the episodes in flight (`batched`: test episodes in batches)."""
        if self.stop.requested or stream.stream_id in self.failures:
            return False
        return await self.budget_stop.may_start(episodes, lambda: stream.stream_id not in self.failures, batched)

    def episode_rows(self, batch: Batch, stream: Stream, task: Task, result: EpisodeResult,
                     unit_id: str | None = None) -> None:
        """Public, with `attempt` and `build_method`: bench/reference.py drives these same pieces."""
        episode_rows(batch, self.run_id, stream, task, result, unit_id)

    # ------------------------------------------------------------------------------------------ method

    def build_method(self, stream: Stream) -> Method:
        """The stream's method as the engine builds it (bulletins for Oracle, a learner's cache scope)."""
        return self.methods.build(stream)

    async def method_as_of(self, stream: Stream, task: Task) -> MethodHandle:
        """The method as it was when `task` ran (an audit's replay asks); the caller closes it."""
        return await self.methods.as_of(stream, task)

    async def _done_units(self, stream: Stream) -> set[str]:
        return await self.journal.read.done_units(self.run_id, stream.stream_id)


def _block_name(stream: Stream, block: Sequence[Task]) -> str:
    """Where a block's contexts were asked, as a failure line names it."""
    last = f" .. {stream.unit_id(block[-1])}" if len(block) > 1 else ""
    return f"block {stream.unit_id(block[0])}{last}"
