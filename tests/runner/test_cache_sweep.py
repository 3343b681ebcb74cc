"""A whole sweep on an Anthropic endpoint against the mock's prefix cache: every request within the
breakpoint limit, each call's TTL and its 1-hour writes journaled, and the journaled spend equal to a
hand computation from what the cache billed."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from bench.mock_cache import PrefixCache
from bench.mock_provider import serve_mock, tool_loop
from runner.config.settings import SweepConfig
from runner.schedule.sweep import start_sweep
from tests.support import quiet

PRICE = {"input": 3.0, "cached_input": 0.3, "cache_write": 3.75, "output": 15.0, "cache_write_1h": 6.0}



def count_marks(value: object) -> int:
    if isinstance(value, dict):
        return ("cache_control" in value) + sum(count_marks(v) for v in value.values())
    if isinstance(value, list):
        return sum(count_marks(v) for v in value)
    return 0


async def test_sweep_journals_cache_reads_writes_and_ttls_and_prices_them(
        built_suite: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-loopback-0123456789")
    cache = PrefixCache()
    journal = tmp_path / "j.sqlite"
    async with serve_mock(tool_loop(calls_before_finish=4), cache=cache) as mock:
        config = SweepConfig(models=("claude",), methods=("oracle",), scenarios=("banking_l1",),
                             dataset=str(built_suite), pilot=2, prices={"claude": PRICE},
                             endpoints={"claude": {"kind": "anthropic", "model": "claude-test",
                                                   "base_url": mock.base_url}})
        outcome = await start_sweep(config, journal, "none", quiet)
    assert outcome.status == "completed"
    assert all(count_marks(r.body) <= 4 for r in mock.requests)
    agent = [r for r in mock.requests if r.body.get("tools")]
    assert agent and all(count_marks(r.body) == 4 for r in agent)  # tools, system, the oracle's bulletin, turn
    with sqlite3.connect(journal) as db:
        rows = db.execute("SELECT purpose, input_tokens, cached_input_tokens, cache_write_tokens, "
                          "cache_write_1h_tokens, output_tokens, cost_usd, cache_ttl FROM model_calls").fetchall()
    assert len(rows) == len(cache.billed) == len(mock.requests)
    # A fast stream: every mark asks for 5 minutes, so no write is a 1-hour one.
    assert {r[7] for r in rows if r[0] == "agent"} == {"5m"} and sum(r[4] for r in rows) == 0
    billed = sorted((b.input_tokens, b.cached_tokens, b.cache_write_tokens) for b in cache.billed)
    assert sorted((r[1], r[2], r[3]) for r in rows) == billed
    hand = sum((i - c - w) * 3.0 + c * 0.3 + w * 3.75 + 20 * 15.0 for i, c, w in billed) / 1e6
    assert sum(r[6] for r in rows) == pytest.approx(hand, rel=1e-9)
    agent_rows = [r for r in rows if r[0] == "agent"]
    hit_rate = sum(r[2] for r in agent_rows) / sum(r[1] for r in agent_rows)
    assert hit_rate > 0.8  # the episodes of a stream share tools, documents and the bulletin
