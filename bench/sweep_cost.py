"""What a full sweep costs: a pilot against the loopback mock with the suite's real turn counts and the
mock's prompt-cache accounting, then the full sweep projected for three priced models, with and without
caching.

The mock answers as the offline scripted agent would (each request's conversation is read back from its
body and given to `ScriptedAgent`), so every episode takes the turns the built-in suite really takes,
and the mock bills the prompt as the provider's cache would: Anthropic's breakpoints (the runner's rolling
marks) on one endpoint, OpenAI's automatic prefixes on the other. The run is a real `shiftbench run
--pilot N` (probe, journal, pricing); the projection is `shiftbench estimate`'s, choosing for each priced
model the endpoint that speaks its provider's dialect:

    python -m bench.sweep_cost [--pilot 2] [--methods blind,rag] [--suite DIR] [--json FILE]

Token counts are the mock's (one token per four bytes of JSON), not a real tokenizer's: the projection is
as good as that approximation, and a real pilot (`shiftbench run --pilot 3 --models ...` then
`shiftbench estimate`) replaces it with the provider's own counts.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from collections.abc import Mapping, Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any

import anyio
import orjson

from bench.mock_cache import PrefixCache
from bench.mock_provider import Call, MockUsage, Recorded, Reply, Response, serve_mock
from methods.registry import get_method_spec
from runner.config.plan import plan_streams
from runner.config.prices import Price
from runner.config.settings import SweepConfig
from runner.cost.estimate import full_counts, measure
from runner.cost.pricing import default_prices
from runner.cost.projection import ProjectedRow, project
from runner.journal import read_only
from runner.schedule.sweep import start_sweep
from simulators.dataset import load_dataset
from simulators.protocol import SCENARIOS, Message, ToolCall
from simulators.registry import get_domain
from simulators.scripted import ScriptedAgent
from simulators.suite import build_suite

__all__ = ["TARGETS", "main", "pilot_run", "scripted_responder"]

ANTHROPIC, OPENAI = "mock-anthropic", "mock-openai"
TARGETS = {
    "anthropic:claude-sonnet-4-5": ANTHROPIC,
    "openai:gpt-5-mini": OPENAI,
    "openrouter:deepseek/deepseek-chat-v3.1": OPENAI,
}
"""Each priced model and the mock endpoint whose dialect (and so whose prompt caching) it speaks."""


# ------------------------------------------------------------------------------ the scripted mock

def scripted_responder() -> Any:
    """A mock responder answering each request as the scripted agent would, in either dialect."""
    agents = {name: ScriptedAgent(get_domain(name)) for name in ("retail", "banking", "pitch")}

    def respond(request: Recorded) -> Response:
        tools = [name for name, _ in request.tools()]
        prompt = max(1, len(request.raw) // 4)
        if not tools:
            return Reply(text="ok", usage=MockUsage(prompt, 1))
        domain = "banking" if "get_case_details" in tools else "retail" if "get_order_details" in tools else "pitch"
        system, messages = _conversation(request)
        turn = agents[domain].respond(system, messages, tools)
        calls = tuple(Call(c.name, orjson.loads(c.arguments), c.id) for c in turn.tool_calls)
        written = len(turn.reasoning) + sum(len(c.arguments) + len(c.name) for c in turn.tool_calls)
        return Reply(text=turn.reasoning, tool_calls=calls, usage=MockUsage(prompt, max(1, written // 4)))

    return respond


def _conversation(request: Recorded) -> tuple[str, list[Message]]:
    body = request.body if isinstance(request.body, dict) else {}
    if request.dialect == "anthropic":
        return _text(body.get("system")), [m for raw in body.get("messages", []) for m in _anthropic(raw)]
    messages = body.get("messages", [])
    system = "\n".join(_text(m.get("content")) for m in messages if m.get("role") in ("system", "developer"))
    return system, [_openai(m) for m in messages if m.get("role") in ("user", "assistant", "tool")]


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(_text(block.get("text", block.get("content", ""))) for block in content
                         if isinstance(block, dict))
    return ""


def _anthropic(raw: Mapping[str, Any]) -> list[Message]:
    content = raw.get("content")
    if isinstance(content, str):
        return [Message(raw["role"], content)]
    if raw["role"] == "assistant":
        calls = tuple(ToolCall(b["id"], b["name"], orjson.dumps(b.get("input", {})).decode())
                      for b in content if b.get("type") == "tool_use")
        text = "".join(b.get("text", "") for b in content if b.get("type") == "text")
        return [Message("assistant", text, tool_calls=calls)]
    found = [Message("tool", _text(b.get("content")), tool_call_id=b["tool_use_id"])
             for b in content if b.get("type") == "tool_result"]
    text = "".join(b.get("text", "") for b in content if b.get("type") == "text")
    return found + ([Message("user", text)] if text else [])


def _openai(raw: Mapping[str, Any]) -> Message:
    if raw["role"] == "assistant":
        calls = tuple(ToolCall(c["id"], c["function"]["name"], c["function"]["arguments"])
                      for c in raw.get("tool_calls") or ())
        return Message("assistant", _text(raw.get("content")), tool_calls=calls)
    if raw["role"] == "tool":
        return Message("tool", _text(raw.get("content")), tool_call_id=raw.get("tool_call_id", ""))
    return Message("user", _text(raw.get("content")))


# --------------------------------------------------------------------------------- the pilot

async def pilot_run(suite: Path, journal: Path, pilot: int, methods: Sequence[str],
                    scenarios: Sequence[str] = SCENARIOS) -> tuple[str, PrefixCache]:
    prices = default_prices()
    cache = PrefixCache()
    async with serve_mock(scripted_responder(), cache=cache) as mock:
        config = SweepConfig(
            models=(ANTHROPIC, OPENAI), methods=tuple(methods), scenarios=tuple(scenarios), dataset=str(suite),
            pilot=pilot,
            concurrency=16, endpoints={
                ANTHROPIC: {"kind": "anthropic", "model": "claude-mock", "base_url": mock.base_url},
                OPENAI: {"kind": "openai-compatible", "model": "mock", "base_url": f"{mock.base_url}/v1"}},
            prices={ANTHROPIC: _table(prices["anthropic:claude-sonnet-4-5"]),
                    OPENAI: _table(prices["openai:gpt-5-mini"])})
        outcome = await start_sweep(config, journal, "none", lambda _: None)
    if outcome.status != "completed":
        raise SystemExit(f"the pilot ended {outcome.status}: {outcome.reason}")
    return outcome.run_id, cache


def _table(price: Price) -> dict[str, Any]:
    """A price as a sweep file's [prices] table gives it (an optional rate left out when unset, a batch
    tier as its own sub-table)."""
    return {name: _table(getattr(price, name)) if name == "batch" else value
            for name, value in asdict(price).items() if value is not None}


async def projections(suite: Path, journal: Path, run_id: str, methods: Sequence[str]) -> list[ProjectedRow]:
    dataset = load_dataset(suite, only=SCENARIOS)
    streams = plan_streams(list(TARGETS), methods, [dataset.scenarios[n] for n in SCENARIOS],
                           learns=lambda name: get_method_spec(name).learns)
    counts = full_counts(streams)
    async with read_only(journal) as reader:
        measures = await measure(reader, run_id)
    prices = default_prices()
    return [project(measures[(source, method)], model, method, source, counts.get(method, {}), prices)
            for model, source in TARGETS.items() for method in methods]


def render(rows: Sequence[ProjectedRow]) -> str:
    lines = ["| model | method | episodes | turns / episode | cache hit | with caching (95% range) | "
             "without caching | saved |", "|---|---|---:|---:|---:|---:|---:|---:|"]
    for r in rows:
        saved = 1 - r.projected_usd / r.uncached_usd if r.uncached_usd else 0.0
        hit = "-" if r.hit_rate is None else f"{100 * r.hit_rate:.0f}%"
        lines.append(f"| {r.model} | {r.method} | {r.episodes:,} | {r.turns_per_episode:.1f} | {hit} | "
                     f"${r.projected_usd:,.2f} (${r.low_usd:,.2f} - ${r.high_usd:,.2f}) | ${r.uncached_usd:,.2f} | "
                     f"{100 * saved:.0f}% |")
    for model in dict.fromkeys(r.model for r in rows):
        mine = [r for r in rows if r.model == model]
        cached, plain = sum(r.projected_usd for r in mine), sum(r.uncached_usd for r in mine)
        lines.append(f"| **{model}** | all | {sum(r.episodes for r in mine):,} | | | **${cached:,.2f}** | "
                     f"${plain:,.2f} | {100 * (1 - cached / plain) if plain else 0:.0f}% |")
    return "\n".join(lines)


async def run(pilot: int, methods: Sequence[str], suite: Path | None) -> dict[str, Any]:
    os.environ.setdefault("ANTHROPIC_API_KEY", "sk-ant-loopback-bench")
    with tempfile.TemporaryDirectory() as tmp:
        if suite is None:
            suite = Path(tmp) / "suite"
            build_suite(suite, seed=0)
        started = time.monotonic()
        load = os.getloadavg()[0]
        run_id, cache = await pilot_run(suite, Path(tmp) / "pilot.sqlite", pilot, methods)
        rows = await projections(suite, Path(tmp) / "pilot.sqlite", run_id, methods)
    seconds = time.monotonic() - started
    calls = len(cache.billed)
    print(f"Pilot: --pilot {pilot}, methods {', '.join(methods)}, nine scenarios, {calls:,} mock calls in "
          f"{seconds:.0f} s (load average {load:.1f} at start, {os.getloadavg()[0]:.1f} at end)\n")
    print(render(rows))
    return {"pilot": pilot, "methods": list(methods), "calls": calls, "seconds": seconds, "load_average": load,
            "rows": [asdict(r) for r in rows]}


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.sweep_cost", description=__doc__.split("\n\n")[0])
    parser.add_argument("--pilot", type=int, default=2, help="tasks per window and phase in the pilot (default 2)")
    parser.add_argument("--methods", default="blind,rag", help="methods, comma-separated (default blind,rag)")
    parser.add_argument("--suite", type=Path, help="an already built suite (default: build seed 0)")
    parser.add_argument("--json", type=Path, help="also write the rows here")
    args = parser.parse_args(argv)
    methods = [m.strip() for m in args.methods.split(",") if m.strip()]
    result = anyio.run(run, args.pilot, methods, args.suite)
    if args.json is not None:
        args.json.write_bytes(orjson.dumps(result, option=orjson.OPT_INDENT_2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
