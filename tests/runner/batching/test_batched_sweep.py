"""A sweep with `--batch tests` against the mock's batch APIs, in process: test calls go through batches at
the batch price (route 'batch'), serving stays live, rewards equal the live sweep's."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from bench.mock_batch_state import BatchSettings
from bench.mock_provider import serve_mock
from runner.config.settings import SweepConfig
from runner.schedule.sweep import start_sweep
from simulators.errors import ShiftbenchInputError
from tests.support import episode_rewards, quiet

LIVE = {"input": 2.0, "cached_input": 0.5, "cache_write": 2.5, "output": 8.0}
BATCH = {"input": 1.0, "cached_input": 0.25, "cache_write": 1.25, "output": 4.0}
KEY = "sk-loopback-test-key-0123456789"


@pytest.fixture(autouse=True)
def api_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_COMPATIBLE_API_KEY", KEY)


def config_for(base_url: str, suite: Path, batch: str, **more: object) -> SweepConfig:
    model = f"openai-compatible:mock@{base_url}/v1"
    return SweepConfig(models=(model,), methods=("blind", "tabular"), scenarios=("banking_l1",), dataset=str(suite),
                       pilot=2, prices={model: {**LIVE, "batch": BATCH}}, batch=batch,
                       batch_settings={"wait_s": 0.05, "poll_s": 0.05, "poll_max_s": 0.2}, **more)  # type: ignore[arg-type]


async def test_batched_sweep_has_the_live_rewards_at_the_batch_price(built_suite: Path, tmp_path: Path) -> None:
    async with serve_mock() as mock:
        mock.batches.settings = BatchSettings(latency_s=0.1)
        live = await start_sweep(config_for(mock.base_url, built_suite, "off"), tmp_path / "live.sqlite", "none", quiet)
        batched = await start_sweep(config_for(mock.base_url, built_suite, "tests"), tmp_path / "b.sqlite", "none",
                                    quiet)
        submissions = dict(mock.batches.submissions)
    assert live.status == batched.status == "completed"
    assert episode_rewards(tmp_path / "b.sqlite") == episode_rewards(tmp_path / "live.sqlite")
    with sqlite3.connect(tmp_path / "b.sqlite") as db:
        routes = dict(db.execute(
            "SELECT u.phase || ':' || c.route, count(*) FROM model_calls c JOIN units u "
            "ON u.run_id = c.run_id AND u.unit_id = c.unit_id GROUP BY 1").fetchall())
        batch_ids = {row[0] for row in db.execute("SELECT custom_id FROM batch_items")}
        statuses = {row[0] for row in db.execute("SELECT status FROM provider_batches")}
        batch_cost = db.execute("SELECT sum(cost_usd) FROM model_calls WHERE route = 'batch'").fetchone()[0]
        fresh, cached, written, output = db.execute(
            "SELECT sum(input_tokens - cached_input_tokens - cache_write_tokens), sum(cached_input_tokens), "
            "sum(cache_write_tokens), sum(output_tokens) FROM model_calls WHERE route = 'batch'").fetchone()
        hashes = {row[0] for row in db.execute("SELECT request_hash FROM model_calls WHERE route = 'batch'")}
    assert set(routes) == {"serving:live", "test:batch"}
    assert hashes == batch_ids and set(submissions) == batch_ids and set(submissions.values()) == {1}
    assert statuses == {"collected"}
    expected = (fresh * BATCH["input"] + cached * BATCH["cached_input"] + written * BATCH["cache_write"]
                + output * BATCH["output"]) / 1e6
    assert batch_cost == pytest.approx(expected, rel=1e-9)


async def test_a_model_that_cannot_batch_is_refused(built_suite: Path, tmp_path: Path) -> None:
    with pytest.raises(ShiftbenchInputError, match=r"'scripted' runs in-process and has no batch API"):
        await start_sweep(SweepConfig(batch="tests", dataset=str(built_suite), scenarios=("banking_l1",)),
                          tmp_path / "j.sqlite", "none", quiet)
    model = "openai-compatible:mock@http://127.0.0.1:9/v1"
    with pytest.raises(ShiftbenchInputError, match=r'no batch price known for .*\[prices\."openai-compatible:mock'):
        await start_sweep(SweepConfig(models=(model,), batch="tests", prices={model: LIVE}, dataset=str(built_suite),
                                      scenarios=("banking_l1",)), tmp_path / "k.sqlite", "none", quiet)
    assert not (tmp_path / "j.sqlite").exists() and not (tmp_path / "k.sqlite").exists()
