"""Whole pilot sweeps against the mock in a local server's mode: the settings `probe --full` prints make
a run on llama-cpp-python finish, and a server that sends no usage is still counted and priced."""

from __future__ import annotations

from pathlib import Path

import pytest

from bench.mock_provider import Failure, Reply, serve_mock
from bench.mock_quirks import MODES, Quirks, with_quirks
from runner.config.settings import SweepConfig
from runner.journal import Batch, EpisodeFilter, open_journal, read_only
from runner.report import build_report, render_text
from runner.schedule.sweep import start_sweep
from runner.views.html_report import render_html
from runner.views.runs import list_runs, render_runs_text
from tests.support import quiet

PRICE = {"input": 2.0, "cached_input": 0.5, "cache_write": 2.5, "output": 8.0}



def local(base_url: str, **settings: object) -> dict[str, object]:
    return {"local": {"kind": "openai-compatible", "model": "smol", "base_url": base_url + "/v1", **settings}}


async def test_the_probed_settings_make_a_run_on_llama_cpp_python_finish(built_suite: Path, tmp_path: Path) -> None:
    async with serve_mock(with_quirks(MODES["llama-cpp-python"])) as mock:
        endpoints = local(mock.base_url, stream=False, extra_body={"agent": {"tool_choice": "auto"}})
        config = SweepConfig(models=("local",), methods=("blind",), scenarios=("banking_l1",), dataset=str(built_suite),
                             pilot=1, endpoints=endpoints, prices={"local": PRICE})
        outcome = await start_sweep(config, tmp_path / "j.sqlite", "none", quiet)
    assert outcome.status == "completed"
    agent_calls = [r for r in mock.requests if r.body.get("tools")]
    assert agent_calls and all(r.body["tool_choice"] == "auto" and not r.streaming for r in agent_calls)
    assert all(m.get("content") is not None for r in agent_calls for m in r.body["messages"])


async def test_a_server_without_usage_is_counted_priced_and_marked_estimated(built_suite: Path,
                                                                            tmp_path: Path) -> None:
    journal = tmp_path / "j.sqlite"
    async with serve_mock(with_quirks(Quirks(stream_usage=False))) as mock:
        config = SweepConfig(models=("local",), methods=("blind",), scenarios=("pitch_l1",), dataset=str(built_suite),
                             pilot=1, endpoints=local(mock.base_url), prices={"local": PRICE}, budget=5.0)
        outcome = await start_sweep(config, journal, "none", quiet)
    assert outcome.status == "completed"
    stream = (await build_report(journal, outcome.run_id)).streams[0]
    run_calls = len(mock.requests) - 1  # the first request is the probe, before the run exists
    assert stream.estimated_calls == run_calls > 0
    assert stream.input_tokens > 0 and stream.output_tokens > 0
    assert stream.cost_usd.agent > 0


async def test_a_streams_retries_and_timeouts_show_in_the_report_and_in_runs(built_suite: Path,
                                                                            tmp_path: Path) -> None:
    journal = tmp_path / "j.sqlite"
    async with serve_mock() as mock:
        # The run's probe, then the first agent calls (one or two of them, as the episodes start): a timeout
        # (408), a 503, then their answers.
        mock.script(Reply(text="ok"), Failure(408, "request timeout"), Failure(503, "busy"))
        config = SweepConfig(models=("local",), methods=("blind",), scenarios=("pitch_l1",), dataset=str(built_suite),
                             pilot=1, endpoints=local(mock.base_url), prices={"local": PRICE})
        outcome = await start_sweep(config, journal, "none", quiet)
    assert outcome.status == "completed"
    report = await build_report(journal, outcome.run_id)
    [counts] = report.retries
    assert (counts.model, counts.method, counts.retries, counts.timeouts, counts.failed_calls) == ("local", "blind",
                                                                                                2, 1, 0)
    assert counts.calls == len(mock.requests) - 1 - 2  # not the probe; two failed attempts made no call of their own
    assert counts.retried_calls in (1, 2)
    assert "Retries (calls sent" in render_text(report)
    page = render_html(report)  # the HTML report has the text report's table
    assert "Retries (calls sent" in page and "<td>local</td><td>blind</td>" in page.split("Retries (calls sent")[1]
    runs = render_runs_text(await list_runs(journal))
    assert "retries (timeouts) per stream" in runs and "local/blind 2 (1)" in runs


@pytest.fixture(autouse=True)
def no_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_COMPATIBLE_API_KEY", raising=False)


async def test_show_counts_every_paid_call_of_an_episode_resumed_in_another_process(built_suite: Path,
                                                                                    tmp_path: Path) -> None:
    journal = tmp_path / "j.sqlite"
    async with serve_mock() as mock:
        config = SweepConfig(models=("local",), methods=("blind",), scenarios=("retail_l1",), dataset=str(built_suite),
                             pilot=1, endpoints=local(mock.base_url), prices={"local": PRICE})
        outcome = await start_sweep(config, journal, "none", quiet)
    async with open_journal(journal, create=False) as opened:
        unit, calls, paid_in, paid_cost = await opened.read.fetchone(  # type: ignore[misc]
            "SELECT unit_id, count(*), sum(input_tokens), sum(cost_usd) FROM model_calls WHERE unit_id != '' "
            "AND status = 'ok' AND from_cache = 0 GROUP BY unit_id ORDER BY count(*) DESC LIMIT 1")
        assert calls > 1
        # What the resuming process journals for an episode whose first calls replayed free: its last call only.
        await opened.commit(Batch().add("UPDATE episodes SET input_tokens = 1, cost_usd = 0 WHERE unit_id = ?",
                                        (unit,)))
    async with read_only(journal) as reader:
        [shown] = await reader.episode_details(outcome.run_id, EpisodeFilter(unit_id=unit))
    assert (shown.input_tokens, shown.cost_usd) == (paid_in, pytest.approx(paid_cost))
