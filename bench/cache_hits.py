"""Prompt-cache hit rates of pilot sweeps against the loopback mock's prefix cache, per provider dialect
and method, and what they cost against the same tokens uncached.

    python -m bench.cache_hits [--suite DIR] [--pilot N] [--turns T]

Each row is one real pilot sweep (`start_sweep`: probe, client stack, journal) of one method on
banking_l1 and retail_l1, through the real Anthropic or OpenAI client, against the mock with
`PrefixCache` (bench/mock_cache.py: Anthropic breakpoints and lookback, OpenAI's automatic 1,024-token
prefixes). Every episode makes T-1 tool calls, then finishes (T turns). Columns:
  hit      cached / input tokens over the sweep's calls
  later    the same over turns 2..T of each episode (what the rolling breakpoint reads)
  first    the same over each episode's first turn (what the stream's episodes share: tools,
           documents and the method's context)
  write    cache-write tokens / input tokens
  cost     priced at claude-sonnet-4-5's rates (Anthropic) or gpt-4.1's (OpenAI), in USD
  uncached the same tokens at the input rate
The mock counts 4 bytes a token and never expires an entry, so these are the layout's hit rates, not a
provider's (whose entries expire after their TTL, and whose tokenizer differs).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path

from bench.mock_cache import Billed, PrefixCache
from bench.mock_provider import Recorded, serve_mock, tool_loop
from runner.config.prices import Price
from runner.config.settings import SweepConfig
from runner.cost.pricing import default_prices
from runner.schedule.sweep import start_sweep
from simulators.suite import build_suite

__all__ = ["Hits", "measure"]

SCENARIOS = ("banking_l1", "retail_l1")
METHODS = ("blind", "oracle", "tabular", "rag")
PRICED = {"anthropic": "anthropic:claude-sonnet-4-5", "openai": "openai:gpt-4.1"}


@dataclass(frozen=True)
class Hits:
    dialect: str
    method: str
    calls: int
    hit: float
    later: float
    first: float
    write: float
    cost_usd: float
    uncached_usd: float


def _rate(billed: list[Billed], attr: str) -> float:
    total = sum(b.input_tokens for b in billed)
    return sum(getattr(b, attr) for b in billed) / total if total else 0.0


def _cost(billed: list[Billed], price: Price, output_tokens: int) -> tuple[float, float]:
    cost = sum((b.input_tokens - b.cached_tokens - b.cache_write_tokens) * price.input
               + b.cached_tokens * price.cached_input
               + (b.cache_write_tokens - b.cache_write_1h_tokens) * price.cache_write
               + b.cache_write_1h_tokens * price.one_hour_write + output_tokens * price.output for b in billed)
    uncached = sum(b.input_tokens * price.input + output_tokens * price.output for b in billed)
    return cost / 1e6, uncached / 1e6


async def measure(suite: Path, dialect: str, method: str, pilot: int, turns: int) -> Hits:
    cache = PrefixCache()
    kind = "anthropic" if dialect == "anthropic" else "openai"
    price = default_prices()[PRICED[dialect]]
    with tempfile.TemporaryDirectory() as tmp:
        async with serve_mock(tool_loop(calls_before_finish=turns - 1), cache=cache) as mock:
            base_url = mock.base_url if kind == "anthropic" else mock.base_url + "/v1"
            config = SweepConfig(models=("m",), methods=(method,), scenarios=SCENARIOS, dataset=str(suite),
                                 pilot=pilot, endpoints={"m": {"kind": kind, "model": "mock", "base_url": base_url}},
                                 prices={"m": {"input": price.input, "cached_input": price.cached_input,
                                               "cache_write": price.cache_write, "output": price.output,
                                               "cache_write_1h": price.one_hour_write}})
            outcome = await start_sweep(config, Path(tmp) / "j.sqlite", "none", lambda text: None)
    if outcome.status != "completed":
        raise SystemExit(f"{dialect}/{method}: the sweep ended {outcome.status}")
    agent = [(r, b) for r, b in zip(mock.requests, cache.billed, strict=True) if _has_tools(r)]
    billed = [b for _, b in agent]
    first = [b for r, b in agent if r.tool_results() == 0]
    later = [b for r, b in agent if r.tool_results() > 0]
    cost, uncached = _cost(billed, price, 20)
    return Hits(dialect, method, len(billed), _rate(billed, "cached_tokens"), _rate(later, "cached_tokens"),
                _rate(first, "cached_tokens"), _rate(billed, "cache_write_tokens"), cost, uncached)


def _has_tools(request: Recorded) -> bool:
    return bool(request.body.get("tools")) if isinstance(request.body, dict) else False


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--suite", type=Path, help="the built-in suite (built into a temporary folder if omitted)")
    parser.add_argument("--pilot", type=int, default=2)
    parser.add_argument("--turns", type=int, default=10)
    args = parser.parse_args()
    os.environ.setdefault("ANTHROPIC_API_KEY", "sk-loopback-mock")
    os.environ.setdefault("OPENAI_API_KEY", "sk-loopback-mock")
    with tempfile.TemporaryDirectory() as tmp:
        suite = args.suite
        if suite is None:
            suite = Path(tmp) / "suite"
            build_suite(suite, seed=0)
        load = os.getloadavg()[0]
        print(f"pilot {args.pilot}, {args.turns} turns an episode, {', '.join(SCENARIOS)}; load {load:.2f}")
        print(f"{'dialect':<10}{'method':<9}{'calls':>6}{'hit':>7}{'later':>7}{'first':>7}{'write':>7}"
              f"{'cost':>10}{'uncached':>10}")
        for dialect in ("anthropic", "openai"):
            for method in METHODS:
                h = await measure(suite, dialect, method, args.pilot, args.turns)
                print(f"{h.dialect:<10}{h.method:<9}{h.calls:>6}{h.hit:>7.1%}{h.later:>7.1%}{h.first:>7.1%}"
                      f"{h.write:>7.1%}{h.cost_usd:>10.4f}{h.uncached_usd:>10.4f}")


if __name__ == "__main__":
    asyncio.run(main())
