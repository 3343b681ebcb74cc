"""Play a small stream for `methods check`: serving episodes in order, in blocks of the method's size,
with the method learning after each block; every record, context and model call kept, so each check
replays the blocks on fresh instances without running an episode again.

The method is built as a run builds it (`runner.schedule.stream_methods.method_setup`), its own model calls go
through a `MeteredClient` that counts calls and tokens per block, and the agent's calls are counted
per episode, so the check can say what the method costs before a sweep pays for it. Each context's
and each learn's seconds are kept for the time check, and a line per window says how far it got.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field

from methods.base import Method, MethodSpec, context_for
from runner.config.plan import serving_blocks, window_tasks
from runner.schedule.episode import run_episode
from runner.schedule.stream_methods import method_setup
from simulators.domain import Domain
from simulators.model_api import ModelClient, ModelRequest, ModelResponse
from simulators.protocol import Scenario, Task
from simulators.record import EpisodeRecord

__all__ = ["Block", "MeteredClient", "Played", "play"]


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
    blocks: list[Block] = field(default_factory=list)
    tests: tuple[Task, ...] = ()
    agent_calls: int = 0
    agent_tokens: int = 0
    contexts: list[tuple[Task, str]] = field(default_factory=list)
    """Every context the stream asked (serving tasks live, test tasks on the window's frozen copy)."""
    context_s: list[float] = field(default_factory=list)
    learn_s: list[float] = field(default_factory=list)

    def fresh(self) -> Method:
        """A new instance as a run builds it; its model calls are not counted."""
        return self.spec.build(method_setup(self.spec, self.scenario, MeteredClient(self.model)))

    def timed_context(self, method: Method, task: Task) -> str:
        started = time.perf_counter()
        text = context_for(method, task)
        self.context_s.append(time.perf_counter() - started)
        return text

    def tests_of(self, window: int) -> list[Task]:
        return window_tasks(self.tests, window)


async def play(spec: MethodSpec, scenario: Scenario, domain: Domain, model: ModelClient, block_size: int,
               serving: tuple[Task, ...], tests: tuple[Task, ...],
               freeze: Callable[[Played, Method], Method], say: Callable[[str], None] = print) -> Played:
    played = Played(spec, scenario, model, block_size, tests=tests)
    method_client = MeteredClient(model)
    method = spec.build(method_setup(spec, scenario, method_client))
    agent = MeteredClient(model)
    windows = sorted({t.window for t in serving} | {t.window for t in tests})
    for window in windows:
        blocks = serving_blocks(window_tasks(serving, window), block_size) if spec.learns else []
        for index, tasks in enumerate(blocks):
            contexts = [played.timed_context(method, task) for task in tasks]
            played.contexts += list(zip(tasks, contexts, strict=True))
            records = [(await run_episode(task, scenario.environment, domain, agent, context)).record
                       for task, context in zip(tasks, contexts, strict=True)]
            calls, tokens = method_client.calls, method_client.input_tokens + method_client.output_tokens
            started = time.perf_counter()
            await method.learn(records)
            played.learn_s.append(time.perf_counter() - started)
            played.blocks.append(Block(tuple(tasks), tuple(records), index == len(blocks) - 1,
                                       method_client.calls - calls,
                                       method_client.input_tokens + method_client.output_tokens - tokens))
        frozen = freeze(played, method)
        played.contexts += [(task, played.timed_context(frozen, task)) for task in played.tests_of(window)]
        say(f"  played window {window}: {len(played.blocks)} blocks learned, {len(played.contexts)} contexts asked")
    played.agent_calls, played.agent_tokens = agent.calls, agent.input_tokens + agent.output_tokens
    return played
