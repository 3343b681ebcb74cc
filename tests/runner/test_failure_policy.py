"""Whole sweeps against a loopback provider that fails: the failure's class decides what the run does."""

from __future__ import annotations

import dataclasses
import sqlite3
import time
from collections import Counter
from pathlib import Path

import pytest

import runner.models.registry
from bench.mock_provider import Failure, Recorded, Responder, Response, serve_mock, tool_loop
from runner.cli.sweeps import EXIT_BY_STATUS
from runner.providers import RetryPolicy
from runner.schedule.sweep import resume_sweep, start_sweep
from tests.runner.test_paid_sweep import KEY, PRICE, config_for
from tests.support import quiet


@pytest.fixture(autouse=True)
def api_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_COMPATIBLE_API_KEY", KEY)


def refusing(status: int, message: str) -> Responder:
    """Answers the probe (no tools), refuses every tool-calling request with `status`."""
    answer = tool_loop()

    def respond(request: Recorded) -> Response:
        return Failure(status, message) if request.tools() else answer(request)

    return respond


@pytest.mark.parametrize(("status", "words"), [(400, "rejected request (HTTP 400: unknown field 'foo'"),
                                               (401, "auth (HTTP 401: invalid api key")])
async def test_a_refused_request_is_sent_once_and_the_run_fails_with_the_class_s_message(
    built_suite: Path, tmp_path: Path, status: int, words: str
) -> None:
    message = "unknown field 'foo'" if status == 400 else "invalid api key"
    respond = refusing(status, message)
    journal = tmp_path / "j.sqlite"
    started = time.monotonic()
    async with serve_mock(respond) as mock:
        outcome = await start_sweep(config_for(mock.base_url, built_suite), journal, "none", quiet)
    elapsed = time.monotonic() - started
    sent = Counter(r.raw for r in mock.requests if r.tools())
    assert sent and set(sent.values()) == {1}, "a refused body was sent again"
    assert outcome.status == "failed" and EXIT_BY_STATUS[outcome.status] == 1
    assert words in outcome.reason and "|blind|" in outcome.reason.split(": ")[0]  # names the unit
    assert "resume when the provider is back" not in outcome.reason
    assert elapsed < 60  # a safety net only: no backoff, no re-queue pause was waited out
    with sqlite3.connect(journal) as db:
        failed = db.execute("SELECT count(*) FROM model_calls WHERE status = 'failed'").fetchone()[0]
        episodes = db.execute("SELECT count(*) FROM episodes").fetchone()[0]
    assert 1 <= failed <= len(sent) and episodes == 0  # journaled (a call cut by the stop may not be), never scored
    print(f"HTTP {status} on every tool call: {len(sent)} distinct bodies, {sum(sent.values())} requests "
          f"(max {max(sent.values())} per body), {elapsed:.1f}s; {outcome.reason}")


async def test_a_revoked_key_resumes_once_it_is_fixed(built_suite: Path, tmp_path: Path) -> None:
    healthy = tool_loop()
    state = {"revoked": True}

    def respond(request: Recorded) -> Response:
        if state["revoked"] and request.tools():
            return Failure(401, "key revoked")
        return healthy(request)

    journal = tmp_path / "j.sqlite"
    async with serve_mock(respond) as mock:
        outcome = await start_sweep(config_for(mock.base_url, built_suite), journal, "none", quiet)
        assert outcome.status == "failed" and "check the API key" in outcome.reason
        # The hint runs as printed: the run id and the journal, which is not the default one.
        assert f"then `shiftbench resume {outcome.run_id} --journal {journal}`" in outcome.reason
        state["revoked"] = False
        resumed = await resume_sweep(outcome.run_id, journal, "none", quiet)
    assert resumed.status == "completed"


async def test_a_lasting_outage_opens_the_breaker_and_stops_the_run_after_a_bounded_number_of_requests(
    built_suite: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Fast timings; the bounds asserted hold at any speed.
    monkeypatch.setattr(runner.models.registry, "SWEEP_POLICY", RetryPolicy(backoff_initial_s=0.01, backoff_max_s=0.05))
    monkeypatch.setattr(runner.models.registry, "BREAKER_FIRST_PROBE_S", 0.05)
    healthy = tool_loop()
    state = {"down": True}

    def respond(request: Recorded) -> Response:
        return Failure(503, "service unavailable") if state["down"] and request.tools() else healthy(request)

    journal = tmp_path / "j.sqlite"
    config = dataclasses.replace(config_for("", built_suite), endpoint_down_after_s=1.0)
    lines: list[str] = []
    async with serve_mock(respond) as mock:
        config = dataclasses.replace(config, **_model_at(mock.base_url))
        outcome = await start_sweep(config, journal, "none", lines.append)
        outage = [r for r in mock.requests if r.tools()]
        per_body = Counter(r.raw for r in outage)
        assert outcome.status == "failed" and "resume later" in outcome.reason
        assert f"resume later (`shiftbench resume {outcome.run_id} --journal {journal}`)" in outcome.reason
        assert max(per_body.values()) <= config.max_request_attempts == 6
        # Without the breaker every call in flight retries on its own; with it, after the first failures
        # in a row only one probe at a time goes out.
        assert len(outage) <= config.concurrency + config.breaker_failures + 20
        print(f"lasting 503: {len(outage)} requests, {len(per_body)} bodies, at most {max(per_body.values())} "
              f"per body; {outcome.reason}")
        state["down"] = False
        resumed = await resume_sweep(outcome.run_id, journal, "none", quiet)
    assert resumed.status == "completed"


def _model_at(base_url: str) -> dict[str, object]:
    model = f"openai-compatible:mock@{base_url}/v1"
    return {"models": (model,), "prices": {model: PRICE}}


async def test_a_context_overflow_ends_the_episode_and_it_is_graded(built_suite: Path, tmp_path: Path) -> None:
    healthy = tool_loop(calls_before_finish=3)

    def respond(request: Recorded) -> Response:
        # The second tool result makes the conversation "too long" for this server.
        if request.tool_results() >= 2:
            return Failure(400, "This model's maximum context length is 8192 tokens")
        return healthy(request)

    journal = tmp_path / "j.sqlite"
    async with serve_mock(respond) as mock:
        config = dataclasses.replace(config_for(mock.base_url, built_suite), scenarios=("banking_l1",), pilot=1)
        outcome = await start_sweep(config, journal, "none", quiet)
        overflowing = Counter(r.raw for r in mock.requests if r.tool_results() >= 2)
    assert outcome.status == "completed"
    assert overflowing and set(overflowing.values()) == {1}
    with sqlite3.connect(journal) as db:
        ends = {row[0] for row in db.execute("SELECT end_reason FROM episodes")}
        units, episodes = db.execute("SELECT count(*), (SELECT count(*) FROM episodes) FROM units").fetchone()
    assert ends == {"context_length"} and units == episodes
