"""What a full sweep will cost: `--pilot N` prints a projection per model and method with a range, and
`shiftbench estimate` prints the same numbers from the pilot's journal without sending anything; a model
the run did not call is re-priced from the run's tokens; bad input is one line and exit 2."""

from __future__ import annotations

import json
from pathlib import Path

import anyio
import pytest

from bench.mock_cache import Billed, PrefixCache
from bench.mock_provider import serve_mock, tool_loop
from runner.cli import main
from runner.config.settings import SweepConfig
from runner.cost.cap_buys import cap_buys
from runner.cost.pricing import default_prices
from runner.cost.projection import ProjectedRow
from runner.journal import read_only
from runner.report import build_report
from runner.schedule.sweep import start_sweep
from simulators.dataset import load_dataset

PRICE = {"input": 3.0, "cached_input": 0.30, "cache_write": 3.75, "output": 15.0}
MODEL = "mock-claude"
BANKING_TEST, BANKING_SERVING = 178, 336
"""Tasks of banking_l1 in the built-in suite (seed 0): the full sweep the pilot projects."""


@pytest.fixture(scope="module")
def pilot(built_suite: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str, list[str], PrefixCache]:
    journal = tmp_path_factory.mktemp("estimate") / "j.sqlite"
    cache = PrefixCache()
    lines: list[str] = []

    async def go() -> str:
        async with serve_mock(tool_loop(calls_before_finish=3), cache=cache) as mock:
            config = SweepConfig(models=(MODEL,), methods=("blind", "lessons"), scenarios=("banking_l1",),
                                 dataset=str(built_suite), pilot=2, prices={MODEL: PRICE}, concurrency=4,
                                 budget=100.0, endpoints={MODEL: {"kind": "anthropic", "model": "claude-mock",
                                                                  "base_url": mock.base_url}})
            outcome = await start_sweep(config, journal, "none", lines.append)
        assert outcome.status == "completed"
        return outcome.run_id

    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("ANTHROPIC_API_KEY", "sk-ant-loopback-test-key")
        patch.delenv("COLUMNS", raising=False)  # the pilot's table at natural widths, as `estimate` prints it below
        run_id = anyio.run(go)
    return journal, run_id, lines, cache


def table_rows(text: str) -> list[str]:
    return [line for line in text.splitlines() if line.startswith(("mock-claude", "anthropic:", "openai:"))]


def test_estimate_from_the_pilots_journal_prints_the_pilots_own_projection(
    pilot: tuple[Path, str, list[str], PrefixCache], capsys: pytest.CaptureFixture[str]
) -> None:
    journal, run_id, lines, _ = pilot
    printed = "\n".join(lines)
    assert "Pilot: " in printed and "95% range" in printed
    assert main(["estimate", run_id, "--journal", str(journal)]) == 0
    estimated = capsys.readouterr().out
    assert table_rows(estimated) == table_rows(printed) and len(table_rows(printed)) == 2
    assert main(["estimate", "--journal", str(journal), "--json"]) == 0  # the newest run by default
    rows = json.loads(capsys.readouterr().out)
    for row in rows:
        assert row["low_usd"] <= row["projected_usd"] <= row["high_usd"]
        assert row["projected_usd"] < row["uncached_usd"]  # the cache pays: reads outweigh writes
        assert f"{row['projected_usd']:,.2f}" in printed and not row["repriced"]
    blind, lessons = rows
    assert (blind["episodes"], lessons["episodes"]) == (BANKING_TEST, BANKING_TEST + BANKING_SERVING)
    assert 0 < blind["hit_rate"] < 1


def test_a_test_only_projection_is_the_mean_episode_cost_times_the_full_sweep(
    pilot: tuple[Path, str, list[str], PrefixCache], capsys: pytest.CaptureFixture[str]
) -> None:
    journal, run_id, _, _ = pilot
    report = anyio.run(build_report, journal, run_id)
    blind = next(s for s in report.streams if s.method == "blind")
    hand = blind.cost_usd.total / blind.episodes * BANKING_TEST  # one cell: (banking_l1, test)
    assert main(["estimate", run_id, "--journal", str(journal), "--methods", "blind", "--json"]) == 0
    (row,) = json.loads(capsys.readouterr().out)
    assert row["projected_usd"] == pytest.approx(hand, rel=1e-9)


