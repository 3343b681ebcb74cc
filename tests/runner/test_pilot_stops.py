"""What a pilot says when it stops before any task finished, and dollar amounts that never contradict
each other (issue 21: a pilot whose endpoint went down advised "a higher --budget" and said its stop
twice; a cap of $0.006 read "$0.01" beside a spend of $0.0006)."""

from __future__ import annotations

from pathlib import Path

import pytest

from bench.mock_provider import serve_mock
from runner.common.money import usd
from runner.config.settings import SweepConfig
from runner.schedule.sweep import start_sweep

PRICE = {"input": 0.1, "cached_input": 0.05, "cache_write": 0.1, "output": 0.2}


@pytest.mark.parametrize(("value", "shown"), [
    (0.006, "$0.0060"), (0.0006, "$0.00060"), (0.0123, "$0.012"), (0.5, "$0.50"), (0.0, "$0.00"),
    (1.0, "$1.00"), (1234.5, "$1,234.50"),
])
def test_dollars_keep_the_digits_that_tell_them_apart(value: float, shown: str) -> None:
    assert usd(value) == shown


def _config(base_url: str, suite: Path, **more: object) -> SweepConfig:
    return SweepConfig(models=("local",), methods=("blind",), scenarios=("retail_l1",), dataset=str(suite), pilot=1,
                       endpoints={"local": {"kind": "openai-compatible", "model": "m", "base_url": base_url + "/v1"}},
                       prices={"local": PRICE}, **more)  # type: ignore[arg-type]


async def test_a_pilot_whose_endpoint_went_down_says_to_resume_not_to_raise_the_budget(built_suite: Path,
                                                                                     tmp_path: Path) -> None:
    said: list[str] = []
    async with serve_mock() as mock:
        mock.die_after = 3  # the probe and two calls, then the server is gone
        outcome = await start_sweep(_config(mock.base_url, built_suite, endpoint_down_after_s=2.0, breaker_failures=1),
                                    tmp_path / "j.sqlite", "none", said.append)
    assert outcome.status == "failed"
    [pilot] = [line for line in said if line.startswith("Pilot:")]
    assert "no task finished" in pilot and "--budget" not in pilot and f"shiftbench resume {outcome.run_id}" in pilot
    assert not [line for line in said if outcome.status in line]  # the stop is the report's to say, once


async def test_a_pilot_stopped_by_its_cap_says_so_in_the_caps_own_digits(built_suite: Path, tmp_path: Path) -> None:
    said: list[str] = []
    async with serve_mock() as mock:
        outcome = await start_sweep(_config(mock.base_url, built_suite, budget=0.006), tmp_path / "j.sqlite", "none",
                                    said.append)
    assert outcome.status == "budget_exhausted"
    assert outcome.reason.startswith("budget cap $0.0060 reached")
    [pilot] = [line for line in said if line.startswith("Pilot:")]
    # The command runs as printed: the run id and the journal, which is not the default one.
    assert f"`shiftbench resume {outcome.run_id} --journal {tmp_path / 'j.sqlite'} --budget HIGHER`" in pilot
