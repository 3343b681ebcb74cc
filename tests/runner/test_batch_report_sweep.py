"""A real `--batch tests` pilot against the mock's OpenAI batch API, then its report, its pilot projection and
`estimate`: the batch spend is what the batch calls cost, the saving is their tokens at the live rates
(computed here from the journal's token sums) minus that, and every item succeeded in its batch."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import anyio
import pytest

from bench.mock_batch_state import BatchSettings
from bench.mock_provider import serve_mock
from runner.cli import main
from runner.config.settings import SweepConfig
from runner.report import build_report, render_text
from runner.schedule.sweep import start_sweep

LIVE = {"input": 2.0, "cached_input": 0.5, "cache_write": 2.5, "output": 8.0}
BATCH = {"input": 1.0, "cached_input": 0.3, "cache_write": 1.25, "output": 4.0}  # not half: the saving is computed
KEY = "sk-loopback-test-key-batch-report"


@pytest.fixture(scope="module")
def batched(built_suite: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str, list[str]]:
    journal = tmp_path_factory.mktemp("batch-report") / "j.sqlite"
    lines: list[str] = []

    async def go() -> str:
        async with serve_mock() as mock:
            mock.batches.settings = BatchSettings(latency_s=0.05)
            model = f"openai-compatible:mock@{mock.base_url}/v1"
            config = SweepConfig(models=(model,), methods=("blind",), scenarios=("banking_l1",),
                                 dataset=str(built_suite), pilot=2, prices={model: {**LIVE, "batch": BATCH}},
                                 batch="tests", budget=50.0,
                                 batch_settings={"wait_s": 0.05, "poll_s": 0.05, "poll_max_s": 0.2})
            outcome = await start_sweep(config, journal, "none", lines.append)
        assert outcome.status == "completed"
        return outcome.run_id

    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("OPENAI_COMPATIBLE_API_KEY", KEY)
        run_id = anyio.run(go)
    return journal, run_id, lines


def _sums(journal: Path) -> tuple[float, float, int, int]:
    with sqlite3.connect(journal) as db:
        paid, fresh, cached, written, output, calls = db.execute(
            "SELECT sum(cost_usd), sum(input_tokens - cached_input_tokens - cache_write_tokens), "
            "sum(cached_input_tokens), sum(cache_write_tokens), sum(output_tokens), count(*) FROM model_calls "
            "WHERE route = 'batch' AND from_cache = 0").fetchone()
        items = db.execute("SELECT count(*) FROM batch_items").fetchone()[0]
    at_live = (fresh * LIVE["input"] + cached * LIVE["cached_input"] + written * LIVE["cache_write"]
               + output * LIVE["output"]) / 1e6
    return paid, at_live, calls, items


def test_the_report_of_a_batched_pilot(batched: tuple[Path, str, list[str]]) -> None:
    journal, run_id, _ = batched
    report = anyio.run(build_report, journal, run_id)
    b = report.batch
    assert b is not None
    paid, at_live, calls, items = _sums(journal)
    assert calls > 0
    assert b.spend.batch_usd == pytest.approx(paid, rel=1e-9)
    assert b.spend.saved_usd == pytest.approx(at_live - paid, rel=1e-9)
    assert b.spend.batch_calls == calls
    assert b.spend.live_usd + b.spend.batch_usd == pytest.approx(report.cost_usd.total, rel=1e-9)
    assert b.items["succeeded"] == items and b.items["pending"] == 0 and b.outstanding == []
    assert b.rounds >= 2 and b.batches >= b.rounds  # a test episode of T turns needs about T rounds
    assert f"batching saved ${at_live - paid:.4f}" in render_text(report)


def test_the_pilot_and_estimate_project_the_batched_sweep(
        batched: tuple[Path, str, list[str]], capsys: pytest.CaptureFixture[str]) -> None:
    journal, run_id, lines = batched
    assert "with --batch tests ($" in "\n".join(lines)  # the pilot's line: the batched figure, the live one beside
    assert main(["estimate", run_id, "--journal", str(journal), "--json"]) == 0  # the run's own setting
    (row,) = json.loads(capsys.readouterr().out)
    paid, at_live, _, _ = _sums(journal)
    # blind runs test episodes only: the batched projection is the live one scaled by what batching charged
    assert row["batched_usd"] / row["projected_usd"] == pytest.approx(paid / at_live, rel=1e-6)
    assert main(["estimate", run_id, "--journal", str(journal), "--batch", "off", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)[0]["batched_usd"] is None


@pytest.mark.parametrize("width", [390, 1280])
def test_a_batched_runs_page_never_scrolls_sideways(batched: tuple[Path, str, list[str]], tmp_path: Path,
                                                   width: int) -> None:
    # The page test (tests/runner/views/test_html_browser.py) loads a live run's page, which has no batch
    # section: this one holds the batch tables to the same rule, in the same browser.
    from bench.headless import Chromium, chromium_path
    from tests.runner.views.test_html_browser import PROBE

    if chromium_path() is None:
        pytest.skip("no chromium: apt-get install -y chromium")
    journal, run_id, _ = batched
    page_path = tmp_path / "report.html"
    assert main(["report", run_id, "--html", str(page_path), "--journal", str(journal)]) == 0
    from html import escape

    from runner.report.batch_tables import BATCH_ITEMS_TITLE, BATCH_SPEND_TITLE

    html = page_path.read_text(encoding="utf-8")
    assert escape(BATCH_SPEND_TITLE) in html and escape(BATCH_ITEMS_TITLE) in html  # the section is on the page
    with Chromium(width=width) as browser:
        page = browser.open(page_path, probe=PROBE)
    assert page.errors == []
    scroll, viewport, _, outside = json.loads(page.probe)
    assert viewport == width and scroll <= viewport and outside == [], f"{scroll} px wide in {viewport}: {outside}"
