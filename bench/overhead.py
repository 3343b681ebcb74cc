"""Benchmark 3: what the client stack adds to each model call.

The stack (runner/models/stack.py) wraps the provider client in, outermost first, the journal
(response-cache lookup, then the call and its response journaled in one commit), the gate (priority
limiters) and the price (a reservation against the budget). Measured, in microseconds per call:

- over an instant in-process client (returns a fixed tool call), so only the wrappers are timed: raw,
  each layer alone, the whole stack on a cache miss and on a cache hit;
- the journal's two round trips alone (a cache lookup, a one-row commit);
- over the real OpenAI-compatible client against the loopback mock (own process, no delay): raw vs
  the whole stack, one caller at a time and 32 callers at once (per call = wall / calls).

Every stack call on a miss is a new unit id, as an episode's turns are (each turn's request differs).
The request is a banking_l1 first turn: its system prompt, its 7 tools and the task's instruction.
"""

from __future__ import annotations

import importlib.util
import tempfile
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path

import anyio

from bench.mock_server import mock_process
from bench.section import Row, Section
from runner.config.prices import Price
from runner.config.settings import SweepConfig
from runner.cost.budget import Budget
from runner.cost.pricing import with_overrides
from runner.display.progress import RunProgress
from runner.journal import Batch, Journal, open_journal
from runner.models.gate import Gate, GatedModel
from runner.models.journaled import JournaledModel
from runner.models.priced import PricedModel
from runner.models.registry import ModelEntry, build_models, close_models, model_prices
from runner.models.stack import ClientStack
from runner.providers.priority import SERVING, PriorityLimiter
from simulators.dataset import load_dataset
from simulators.model_api import ModelClient, ModelRequest, ModelResponse, Usage
from simulators.protocol import AssistantTurn, Message, ToolCall

__all__ = ["run_overhead"]

PRICE = {"input": 1.0, "cached_input": 0.25, "cache_write": 1.25, "output": 4.0}
CALLERS = 32
ROUNDS = 5
COLUMNS = ["client", "callers", "calls", "us_per_call", "overhead_us"]
Call = Callable[[int], Awaitable[object]]


class InstantModel:
    """Answers at once with one tool call and some usage: the cost of the model is ~0."""

    name = "instant"
    _response = ModelResponse(AssistantTurn(tool_calls=(ToolCall("call_1", "get_account", '{"account_id": "x"}'),)),
                              Usage(input_tokens=1200, output_tokens=30))

    async def respond(self, request: ModelRequest) -> ModelResponse:
        return self._response


def _request(suite: Path) -> ModelRequest:
    scenario = load_dataset(suite, only=("banking_l1",)).scenarios["banking_l1"]
    task = scenario.test[0]
    return ModelRequest(system=scenario.environment.system_prompt, messages=(Message("user", task.instruction),),
                        tools=scenario.environment.tools, domain=task.domain)


@dataclass
class Case:
    client: str
    callers: int
    call: Call
    raw: str | None = None
    """The case whose time this one's overhead is counted against (None: not counted)."""
    seconds: float = 0.0
    calls: int = 0

    def row(self, by_name: dict[tuple[str, int], Case]) -> Row:
        us = 1e6 * self.seconds / self.calls
        baseline = by_name.get((self.raw, self.callers)) if self.raw else None
        overhead = None if baseline is None else us - 1e6 * baseline.seconds / baseline.calls
        return {"client": self.client, "callers": self.callers, "calls": self.calls, "us_per_call": round(us, 1),
                "overhead_us": None if overhead is None else round(overhead, 1)}


async def _run(call: Call, first: int, count: int, callers: int) -> float:
    """Seconds for calls first .. first+count-1 with `callers` of them in flight."""
    started = time.perf_counter()
    if callers == 1:
        for i in range(first, first + count):
            await call(i)
    else:
        limiter = anyio.CapacityLimiter(callers)

        async def one(i: int) -> None:
            async with limiter:
                await call(i)

        async with anyio.create_task_group() as group:
            for i in range(first, first + count):
                group.start_soon(one, i)
    return time.perf_counter() - started


