"""A model served by three loopback replicas, one of which dies mid-run: same rewards, load moves over."""

from __future__ import annotations

import contextlib
import sqlite3
from pathlib import Path

import pytest

from bench.mock_provider import MockProvider, Reply, serve_mock, tool_loop
from runner.config.settings import SweepConfig
from runner.journal import read_only
from runner.report import build_report, render_text
from runner.schedule.sweep import start_sweep
from runner.views.runs import list_runs, render_runs_text
from tests.support import episode_rewards, quiet

DIES_AFTER = 12
"""The dying replica dies at its 12th answer (a count, never a time)."""
KEY = "sk-pool-test-key-0123456789"


def slow_tool_loop() -> object:
    """tool_loop's answers (a function of the request only, so any replica answers alike), each a little
    late so that calls overlap and the pool has in-flight counts to balance."""
    inner = tool_loop(calls_before_finish=2)

    def respond(request: object) -> object:
        reply = inner(request)  # type: ignore[arg-type]
        assert isinstance(reply, Reply)
        return Reply(**{**reply.__dict__, "delay_s": 0.02})

    return respond


def pool_config(mocks: list[MockProvider], suite: Path) -> SweepConfig:
    endpoint = {"kind": "openai-compatible", "model": "mock", "max_concurrency": 3,
                "base_urls": [m.base_url + "/v1" for m in mocks]}
    return SweepConfig(models=("pool",), methods=("blind",), scenarios=("banking_l1", "retail_l1"),
                       dataset=str(suite), pilot=4, endpoints={"pool": endpoint}, allow_unpriced=True,
                       concurrency=16)




@pytest.fixture(autouse=True)
def api_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_COMPATIBLE_API_KEY", KEY)


async def run_pool(suite: Path, journal: Path, dies_after: int | None) -> tuple[str, list[MockProvider]]:
    async with contextlib.AsyncExitStack() as stack:
        mocks = [await stack.enter_async_context(serve_mock(slow_tool_loop())) for _ in range(3)]  # type: ignore[arg-type]
        mocks[1].die_after = dies_after
        outcome = await start_sweep(pool_config(mocks, suite), journal, "none", quiet)
    assert outcome.status == "completed"
    return outcome.run_id, mocks


async def test_a_replica_dying_mid_run_changes_no_reward_and_its_load_moves_to_the_survivors(
        built_suite: Path, tmp_path: Path) -> None:
    healthy_run, healthy = await run_pool(built_suite, tmp_path / "healthy.sqlite", None)
    run_id, mocks = await run_pool(built_suite, tmp_path / "killed.sqlite", DIES_AFTER)
    dead = mocks[1]

    # It dies at its DIES_AFTER-th answer (a reply already on its last write in that instant may still
    # complete: the server's own count says what it answered).
    assert dead.killed_at is not None and dead.answered >= DIES_AFTER
    assert episode_rewards(tmp_path / "killed.sqlite") == episode_rewards(tmp_path / "healthy.sqlite")
    async with read_only(tmp_path / "healthy.sqlite") as reader:
        before = {r.replica: r for r in await reader.replica_calls(healthy_run)}
    async with read_only(tmp_path / "killed.sqlite") as reader:
        after = {r.replica: r for r in await reader.replica_calls(run_id)}
    total = sum(r.answered for r in before.values())
    # Three healthy replicas share the calls; every one of them answers some.
    assert set(before) == {m.base_url + "/v1" for m in healthy} and all(r.answered for r in before.values())
    # With one dead: every call still answered, the same number of them.
    assert sum(r.answered for r in after.values()) == total
    dead_url = dead.base_url + "/v1"
    survivors = [after[m.base_url + "/v1"] for m in mocks if m is not dead]
    # The journal credits the dead replica with at most what it answered before it died, nothing after.
    assert 0 < after[dead_url].answered <= dead.answered
    assert after[dead_url].last_answered_at is not None
    # The survivors took its load: both answered after its death, and more than it did.
    assert all(s.last_answered_at is not None and s.last_answered_at > dead.killed_at for s in survivors)
    assert sum(s.answered for s in survivors) == total - after[dead_url].answered
    assert all(s.answered > after[dead_url].answered for s in survivors)
    # Its calls cut short were answered elsewhere in the same attempt: no retry, no episode run again.
    with sqlite3.connect(tmp_path / "killed.sqlite") as db:
        assert db.execute("SELECT max(attempts) FROM model_calls WHERE status = 'ok'").fetchone()[0] == 1
        assert db.execute("SELECT count(*) FROM model_calls WHERE status != 'ok'").fetchone()[0] == 0
        assert db.execute("SELECT max(attempts) FROM units").fetchone()[0] == 1
    report = render_text(await build_report(tmp_path / "killed.sqlite", run_id))
    assert "Endpoint pools" in report and dead_url in report
    # `runs` shows the same counts per replica (labels in full in --json, counts in the table).
    (listed,) = await list_runs(tmp_path / "killed.sqlite")
    assert {r.replica: r.answered for r in listed.replicas} == {url: r.answered for url, r in after.items()}
    table = render_runs_text([listed])
    assert "replicas answered" in table and "/".join(str(r.answered) for r in listed.replicas) in table
