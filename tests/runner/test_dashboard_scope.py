"""A resumed run's dashboard shows tokens and spend of one scope, the whole run (issue 30: after a
resume the tokens counted this process's calls while the spend counted every call the run made)."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import anyio
import pytest

from bench.mock_provider import serve_mock
from runner.common.money import usd
from runner.config.settings import SweepConfig
from runner.display.figures import count_text
from runner.schedule.sweep import resume_sweep, start_sweep

PRICE = {"input": 0.1, "cached_input": 0.05, "cache_write": 0.1, "output": 0.2}


def test_a_resumed_dashboard_counts_the_whole_runs_tokens_beside_its_whole_spend(
        built_suite: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    journal = tmp_path / "j.sqlite"

    async def capped_then_resumed() -> str:
        async with serve_mock() as mock:
            config = SweepConfig(models=("local",), methods=("blind",), scenarios=("retail_l1",),
                                 dataset=str(built_suite), pilot=1, budget=0.006, prices={"local": PRICE},
                                 endpoints={"local": {"kind": "openai-compatible", "model": "m",
                                                      "base_url": mock.base_url + "/v1"}})
            capped = await start_sweep(config, journal, "none", lambda _: None)
            assert capped.status == "budget_exhausted"
            with sqlite3.connect(journal) as db:
                before = db.execute("SELECT sum(input_tokens) FROM model_calls").fetchone()[0]
            assert before > 0  # the first process sent calls the second must still count
            resumed = await resume_sweep(capped.run_id, journal, "plain", lambda _: None, budget=100.0)
            assert resumed.status == "completed"
            return capped.run_id

    capsys.readouterr()
    anyio.run(capped_then_resumed)
    final = capsys.readouterr().err.strip().splitlines()[-1]
    with sqlite3.connect(journal) as db:
        sent_in, sent_out = db.execute(
            "SELECT sum(input_tokens), sum(output_tokens) FROM model_calls WHERE from_cache = 0").fetchone()
        (spent,) = db.execute("SELECT sum(cost_usd) FROM model_calls").fetchone()
    assert f"tokens {count_text(sent_in)} in {count_text(sent_out)} out" in final, final
    assert f"{usd(spent)} spent" in final, final
