"""Projections with batching: test episodes' calls at the batch price, serving and the methods' own calls
live; a batched model without a batch price is named and projected live. Hand-computed figures first,
then `shiftbench estimate --batch tests` on a pilot's journal against the providers' published rule."""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path
from types import SimpleNamespace

import anyio
import pytest

from bench.mock_provider import serve_mock, tool_loop
from runner.cli import main
from runner.config.prices import Price
from runner.config.settings import SweepConfig
from runner.cost.batch_setting import batched_models
from runner.cost.projection import Episode, Measured, project
from runner.schedule.sweep import start_sweep
from simulators.model_api import Usage

AGENT = Price(2.0, 0.5, 2.0, 8.0, batch=Price(1.0, 1.0, 1.0, 4.0))
JUDGE = Price(1.0, 0.1, 1.0, 2.0, batch=Price(0.5, 0.05, 0.5, 1.0))
COUNTS = {("s", "serving"): 10, ("s", "test"): 4}


def _measured() -> Measured:
    found = Measured(episodes=[
        Episode(("s", "serving"), 2, (("m", Usage(1000, 0, 0, 100)),)),
        Episode(("s", "test"), 3, (("m", Usage(2000, 500, 0, 200)), ("judge", Usage(300, 0, 0, 10)))),
    ], method_calls=defaultdict(list))
    found.method_calls["s"].append(("m", Usage(100, 0, 0, 0)))
    return found


# serving episode, live either way: 1000 x 2.00 + 100 x 8.00 = 2800 -> 10 x $0.0028 = $0.028
# the method's own call, live: 100 x 2.00 = 200 per serving episode -> 10 x $0.0002 = $0.002
# test episode live: agent 1500 x 2.00 + 500 x 0.50 + 200 x 8.00 = 4850; judge 300 x 1.00 + 10 x 2.00 = 320
#   batched: agent 1500 x 1.00 + 500 x 1.00 + 200 x 4.00 = 2800; judge 300 x 0.50 + 10 x 1.00 = 160
LIVE = 0.028 + 0.002 + 4 * 5170e-6
BOTH_BATCHED = 0.028 + 0.002 + 4 * 2960e-6
AGENT_BATCHED = 0.028 + 0.002 + 4 * (2800 + 320) * 1e-6


def test_test_calls_are_projected_at_the_batch_price_and_serving_and_methods_live() -> None:
    prices = {"m": AGENT, "judge": JUDGE}
    row = project(_measured(), "m", "tabular", "m", COUNTS, prices, batched=lambda model: True)
    assert row.projected_usd == pytest.approx(LIVE)
    assert row.batched_usd == pytest.approx(BOTH_BATCHED)
    assert row.batch_saving_usd == pytest.approx(LIVE - BOTH_BATCHED)
    assert row.batched_low_usd is not None and row.batched_high_usd is not None
    assert row.batched_low_usd <= row.batched_usd <= row.batched_high_usd
    assert row.no_batch_price == ()
    only_agent = project(_measured(), "m", "tabular", "m", COUNTS, prices, batched=lambda model: model == "m")
    assert only_agent.batched_usd == pytest.approx(AGENT_BATCHED)
    assert project(_measured(), "m", "tabular", "m", COUNTS, prices).batched_usd is None


def test_a_batched_model_without_a_batch_price_is_named_and_projected_live() -> None:
    prices = {"m": AGENT, "judge": Price(1.0, 0.1, 1.0, 2.0)}
    row = project(_measured(), "m", "tabular", "m", COUNTS, prices, batched=lambda model: True)
    assert row.no_batch_price == ("judge",)
    assert row.batched_usd == pytest.approx(AGENT_BATCHED)


def test_the_setting_is_read_from_the_config_and_endpoints_override_it() -> None:
    assert batched_models(SimpleNamespace(models=("a",))) is None  # no `batch` attribute: live
    assert batched_models(SimpleNamespace(batch="off", endpoints={})) is None
    every = batched_models(SimpleNamespace(batch="tests", endpoints={"local": {"batch": "off"}}))
    assert every is not None and every("openai:gpt-5") and not every("local")
    one = batched_models(SimpleNamespace(batch="off", endpoints={"gpt": {"batch": "tests"}}))
    assert one is not None and one("gpt") and not one("openai:gpt-5")
    forced = batched_models(SimpleNamespace(batch="off", endpoints={}), override="tests")
    assert forced is not None and forced("x")
    assert batched_models(SimpleNamespace(batch="tests", endpoints={}), override="off") is None


MODEL = "mock-claude"
PRICE = {"input": 3.0, "cached_input": 0.30, "cache_write": 3.75, "output": 15.0}  # no batch tier
HAIKU = "anthropic:claude-haiku-4-5"


@pytest.fixture(scope="module")
def pilot(built_suite: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    journal = tmp_path_factory.mktemp("batch-estimate") / "j.sqlite"

    async def go() -> str:
        async with serve_mock(tool_loop(calls_before_finish=2)) as mock:
            config = SweepConfig(models=(MODEL,), methods=("blind", "lessons"), scenarios=("banking_l1",),
                                 dataset=str(built_suite), pilot=1, prices={MODEL: PRICE}, concurrency=4,
                                 budget=100.0, endpoints={MODEL: {"kind": "anthropic", "model": "claude-mock",
                                                                  "base_url": mock.base_url}})
            outcome = await start_sweep(config, journal, "none", lambda line: None)
        assert outcome.status == "completed"
        return outcome.run_id

    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("ANTHROPIC_API_KEY", "sk-ant-loopback-test-key")
        return journal, anyio.run(go)


def test_estimate_batch_tests_prices_test_calls_at_half_for_anthropic(
        pilot: tuple[Path, str], capsys: pytest.CaptureFixture[str]) -> None:
    journal, run_id = pilot
    assert main(["estimate", run_id, "--journal", str(journal), "--models", HAIKU, "--batch", "tests", "--json"]) == 0
    blind, lessons = json.loads(capsys.readouterr().out)
    # blind has test episodes only: every call is a test call, and Anthropic's batch tier is half of every rate.
    assert blind["batched_usd"] == pytest.approx(blind["projected_usd"] / 2, rel=1e-9)
    assert blind["batch_saving_usd"] == pytest.approx(blind["projected_usd"] / 2, rel=1e-9)
    # lessons' serving episodes and its own updates stay live: it saves less than half.
    assert lessons["projected_usd"] / 2 < lessons["batched_usd"] < lessons["projected_usd"]
    assert main(["estimate", run_id, "--journal", str(journal), "--models", HAIKU, "--batch", "tests"]) == 0
    out = capsys.readouterr().out
    assert "With --batch tests" in out and "batching saves $" in out


def test_estimate_batch_names_a_model_without_a_batch_price(
        pilot: tuple[Path, str], capsys: pytest.CaptureFixture[str]) -> None:
    journal, run_id = pilot
    assert main(["estimate", run_id, "--journal", str(journal), "--batch", "tests"]) == 0
    out = capsys.readouterr().out
    assert f"{MODEL} has no batch price, so its test calls are projected live" in out
    assert main(["estimate", run_id, "--journal", str(journal), "--json"]) == 0  # the run's own setting: live
    assert {row["batched_usd"] for row in json.loads(capsys.readouterr().out)} == {None}
    assert main(["estimate", run_id, "--journal", str(journal)]) == 0
    assert "With --batch tests" not in capsys.readouterr().out