def test_a_model_the_run_did_not_call_is_repriced_from_its_tokens_and_labelled(
    pilot: tuple[Path, str, list[str], PrefixCache], capsys: pytest.CaptureFixture[str]
) -> None:
    journal, run_id, _, cache = pilot
    other = "anthropic:claude-haiku-4-5"
    assert main(["estimate", run_id, "--journal", str(journal), "--models", other, "--methods", "blind"]) == 0
    out = capsys.readouterr().out
    (row,) = table_rows(out)
    assert f"RE-PRICED from {MODEL}" in row and "RE-PRICED rows" in out
    assert main(["estimate", run_id, "--journal", str(journal), "--models", f"{other},{MODEL}", "--methods", "blind",
                 "--json"]) == 0
    haiku, own = json.loads(capsys.readouterr().out)
    price = default_prices()[other]

    def at(rates: dict[str, float], b: Billed) -> float:
        fresh = b.input_tokens - b.cached_tokens - b.cache_write_tokens
        return fresh * rates["input"] + b.cached_tokens * rates["cached_input"] + b.cache_write_tokens * rates[
            "cache_write"] + 20 * rates["output"]

    # Same tokens, other rates: the ratio of the two projections is the ratio of the pilot's bills.
    haiku_rates = {"input": price.input, "cached_input": price.cached_input, "cache_write": price.cache_write,
                   "output": price.output}
    ratio = sum(at(haiku_rates, b) for b in cache.billed[1:]) / sum(at(PRICE, b) for b in cache.billed[1:])
    assert haiku["repriced"] and haiku["source"] == MODEL and haiku["hit_rate"] == own["hit_rate"]
    assert haiku["projected_usd"] / own["projected_usd"] == pytest.approx(ratio, rel=0.05)


