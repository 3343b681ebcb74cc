"""The report of a batched run: live and batch spend apart, what batching saved, rounds and items per
outcome, against a journal written through the journal's own writers and figures computed by hand below.

Prices (USD per million tokens, the shipped table):
  openai:gpt-4.1               live 2.00 / cached 0.50 / output 8.00; batch 1.00 / cached 1.00 / output 4.00
  anthropic:claude-sonnet-4-6  live 3.00 / cached 0.30 / write 3.75 / output 15.00; batch half of each
"""

from __future__ import annotations

import csv
import io
from pathlib import Path

import orjson
import pytest

from runner.journal import Batch, EpisodeRow, ModelCallRow, NewRun, UnitRow, open_journal
from runner.report import build_report, render_csv, render_json, render_markdown, render_text
from runner.views.html_report import render_html

RUN = "run-b"
GPT, SONNET = "openai:gpt-4.1", "anthropic:claude-sonnet-4-6"
BLIND, TABULAR = f"{GPT}/blind/retail_l1", f"{SONNET}/tabular/retail_l1"


def _unit(stream: str, model: str, method: str, phase: str, seq: int) -> UnitRow:
    return UnitRow(RUN, f"{stream}/{phase}/t{seq}", stream, model, method, "retail_l1", phase, 1, seq, f"t{seq}",
                   seq, "hidden", "fam", 0)


UNITS = [_unit(BLIND, GPT, "blind", "test", 0), _unit(BLIND, GPT, "blind", "test", 1),
         _unit(TABULAR, SONNET, "tabular", "serving", 2), _unit(TABULAR, SONNET, "tabular", "test", 3)]
A, B, SERVE, T = (u.unit_id for u in UNITS)


def _episode(unit: UnitRow) -> EpisodeRow:
    return EpisodeRow(RUN, unit.unit_id, unit.stream_id, 1.0, "", "hidden", 2, 1, 0, 0, 0, 0.0, 1.0, "finish",
                      b"{}", b"{}", 0.0)


def _call(unit: str, stream: str, model: str, request_hash: str, cost: float, route: str, tokens: tuple[int, ...] = (),
          purpose: str = "agent", from_cache: bool = False) -> ModelCallRow:
    inp, cached, write, out = (*tokens, 0, 0, 0, 0)[:4]
    return ModelCallRow(RUN, unit, stream, purpose, model, request_hash, "ok", 1, from_cache, inp, cached, write, out,
                        cost, 0.1, 0.0, "", route=route)


CALLS = [
    # gpt-4.1 batch: 600 fresh x 1.00 + 400 cached x 1.00 + 200 out x 4.00 = 1800 -> $0.0018;
    #   live: 600 x 2.00 + 400 x 0.50 + 200 x 8.00 = 3000 -> $0.0030; saved $0.0012
    _call(A, BLIND, GPT, "hA1", 0.0018, "batch", (1000, 400, 0, 200)),
    # 2000 x 1.00 + 100 x 4.00 = 2400 -> $0.0024; live 4000 + 800 = 4800 -> $0.0048; saved $0.0024
    _call(B, BLIND, GPT, "hB1", 0.0024, "batch", (2000, 0, 0, 100)),
    # replayed from the response cache: sent nothing, saves nothing, counts as no call
    _call(B, BLIND, GPT, "hB1", 0.0, "batch", (2000, 0, 0, 100), from_cache=True),
    _call(SERVE, TABULAR, SONNET, "hS", 0.01, "live"),
    # the request that expired, then errored in its resubmission, then was sent live
    _call(T, TABULAR, SONNET, "hT", 0.02, "live"),
    # sonnet batch: 900 x 1.50 + 100 writes x 1.875 + 200 x 7.50 = 3037.5 -> $0.0030375;
    #   live: 900 x 3.00 + 100 x 3.75 + 200 x 15.00 = 6075 -> $0.006075; saved $0.0030375
    _call(T, TABULAR, SONNET, "hT2", 0.0030375, "batch", (1000, 0, 100, 200)),
    _call("", TABULAR, SONNET, "hM", 0.005, "live", purpose="method"),
    _call("", "", SONNET, "hP", 0.0001, "live", purpose="probe"),
]
LIVE = 0.01 + 0.02 + 0.005 + 0.0001
PAID_BATCH = 0.0018 + 0.0024 + 0.0030375
SAVED = 0.0012 + 0.0024 + 0.0030375


# (label, api, model, round, resubmission, submitted at, batch id, final status, ended at, items)
Item = tuple[str, str, str, bytes | None, str]
"""(custom_id, unit_id, status, answer, error)."""
BATCHES: list[tuple[str, str, str, int, int, float, str, str, float | None, list[Item]]] = [
    ("L1", "openai", GPT, 0, 0, 100.0, "id-L1", "collected", 130.0,
     [("hA1", A, "succeeded", b"x", ""), ("hB1", B, "succeeded", b"x", "")]),
    ("L2", "anthropic", SONNET, 0, 0, 100.0, "id-L2", "collected", 160.0,
     [("hT", T, "expired", None, "expired"), ("hT2", T, "succeeded", b"x", "")]),
    ("L3", "anthropic", SONNET, 1, 1, 200.0, "id-L3", "collected", 210.0, [("hT", T, "errored", None, "overloaded")]),
    ("L4", "openai", GPT, 2, 0, 300.0, "batch_abc", "submitted", None, [("hX", A, "pending", None, "")]),
]


