"""Play a small stream for `methods check`: serving episodes in order, in blocks of the method's size,
with the method learning after each block; every record, context and model call kept, so each check
replays the blocks on fresh instances without running an episode again.

Every instance is a `MethodHandle` opened where a run would run it: a user's method in a worker of its
own (the run's boundary, environment and limits: a loop past its limit, an `os._exit`, a flood of
output end that worker, never the check), shiftbench's own in this process. The method's own model
calls go through a `MeteredClient` that counts calls and tokens per block, and the agent's calls are
counted per episode, so the check can say what the method costs before a sweep pays for it. Each
context's and each learn's seconds are kept for the time check, and a line per window says how far it got.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

import orjson

from methods.base import MethodSpec
from runner.config.plan import serving_blocks, window_tasks
from runner.schedule.episode import run_episode
from runner.workers.handle import MethodHandle
from simulators.domain import Domain
from simulators.model_api import ModelClient, ModelRequest, ModelResponse
from simulators.protocol import Scenario, Task
from simulators.record import EpisodeRecord

__all__ = ["Block", "MeteredClient", "Opener", "Played", "freeze", "play"]


@dataclass
class MeteredClient:
    """A client that counts what passes through it."""

    inner: ModelClient
    calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0

    @property
    def name(self) -> str:
        return self.inner.name

    async def respond(self, request: ModelRequest) -> ModelResponse:
        response = await self.inner.respond(request)
        self.calls += 1
        self.input_tokens += response.usage.input_tokens
        self.output_tokens += response.usage.output_tokens
        return response


Opener = Callable[[ModelClient], Awaitable[MethodHandle]]
"""A fresh instance of the checked method, its model calls through the client given."""


@dataclass(frozen=True)
class Block:
    tasks: tuple[Task, ...]
    records: tuple[EpisodeRecord, ...]
    window_end: bool
    method_calls: int
    method_tokens: int


@dataclass
class Played:
    spec: MethodSpec
    scenario: Scenario
    model: ModelClient
    block_size: int
    opener: Opener
    blocks: list[Block] = field(default_factory=list)
    tests: tuple[Task, ...] = ()
    agent_calls: int = 0
    agent_tokens: int = 0
    contexts: list[tuple[Task, str]] = field(default_factory=list)
    """Every context the stream asked (serving tasks live, test tasks on the window's frozen copy)."""
    context_s: list[float] = field(default_factory=list)
    learn_s: list[float] = field(default_factory=list)
    boundary: str = ""
    opened: list[MethodHandle] = field(default_factory=list)

    async def fresh(self) -> MethodHandle:
        """A new instance as a run builds it (its model calls not counted), closed by `close_all`."""
        handle = await self.opener(MeteredClient(self.model))
        self.opened.append(handle)
        return handle

    async def close_all(self) -> None:
        """End every instance opened so far (their workers with them)."""
        opened, self.opened = self.opened, []
        for handle in reversed(opened):
            await handle.close()

    def tests_of(self, window: int) -> list[Task]:
        return window_tasks(self.tests, window)


async def context(method: MethodHandle, task: Task) -> str:
    (text,) = await method.contexts([task])
    return text


def copies(played: Played) -> bool:
    return played.spec.snapshot == "copy"


async def freeze(played: Played, method: MethodHandle) -> MethodHandle:
    """The method frozen as a run freezes it for a test set: a deep copy, or a new instance loaded."""
    if copies(played):
        frozen = await method.copy()
        played.opened.append(frozen)
        return frozen
    twin = await played.fresh()
    await twin.load(orjson.loads(orjson.dumps(await method.state())))
    return twin


async def play(spec: MethodSpec, scenario: Scenario, domain: Domain, model: ModelClient, block_size: int,
               serving: tuple[Task, ...], tests: tuple[Task, ...], opener: Opener,
               say: Callable[[str], None] = print) -> Played:
    played = Played(spec, scenario, model, block_size, opener, tests=tests)
    try:
        return await _played(played, domain, serving, say)
    finally:  # the checks open instances of their own
        await played.close_all()


async def _played(played: Played, domain: Domain, serving: tuple[Task, ...], say: Callable[[str], None]) -> Played:
    spec, scenario, model, tests = played.spec, played.scenario, played.model, played.tests
    method_client = MeteredClient(model)
    method = await played.opener(method_client)
    played.opened.append(method)
    played.boundary = method.boundary
    agent = MeteredClient(model)
    windows = sorted({t.window for t in serving} | {t.window for t in tests})
    for window in windows:
        blocks = serving_blocks(window_tasks(serving, window), played.block_size) if spec.learns else []
        for index, tasks in enumerate(blocks):
            contexts = await method.contexts(tasks)
            played.contexts += list(zip(tasks, contexts, strict=True))
            records = [(await run_episode(task, scenario.environment, domain, agent, text)).record
                       for task, text in zip(tasks, contexts, strict=True)]
            calls, tokens = method_client.calls, method_client.input_tokens + method_client.output_tokens
            await method.learn(records)
            played.blocks.append(Block(tuple(tasks), tuple(records), index == len(blocks) - 1,
                                       method_client.calls - calls,
                                       method_client.input_tokens + method_client.output_tokens - tokens))
        frozen = await freeze(played, method)
        asked = played.tests_of(window)
        played.contexts += list(zip(asked, await frozen.contexts(asked), strict=True))
        if frozen.times is not method.times:
            played.context_s += frozen.times.context_s
        say(f"  played window {window}: {len(played.blocks)} blocks learned, {len(played.contexts)} contexts asked")
    played.context_s += method.times.context_s
    played.learn_s += method.times.learn_s
    played.agent_calls, played.agent_tokens = agent.calls, agent.input_tokens + agent.output_tokens
    return played