def test_a_budget_is_said_in_episodes_and_windows_it_buys_of_the_projection(
    pilot: tuple[Path, str, list[str], PrefixCache], capsys: pytest.CaptureFixture[str]
) -> None:
    journal, run_id, _, _ = pilot
    assert main(["estimate", run_id, "--journal", str(journal), "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    total, episodes = sum(r["projected_usd"] for r in rows), sum(r["episodes"] for r in rows)
    scenario = load_dataset(anyio.run(_dataset_of, journal, run_id), only=["banking_l1"]).scenarios["banking_l1"]
    windows = len({t.window for t in (*scenario.serving, *scenario.test)})
    cap = total * 0.3
    assert main(["estimate", run_id, "--journal", str(journal), "--budget", f"{cap:.6f}"]) == 0
    said = " ".join(capsys.readouterr().out.split())
    bought, first = int(float(f"{cap:.6f}") / total * episodes), int(float(f"{cap:.6f}") / total * windows)
    assert f"buys about {bought:,} of the projected sweep's {episodes:,} episodes (30% of" in said
    assert f"about the first {first} of each stream's {windows} windows" in said
    assert main(["estimate", run_id, "--journal", str(journal), "--budget", f"{total * 2}"]) == 0
    assert "pays for the whole projected sweep" in capsys.readouterr().out


async def _dataset_of(journal: Path, run_id: str) -> str:
    async with read_only(journal) as reader:
        run = await reader.run(run_id)
    assert run is not None
    return run.dataset_path


@pytest.mark.parametrize(("flags", "named"), [
    (["--budget", "-1"], "--budget"),
    (["--budget", "5", "--json"], "--budget"),
    (["--models", "openai:gpt-nonexistent"], "openai:gpt-nonexistent"),
    (["--methods", "blnd"], "blnd"),
    (["--methods", "tabular"], "tabular"),
    (["--scenarios", "retail_l9"], "retail_l9"),
])
def test_bad_input_is_one_line_naming_it_and_exit_2(
    pilot: tuple[Path, str, list[str], PrefixCache], capsys: pytest.CaptureFixture[str], flags: list[str],
    named: str
) -> None:
    journal, run_id, _, _ = pilot
    assert main(["estimate", run_id, "--journal", str(journal), *flags]) == 2
    captured = capsys.readouterr()
    err = captured.err.strip().splitlines()
    assert len(err) == 1 and named in err[0] and captured.out == ""


def test_an_unknown_run_or_journal_is_exit_2(pilot: tuple[Path, str, list[str], PrefixCache], tmp_path: Path,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    journal, _, _, _ = pilot
    assert main(["estimate", "no-such-run", "--journal", str(journal)]) == 2
    assert "no-such-run" in capsys.readouterr().err
    assert main(["estimate", "--journal", str(tmp_path / "none.sqlite")]) == 2
    assert "none.sqlite" in capsys.readouterr().err


def test_an_offline_run_is_estimated_at_its_price_and_a_paid_model_from_it_points_to_a_pilot(
        built_suite: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    journal = tmp_path / "j.sqlite"
    assert main(["run", "--dataset", str(built_suite), "--scenarios", "pitch_l1", "--methods", "blind,tabular",
                 "--pilot", "1", "--display", "none", "--journal", str(journal)]) == 0
    out = capsys.readouterr().out
    # The pilot's own table says the sweep costs $0.00 because the model is offline, not because it measured so.
    assert "is projected at $0.00 (up to $0.00)" in out and "Offline: the scripted models cost nothing" in out
    assert "no price" not in out
    assert main(["estimate", "--journal", str(journal)]) == 0
    out, err = capsys.readouterr()
    assert err == "" and "Offline: the scripted models cost nothing" in out
    assert [row.split()[:2] for row in out.splitlines() if row.startswith("scripted ")] == [
        ["scripted", "blind"], ["scripted", "tabular"]]
    assert main(["estimate", "--journal", str(journal), "--json"]) == 0
    assert {row["projected_usd"] for row in json.loads(capsys.readouterr().out)} == {0.0}
    # A paid model has nothing to be projected from here: refused, pointing at a pilot on that model.
    assert main(["estimate", "--journal", str(journal), "--models", "openai:gpt-4.1-mini"]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.count("\n") == 1
    assert "scripted/blind, scripted/tabular carry no tokens" in err and "run a pilot on the target model" in err
    assert "`shiftbench run --models openai:gpt-4.1-mini --methods blind,tabular --pilot 3" in err


@pytest.mark.parametrize("model", ["scripted:noisy=0.3", "scripted:recovering", "scripted:reckless",
                                   "scripted:gullible", "scripted:docs"])
def test_every_scripted_variant_prices_at_zero(model: str) -> None:
    from runner.cost.pricing import OFFLINE_PRICE, price_of, unpriced, with_overrides
    assert price_of(model) == OFFLINE_PRICE and unpriced([model]) == []
    assert model in with_overrides({}, "test") and with_overrides({}, "test").get(model) == OFFLINE_PRICE
    # A paid name that merely contains the word is still unpriced, and an explicit entry wins.
    assert unpriced([f"openai:{model}", "scriptedx"]) == [f"openai:{model}", "scriptedx"]
    own = {"input": 1.0, "cached_input": 0.1, "cache_write": 1.0, "output": 2.0}
    assert with_overrides({model: own}, "test")[model].output == 2.0


def test_a_pilot_of_a_noisy_scripted_model_is_priced_not_left_out(
        built_suite: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    journal = tmp_path / "j.sqlite"
    assert main(["run", "--dataset", str(built_suite), "--scenarios", "pitch_l1", "--methods", "blind",
                 "--models", "scripted:noisy=0.3", "--pilot", "1", "--display", "none",
                 "--journal", str(journal)]) == 0
    out = capsys.readouterr().out
    assert "no price" not in out and "Offline: the scripted models cost nothing" in out
    assert main(["estimate", "--journal", str(journal)]) == 0
    assert capsys.readouterr().out.count("scripted:noisy=0.3  blind") == 1


def test_streams_of_unequal_length_are_each_said_to_get_their_share_of_windows() -> None:
    row = ProjectedRow("m", "blind", "m", 400, 10, 3.0, 100.0, None, 0.01, 4.0, 3.0, 5.0, 4.0, 3.0, 5.0)
    assert "about the first 2 of each stream's 8 windows" in cap_buys([row], 1.0, [8, 8])
    unequal = cap_buys([row], 1.0, [4, 8])  # a quarter: 1 of 4 windows, 2 of 8: no one count is true
    assert "about the first 25% of each stream's windows (streams have 4 to 8)" in unequal