def _batch_writes() -> list[Batch]:
    """Through the batcher's own writers and in its order, each its own commit: label and items before the
    create, then the id, then the results."""
    submitted, created, collected = Batch(), Batch(), Batch()
    for label, api, model, rnd, resubmission, at, batch_id, status, ended, items in BATCHES:
        submitted.provider_batch(RUN, label, api, "http://127.0.0.1:1", model, [(c, u) for c, u, *_ in items], rnd,
                                 resubmission, at)
        created.batch_created(RUN, label, batch_id)
        if status != "submitted":
            collected.batch_status(RUN, label, status, "ended", ended)
        for custom_id, _, outcome, answer, error in items:
            if outcome != "pending":
                collected.batch_item_result(RUN, label, custom_id, outcome, answer, error)
    return [submitted, created, collected]


async def _write(path: Path, batched: bool) -> None:
    config = orjson.dumps({"models": [GPT, SONNET], "methods": ["blind", "tabular"]}).decode()
    batch = Batch().new_run(NewRun(RUN, 1.0, 1.0, config, "x", "d", "f", "{}", "c", None, 1), UNITS)
    for unit in UNITS:
        batch.episode(_episode(unit))
    for call in CALLS if batched else [c._replace(route="live") for c in CALLS]:
        batch.model_call(call)
    async with open_journal(path) as journal:
        await journal.commit(batch)
        for later in _batch_writes() if batched else []:
            await journal.commit(later)


@pytest.fixture
async def batched(tmp_path: Path) -> Path:
    path = tmp_path / "journal.sqlite"
    await _write(path, batched=True)
    return path


async def test_live_and_batch_spend_apart_and_the_saving(batched: Path) -> None:
    report = await build_report(batched, RUN)
    b = report.batch
    assert b is not None
    assert b.spend.live_usd == pytest.approx(LIVE)
    assert b.spend.batch_usd == pytest.approx(PAID_BATCH)
    assert b.spend.saved_usd == pytest.approx(SAVED)
    assert b.spend.batch_calls == 3
    assert b.spend.live_usd + b.spend.batch_usd == pytest.approx(report.cost_usd.total)
    streams = {(s.model, s.method): s.spend for s in b.streams}
    assert streams[(GPT, "blind")].batch_usd == pytest.approx(0.0042)
    assert streams[(GPT, "blind")].saved_usd == pytest.approx(0.0036)
    assert streams[(GPT, "blind")].live_usd == 0.0
    assert streams[(SONNET, "tabular")].live_usd == pytest.approx(0.035)
    assert streams[(SONNET, "tabular")].saved_usd == pytest.approx(0.0030375)
    assert b.unpriced == []


async def test_rounds_turnaround_items_and_outstanding_batches(batched: Path) -> None:
    b = (await build_report(batched, RUN)).batch
    assert b is not None
    assert (b.batches, b.rounds) == (4, 2)  # A's requests were in L1 and L4, T's in L2 and L3, B's in L1
    assert (b.turnaround_p50_s, b.turnaround_max_s) == (30.0, 60.0)  # of 30, 60 and 10 s; L4 has not ended
    assert b.items == {"succeeded": 3, "resubmitted": 1, "sent_live": 1, "errored": 1, "expired": 1, "canceled": 0,
                       "pending": 1}
    assert b.outstanding == ["openai batch_abc (submitted)"]


async def test_every_format_shows_the_batch_figures(batched: Path) -> None:
    report = await build_report(batched, RUN)
    text = render_text(report)
    assert (f"batch: live ${LIVE:.4f}, batch ${PAID_BATCH:.4f} (3 calls), batching saved ${SAVED:.4f}; "
            "4 batches in 2 rounds; turnaround p50 30 s, max 60 s") in text
    assert "1 OUTSTANDING" in text and "batch_abc" in text
    assert "Batch items" in text and "sent live" in text
    markdown = render_markdown(report)
    assert "## Batch API" in markdown and f"| (run) | all calls | {LIVE:.4f} | {PAID_BATCH:.4f} |" in markdown
    rows = {(r["model"], r["method"]): r for r in csv.DictReader(io.StringIO(render_csv(report)))}
    assert float(rows[(GPT, "blind")]["batch_saved_usd"]) == pytest.approx(0.0036)
    assert rows[(SONNET, "tabular")]["batch_calls"] == "1"
    sealed = orjson.loads(render_json(report))
    assert sealed["batch"]["spend"]["saved_usd"] == pytest.approx(SAVED)
    page = render_html(report)
    assert "Batch API" in page and f"{SAVED:.4f}" in page and "batch_abc" in page


async def test_a_live_run_reads_as_before(tmp_path: Path) -> None:
    path = tmp_path / "journal.sqlite"
    await _write(path, batched=False)
    report = await build_report(path, RUN)
    assert report.batch is None
    for rendered in (render_text(report), render_markdown(report), render_csv(report)):
        assert "batch" not in rendered.lower()
    assert "batch" not in orjson.loads(render_json(report))
    assert "Batch API" not in render_html(report)