async def _interleaved(cases: list[Case], calls: int) -> list[Row]:
    """Every case in ROUNDS rounds, round-robin, so that a machine that changes pace mid-run (this VM's
    thread hops do) weighs on every case alike; each case warmed up first (connections, caches)."""
    for case in cases:
        await _run(case.call, -1_000, 20, case.callers)
    per_round = max(1, calls // ROUNDS)
    for round_ in range(ROUNDS):
        for case in cases:
            case.seconds += await _run(case.call, round_ * per_round, per_round, case.callers)
            case.calls += per_round
    by_name = {(case.client, case.callers): case for case in cases}
    return [case.row(by_name) for case in cases]


def _gate(progress: RunProgress) -> Gate:
    return Gate(PriorityLimiter(64), PriorityLimiter(32), progress)


def _stack(journal: Journal, entry: ModelEntry, price: Price | None, budget: Budget | None) -> ClientStack:
    return ClientStack(run_id="bench", journal=journal, progress=RunProgress("bench", str(journal.path)),
                       models={entry.name: entry}, prices={entry.name: price}, budget=budget, concurrency=64,
                       model_concurrency=64)


def _via_stack(stack: ClientStack, model: str, request: ModelRequest, unit: str) -> Call:
    def call(i: int) -> Awaitable[object]:
        return stack.client(model, f"{unit}|{i}", "bench|stream", "agent", SERVING).respond(request)
    return call


def _direct(client: ModelClient, request: ModelRequest) -> Call:
    def call(i: int) -> Awaitable[object]:
        return client.respond(request)
    return call


async def _in_process_rows(journal: Journal, request: ModelRequest, calls: int) -> list[Row]:
    """The wrappers over an instant client, each layer alone and the whole stack; the journal's two
    round trips alone (the cache lookup, a one-row commit)."""
    instant = InstantModel()
    price = with_overrides({"instant": PRICE}, "bench")["instant"]
    progress = RunProgress("bench", str(journal.path))
    stack = _stack(journal, ModelEntry("instant", instant, offline=False), price, Budget(1e9))
    hits = _via_stack(stack, "instant", request, "hit")
    await hits(0)  # answered once: every later call with unit hit|0 replays it

    def journaled(i: int) -> Awaitable[object]:
        return JournaledModel(instant, journal, "bench", f"journaled|{i}", "bench|stream").respond(request)

    def lookup(i: int) -> Awaitable[object]:
        return journal.read.cached_answers("bench", f"absent{i}")

    def commit(i: int) -> Awaitable[None]:
        return journal.commit(Batch().set_meta(f"bench{i % 100}", "x"))

    raw = "instant, raw"
    return await _interleaved([
        Case(raw, 1, _direct(instant, request), raw),
        Case("instant + gate", 1, _direct(GatedModel(instant, _gate(progress), SERVING), request), raw),
        Case("instant + price (budget)", 1, _direct(PricedModel(instant, price, Budget(1e9), progress), request), raw),
        Case("instant + journal (miss)", 1, journaled, raw),
        Case("instant, whole stack (miss)", 1, _via_stack(stack, "instant", request, "miss"), raw),
        Case("instant, whole stack (hit)", 1, lambda i: hits(0), raw),
        Case(raw, CALLERS, _direct(instant, request), raw),
        Case("instant, whole stack (miss)", CALLERS, _via_stack(stack, "instant", request, "many"), raw),
        Case("journal: cache lookup (one unit's answers)", 1, lookup),
        Case("journal: commit of one row", 1, commit),
    ], calls)


async def _http_rows(journal: Journal, request: ModelRequest, calls: int) -> list[Row]:
    """Raw vs stack over the OpenAI-compatible client and the mock (own process, no delay)."""
    async with mock_process(0.0, 3) as base_url:
        endpoint = {"kind": "openai-compatible", "model": "mock", "base_url": f"{base_url}/v1", "max_concurrency": 64}
        config = SweepConfig(models=("mock",), endpoints={"mock": endpoint}, prices={"mock": PRICE})
        models = build_models(config)
        try:
            entry = models["mock"]
            stack = _stack(journal, entry, model_prices(config, models)["mock"], Budget(1e9))
            raw = "http mock, raw"
            cases = []
            for callers in (1, CALLERS):
                cases += [Case(raw, callers, _direct(entry.client, request), raw),
                          Case("http mock, whole stack (miss)", callers,
                               _via_stack(stack, "mock", request, f"http{callers}"), raw)]
            return await _interleaved(cases, calls)
        finally:
            await close_models(models)


async def run_overhead(suite: Path, mode: str) -> Section:
    calls, http_calls = {"full": (3000, 1500), "quick": (600, 300), "smoke": (30, 20)}[mode]
    section = Section("client stack overhead per call",
                      "Microseconds per model call; overhead_us = minus the raw client of the same group "
                      f"(and the same callers). A miss journals the call and its response (one commit). Cases "
                      f"interleaved in {ROUNDS} rounds.", COLUMNS)
    started = time.perf_counter()
    request = _request(suite)
    with tempfile.TemporaryDirectory(prefix="shiftbench-overhead-") as tmp:
        async with open_journal(Path(tmp) / "overhead.sqlite") as journal:
            section.rows += await _in_process_rows(journal, request, calls)
            section.rows += await _http_rows(journal, request, http_calls)
    section.seconds = time.perf_counter() - started
    if importlib.util.find_spec("sniffio") is None:
        section.notes.append("sniffio is not installed: httpcore's current_async_library() retries `import sniffio` "
                             "(a failed import that searches sys.path) about 11 times a request")
    return section
