"""Whole sweeps against a real loopback provider: spend, the hard budget, resume to the same results."""

from __future__ import annotations

import dataclasses
import sqlite3
from pathlib import Path

import pytest

from bench.mock_provider import MockUsage, Recorded, Reply, Response, serve_mock, tool_loop
from runner.config.settings import SweepConfig
from runner.report import build_report, render_json, render_text
from runner.schedule.sweep import resume_sweep, start_sweep
from tests.support import episode_rewards, quiet

PRICE = {"input": 2.0, "cached_input": 0.5, "cache_write": 2.5, "output": 8.0}
KEY = "sk-loopback-test-key-0123456789"


class PricedReplies:
    """tool_loop's answers with half of every prompt served from cache; remembers the usage it sent."""

    def __init__(self, output_tokens: int = 20) -> None:
        self.inner = tool_loop(calls_before_finish=1, output_tokens=output_tokens)
        self.sent: list[MockUsage] = []

    def __call__(self, request: Recorded) -> Response:
        reply = self.inner(request)
        assert isinstance(reply, Reply)
        usage = MockUsage(input_tokens=reply.usage.input_tokens, output_tokens=reply.usage.output_tokens,
                          cached_tokens=reply.usage.input_tokens // 2)
        self.sent.append(usage)
        return dataclasses.replace(reply, usage=usage)


def priced(usage: MockUsage) -> float:
    fresh = usage.input_tokens - usage.cached_tokens
    return (fresh * PRICE["input"] + usage.cached_tokens * PRICE["cached_input"]
            + usage.output_tokens * PRICE["output"]) / 1e6


SLOW_REPLY_S = 1.0
"""While the capped run goes, each reply waits this long: the calls in flight at the budget stop keep the
run in `stopping: budget` for about this long, so `runs`, polled every 20 ms from the same loop, sees it
even when a loaded machine makes each poll slow (0.3 s was too short beside CPU hogs)."""


def config_for(base_url: str, suite: Path, budget: float | None = None, concurrency: int = 8) -> SweepConfig:
    model = f"openai-compatible:mock@{base_url}/v1"
    return SweepConfig(models=(model,), methods=("blind",), scenarios=("banking_l1", "pitch_l1"),
                       dataset=str(suite), pilot=3, prices={model: PRICE}, budget=budget, concurrency=concurrency)




@pytest.fixture(autouse=True)
def api_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_COMPATIBLE_API_KEY", KEY)


async def test_report_spend_is_the_priced_usage_the_server_returned(built_suite: Path, tmp_path: Path) -> None:
    replies = PricedReplies()
    journal = tmp_path / "j.sqlite"
    async with serve_mock(replies) as mock:
        outcome = await start_sweep(config_for(mock.base_url, built_suite), journal, "none", quiet)
    assert outcome.status == "completed"
    report = await build_report(journal, outcome.run_id)
    # The first request is the probe: sent before the run exists, journaled once it does (purpose probe),
    # so the run's total counts it and no stream does.
    probe, expected = priced(replies.sent[0]), sum(priced(u) for u in replies.sent[1:])
    stream = report.streams[0]
    assert stream.cost_usd.total == pytest.approx(expected, rel=1e-9)
    assert stream.cost_usd.agent == pytest.approx(expected, rel=1e-9)
    assert report.cost_usd.total == pytest.approx(expected + probe, rel=1e-9) and probe > 0
    with sqlite3.connect(journal) as db:
        probes = db.execute("SELECT model, cost_usd FROM model_calls WHERE purpose = 'probe'").fetchall()
    assert probes == [(config_for(mock.base_url, built_suite).models[0], pytest.approx(probe, rel=1e-9))]
    assert KEY.encode() not in journal.read_bytes()
    assert all(r.headers.get("authorization") == f"Bearer {KEY}" for r in mock.requests)


async def test_capped_run_finishes_what_it_started_then_resumes_to_the_uncapped_results(
    built_suite: Path, tmp_path: Path
) -> None:
    # Dear answers (4k output tokens each, within the 4,096 max_tokens a call reserves for), 8 calls in
    # flight: each reservation is within 3% of what its call costs.
    replies = PricedReplies(output_tokens=4_000)
    slow = {"on": False}
    journal = tmp_path / "capped.sqlite"

    def respond(request: Recorded) -> Response:
        reply = replies(request)
        return dataclasses.replace(reply, delay_s=SLOW_REPLY_S) if slow["on"] and isinstance(reply, Reply) else reply

    async with serve_mock(respond) as mock:
        free = await start_sweep(config_for(mock.base_url, built_suite), tmp_path / "free.sqlite", "none", quiet)
        assert free.status == "completed"
        with sqlite3.connect(tmp_path / "free.sqlite") as db:
            full_cost = db.execute("SELECT SUM(cost_usd) FROM model_calls").fetchone()[0]

        cap = full_cost / 3
        slow["on"] = True
        lines: list[str] = []
        capped = await start_sweep(config_for(mock.base_url, built_suite, budget=cap), journal, "none", lines.append)
        assert capped.status == "budget_exhausted"
        with sqlite3.connect(journal) as db:
            spent = db.execute("SELECT SUM(cost_usd) FROM model_calls").fetchone()[0]
            pending = db.execute("SELECT count(*) FROM units WHERE status = 'pending'").fetchone()[0]
            zero = db.execute("SELECT count(*) FROM episodes WHERE reward = 0 AND turns = 0").fetchone()[0]
            finished = db.execute("SELECT count(*) FROM episodes").fetchone()[0]
            started = db.execute("SELECT count(DISTINCT unit_id) FROM model_calls WHERE purpose = 'agent' "
                                 "AND unit_id NOT IN (SELECT unit_id FROM episodes)").fetchone()[0]
        assert spent is not None and 0 < spent <= cap and pending > 0 and zero == 0
        assert started <= 8  # left unfinished: at most the episodes in flight when nothing more fitted
        assert f"${spent:.4f} spent in all" in capped.reason and "--budget" in capped.reason
        pilot = next(line for line in lines if line.startswith("Pilot:"))
        if finished:
            assert f"Pilot: {finished} finished tasks" in pilot
        else:
            assert "no task finished" in pilot and "fits" not in pilot
        print(f"budget stop: cap ${cap:.4f}, spent ${spent:.4f}, {finished} tasks finished, {started} left "
              f"unfinished; {capped.reason}")

        slow["on"] = False
        # A resume must not forget what the run already spent: a cap still short of the full cost stops it
        # again with the run's total under that cap.
        second_cap = cap * 1.6
        again = await resume_sweep(capped.run_id, journal, "none", quiet, budget=second_cap)
        with sqlite3.connect(journal) as db:
            total = db.execute("SELECT SUM(cost_usd) FROM model_calls").fetchone()[0]
        assert again.status == "budget_exhausted" and spent < total <= second_cap
        resumed = await resume_sweep(capped.run_id, journal, "none", quiet, budget=full_cost * 3)
        assert resumed.status == "completed"

    def by_task(path: Path) -> dict[str, float]:
        return {unit.split("|", 1)[1]: reward for unit, reward in episode_rewards(path).items()}

    assert by_task(journal) == by_task(tmp_path / "free.sqlite")


async def test_method_calls_are_journaled_as_method_spend(built_suite: Path, tmp_path: Path) -> None:
    async with serve_mock(PricedReplies()) as mock:
        config = dataclasses.replace(config_for(mock.base_url, built_suite), methods=("lessons",),
                                     scenarios=("banking_l1",), pilot=2)
        outcome = await start_sweep(config, tmp_path / "j.sqlite", "none", quiet)
    assert outcome.status == "completed"
    with sqlite3.connect(tmp_path / "j.sqlite") as db:
        method_calls, method_cost = db.execute(
            "SELECT count(*), SUM(cost_usd) FROM model_calls WHERE purpose = 'method'").fetchone()
        serving = db.execute("SELECT count(*) FROM units WHERE phase = 'serving'").fetchone()[0]
    assert method_calls == serving  # lessons asks once per serving episode
    report = await build_report(tmp_path / "j.sqlite", outcome.run_id)
    assert report.streams[0].cost_usd.method == pytest.approx(method_cost, rel=1e-9) and method_cost > 0


async def test_pilot_prints_the_projected_cost_of_the_full_sweep(built_suite: Path, tmp_path: Path) -> None:
    lines: list[str] = []
    replies = PricedReplies()
    async with serve_mock(replies) as mock:
        config = dataclasses.replace(config_for(mock.base_url, built_suite), pilot=2, budget=1000.0)
        await start_sweep(config, tmp_path / "j.sqlite", "none", lines.append)
    with sqlite3.connect(tmp_path / "j.sqlite") as db:
        per_scenario = dict(db.execute(
            "SELECT u.scenario, sum(c.cost_usd) / count(DISTINCT u.unit_id) FROM model_calls c JOIN units u "
            "ON u.run_id = c.run_id AND u.unit_id = c.unit_id GROUP BY u.scenario").fetchall())
    # Each scenario's test tasks (blind runs no serving stream) x its pilot episodes' mean cost.
    full = 178 + 96
    projected = 178 * per_scenario["banking_l1"] + 96 * per_scenario["pitch_l1"]
    pilot_line = next(line for line in lines if line.startswith("Pilot:"))
    assert f"the full sweep of {full} tasks is projected at ${projected:.2f} (up to $" in pilot_line
    assert "it fits the $" in pilot_line and "95% range" in pilot_line


def test_probe_of_an_unreachable_model_is_one_clear_error(capsys: pytest.CaptureFixture[str]) -> None:
    from runner.cli import main

    assert main(["probe", "openai-compatible:gone@http://127.0.0.1:9/v1"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "probe of 'openai-compatible:gone@http://127.0.0.1:9/v1' failed" in err[0]
    assert KEY not in err[0]


async def test_a_resumed_dashboard_shows_each_streams_whole_run_spend_and_cache_figures(
        built_suite: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Stopped by its cap, resumed: each stream's row starts from what the run spent and sent before."""
    import runner.schedule.sweep
    from runner.display.live import make_display
    from runner.display.progress import RunProgress

    shown: list[RunProgress] = []

    def watching(kind: str, progress: RunProgress) -> object:
        shown.append(progress)
        return make_display(kind, progress)

    monkeypatch.setattr(runner.schedule.sweep, "make_display", watching)
    journal = tmp_path / "j.sqlite"
    async with serve_mock(PricedReplies(output_tokens=4_000)) as mock:
        free = await start_sweep(config_for(mock.base_url, built_suite), tmp_path / "free.sqlite", "none", quiet)
        with sqlite3.connect(tmp_path / "free.sqlite") as db:
            full_cost = db.execute("SELECT SUM(cost_usd) FROM model_calls").fetchone()[0]
        capped = await start_sweep(config_for(mock.base_url, built_suite, budget=full_cost / 2), journal, "none",
                                   quiet)
        assert free.status == "completed" and capped.status == "budget_exhausted"
        with sqlite3.connect(journal) as db:
            before = dict(db.execute("SELECT stream_id, SUM(cost_usd) FROM model_calls WHERE stream_id != '' "
                                     "GROUP BY stream_id"))
        resumed = await resume_sweep(capped.run_id, journal, "none", quiet, budget=full_cost * 3)
    assert resumed.status == "completed" and before
    with sqlite3.connect(journal) as db:
        after = {stream: (cost, sent) for stream, cost, sent in db.execute(
            "SELECT stream_id, SUM(cost_usd), SUM(input_tokens * (from_cache = 0)) FROM model_calls "
            "WHERE stream_id != '' GROUP BY stream_id")}  # '': the probes, no stream's
    dashboard = shown[-1].streams  # the resumed process's
    for stream_id, (cost, sent) in after.items():
        assert dashboard[stream_id].spent_usd == pytest.approx(cost)
        assert dashboard[stream_id].cache.input_tokens == sent


async def test_provenance_lists_each_version_the_provider_said_served_the_model(
        built_suite: Path, tmp_path: Path) -> None:
    """A provider that moves its alias to a new dated version mid-sweep: the report names both."""
    replies, answered = PricedReplies(), [0]

    def versioned(request: Recorded) -> Response:
        reply = replies(request)
        assert isinstance(reply, Reply)
        answered[0] += 1
        return dataclasses.replace(reply, served_model="mock-2026-01-01" if answered[0] <= 5 else "mock-2026-06-01")

    journal = tmp_path / "j.sqlite"
    async with serve_mock(versioned) as mock:
        config = config_for(mock.base_url, built_suite)
        outcome = await start_sweep(config, journal, "none", quiet)
    assert outcome.status == "completed" and answered[0] > 5
    report = await build_report(journal, outcome.run_id)
    (model,) = config.models
    assert report.provenance.models[model]["served_as"] == ["mock-2026-01-01", "mock-2026-06-01"]
    assert f"served: {model} as mock-2026-01-01, mock-2026-06-01" in render_text(report)
    assert '"served_as":["mock-2026-01-01","mock-2026-06-01"]' in render_json(report).replace(" ", "").replace(
        "\n", "")
