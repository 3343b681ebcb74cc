"""Visible savings: a sweep against the mock's prefix cache (Anthropic dialect, rolling breakpoints) shows
per stream and per run the hit rate, the cache writes and the spend saved against uncached prices, in the
report (text, CSV, JSON, HTML), the dashboard's status line and `runs`; every figure is checked against a
hand computation from what the mock billed."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest

from bench.mock_cache import Billed, PrefixCache
from bench.mock_provider import serve_mock, tool_loop
from runner.config.prices import Price
from runner.config.settings import SweepConfig
from runner.cost.pricing import saved_usd
from runner.display.live import status_line
from runner.display.progress import RunProgress, StreamProgress
from runner.models.priced import PricedModel
from runner.models.watched import WatchedModel
from runner.report import build_report, render_csv, render_json, render_text
from runner.schedule.sweep import start_sweep
from runner.views.html_report import render_html
from runner.views.runs import list_runs, render_runs_text
from simulators.model_api import ModelRequest, ModelResponse, Usage
from simulators.protocol import AssistantTurn

PRICE = {"input": 3.0, "cached_input": 0.30, "cache_write": 3.75, "output": 15.0}
MODEL = "mock-claude"


def hand_saved(billed: list[Billed]) -> float:
    """Reads save (input - read rate), writes cost (write rate - input) more, per token."""
    return sum(b.cached_tokens * (PRICE["input"] - PRICE["cached_input"])
               + b.cache_write_tokens * (PRICE["input"] - PRICE["cache_write"]) for b in billed) / 1e6


@pytest.fixture(autouse=True)
def api_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-loopback-test-key")


async def test_cache_figures_per_stream_and_run_match_what_the_mock_billed(
    built_suite: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cache = PrefixCache()
    journal = tmp_path / "j.sqlite"
    async with serve_mock(tool_loop(calls_before_finish=3), cache=cache) as mock:
        config = SweepConfig(models=(MODEL,), methods=("blind",), scenarios=("banking_l1",), dataset=str(built_suite),
                             pilot=2, prices={MODEL: PRICE}, concurrency=4,
                             endpoints={MODEL: {"kind": "anthropic", "model": "claude-mock",
                                                "base_url": mock.base_url}})
        outcome = await start_sweep(config, journal, "plain", lambda _: None)
    assert outcome.status == "completed"
    probe, calls = cache.billed[0], cache.billed[1:]
    assert len(calls) >= 8 and sum(b.cached_tokens for b in calls) > 0  # multi-turn episodes read from cache
    report = await build_report(journal, outcome.run_id)

    stream = report.streams[0].cache
    assert stream.input_tokens == sum(b.input_tokens for b in calls)
    assert stream.cached_input_tokens == sum(b.cached_tokens for b in calls)
    assert stream.cache_write_tokens == sum(b.cache_write_tokens for b in calls)
    assert stream.hit_rate == pytest.approx(sum(b.cached_tokens for b in calls) / sum(b.input_tokens for b in calls))
    assert stream.saved_usd == pytest.approx(hand_saved(calls), rel=1e-9) and stream.saved_usd > 0
    run = report.cache  # the probe is the run's, no stream's
    assert run.input_tokens == stream.input_tokens + probe.input_tokens
    assert run.saved_usd == pytest.approx(hand_saved(cache.billed), rel=1e-9)

    text = render_text(report)
    assert f"hit rate {100 * run.hit_rate:.1f}%" in text and f"${run.saved_usd:.4f} saved" in text
    cache_rows = [line for line in text.splitlines() if line.startswith(MODEL) and "%" in line]
    assert any(f"{100 * stream.hit_rate:.1f}%" in line and f"{stream.saved_usd:.4f}" in line for line in cache_rows)
    row = next(csv.DictReader(io.StringIO(render_csv(report))))
    assert float(row["cache_hit_rate"]) == pytest.approx(stream.hit_rate, abs=1e-6)
    assert float(row["cache_saved_usd"]) == pytest.approx(stream.saved_usd, abs=1e-6)
    assert int(row["cache_write_tokens"]) == stream.cache_write_tokens
    sealed = json.loads(render_json(report))
    assert sealed["cache"]["hit_rate"] == pytest.approx(run.hit_rate)
    assert sealed["streams"][0]["cache"]["saved_usd"] == pytest.approx(stream.saved_usd)
    assert f"{stream.saved_usd:.4f}" in render_html(report) and "Prompt cache" in render_html(report)

    (listed,) = await list_runs(journal)
    assert listed.cache.saved_usd == pytest.approx(run.saved_usd, rel=1e-9)
    assert f"{100 * run.hit_rate:.0f}% / ${run.saved_usd:.2f}" in render_runs_text([listed])
    # The dashboard's last status line: the run's figures as the report computes them.
    last = capsys.readouterr().err.strip().splitlines()[-1]
    assert f"cache {100 * run.hit_rate:.0f}% hit, ${run.saved_usd:.2f} saved" in last


class _Billing:
    name = "billing"

    def __init__(self, usage: Usage) -> None:
        self.usage = usage

    async def respond(self, request: ModelRequest) -> ModelResponse:
        return ModelResponse(AssistantTurn(text="ok"), self.usage)


async def test_dashboard_counts_cache_figures_on_the_stream_whose_call_it_is() -> None:
    price = Price(**PRICE)
    usage = Usage(input_tokens=10_000, cached_input_tokens=8_000, cache_write_tokens=500, output_tokens=100)
    progress = RunProgress(run_id="r", journal_path="j")
    stream = StreamProgress("m|blind|s", "m", "blind", "s", 1, 1, 1)
    client = WatchedModel(PricedModel(_Billing(usage), price, None, progress), stream, "u", "agent")
    await client.respond(ModelRequest(system="s", messages=(), tools=()))
    await client.respond(ModelRequest(system="s", messages=(), tools=()))
    expected = 2 * (8_000 * (3.0 - 0.30) + 500 * (3.0 - 3.75)) / 1e6
    assert 2 * saved_usd(usage, price) == pytest.approx(expected)
    for counter in (stream.cache, progress.cache):
        tokens = (counter.input_tokens, counter.cached_input_tokens, counter.cache_write_tokens)
        assert tokens == (20_000, 16_000, 1_000)
        assert counter.hit_rate == pytest.approx(0.8) and counter.saved_usd == pytest.approx(expected)
    assert f"cache 80% hit, ${expected:.2f} saved" in status_line(progress)


def test_one_hour_writes_are_saved_against_at_their_own_rate_or_the_five_minute_one() -> None:
    from runner.cost.cache_savings import cache_by_stream, cache_total
    from runner.journal import CacheUsage

    row = CacheUsage("m", "blind", "m", input_tokens=10_000, cached_input_tokens=6_000, cache_write_tokens=2_000,
                     output_tokens=100, cache_write_1h_tokens=500)
    with_1h = Price(input=3.0, cached_input=0.30, cache_write=3.75, output=15.0, cache_write_1h=6.0)
    without = Price(input=3.0, cached_input=0.30, cache_write=3.75, output=15.0)  # 1-hour rate missing: 5-minute's
    hand_1h = (6_000 * (3.0 - 0.30) + 1_500 * (3.0 - 3.75) + 500 * (3.0 - 6.0)) / 1e6
    hand_5m = (6_000 * (3.0 - 0.30) + 2_000 * (3.0 - 3.75)) / 1e6
    assert cache_by_stream([row], {"m": with_1h})[("m", "blind")].saved_usd == pytest.approx(hand_1h)
    assert cache_total([row], {"m": without}).saved_usd == pytest.approx(hand_5m)
    assert cache_total([row], {}).saved_usd == 0.0  # an unpriced model saved nothing the table can tell
