"""A sweep with `--batch tests` against the mock's batch APIs, in process: test calls go through batches at
the batch price (route 'batch'), serving stays live, rewards equal the live sweep's."""

from __future__ import annotations

import dataclasses
import json
import sqlite3
from pathlib import Path

import pytest

from bench.mock_batch_state import BatchSettings
from bench.mock_provider import MockUsage, Recorded, Reply, Responder, Response, serve_mock, tool_loop
from runner.config.settings import SweepConfig
from runner.schedule.sweep import resume_sweep, start_sweep
from simulators.errors import ShiftbenchInputError
from tests.support import episode_rewards, quiet

LIVE = {"input": 2.0, "cached_input": 0.5, "cache_write": 2.5, "output": 8.0}
BATCH = {"input": 1.0, "cached_input": 0.25, "cache_write": 1.25, "output": 4.0}
LIVE_OUTPUT_ONLY = {"input": 0.0, "cached_input": 0.0, "cache_write": 0.0}
KEY = "sk-loopback-test-key-0123456789"


@pytest.fixture(autouse=True)
def api_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_COMPATIBLE_API_KEY", KEY)


def config_for(base_url: str, suite: Path, batch: str, methods: tuple[str, ...] = ("blind", "tabular"),
               start: str = "after_serving", **more: object) -> SweepConfig:
    model = f"openai-compatible:mock@{base_url}/v1"
    return SweepConfig(models=(model,), methods=methods, scenarios=("banking_l1",), dataset=str(suite),
                       pilot=2, prices={model: {**LIVE, "batch": BATCH}}, batch=batch,
                       batch_settings={"wait_s": 0.05, "poll_s": 0.05, "poll_max_s": 0.2, "start": start}, **more)  # type: ignore[arg-type]


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


async def test_budget_stop_while_batching_keeps_the_cap_and_resumes_to_the_same_rewards(
        built_suite: Path, tmp_path: Path) -> None:
    # Answers near the worst case (60 of 64 output tokens), so reservations are close to what calls cost.
    # One learning method: a pilot's projection needs a finished episode of each method, and a blind
    # stream's test sets may all be cut by the stop.
    async with serve_mock(tool_loop(calls_before_finish=1, output_tokens=60)) as mock:
        mock.batches.settings = BatchSettings(latency_s=0.5)
        free = await start_sweep(config_for(mock.base_url, built_suite, "tests", ("tabular",), "window", max_tokens=64),
                                 tmp_path / "free.sqlite", "none", quiet)
        with sqlite3.connect(tmp_path / "free.sqlite") as db:
            full_cost = db.execute("SELECT sum(cost_usd) FROM model_calls").fetchone()[0]
        journal = tmp_path / "capped.sqlite"
        cap = full_cost / 2
        settings = config_for(mock.base_url, built_suite, "tests", ("tabular",), "window", max_tokens=64, budget=cap)
        capped = await start_sweep(settings, journal, "none", quiet)
        with sqlite3.connect(journal) as db:
            spent = db.execute("SELECT sum(cost_usd) FROM model_calls").fetchone()[0]
            left_open = db.execute("SELECT count(*) FROM provider_batches WHERE status IN "
                                   "('submitting', 'submitted', 'ended')").fetchone()[0]
        resumed = await resume_sweep(capped.run_id, journal, "none", quiet, budget=full_cost * 10)
        submissions = dict(mock.batches.submissions)
    assert free.status == "completed" and capped.status == "budget_exhausted" and resumed.status == "completed"
    assert spent <= cap and left_open == 0  # a batch outstanding at the stop ended and was collected
    assert episode_rewards(journal) == episode_rewards(tmp_path / "free.sqlite")
    with sqlite3.connect(journal) as db:
        answered = dict(db.execute("SELECT custom_id, count(*) FROM batch_items WHERE status = 'succeeded' "
                                   "GROUP BY custom_id").fetchall())
        in_batches = dict(db.execute("SELECT custom_id, count(*) FROM batch_items GROUP BY custom_id").fetchall())
    assert set(answered.values()) == {1}  # no answer was bought twice
    assert all(submissions[custom_id] == count for custom_id, count in in_batches.items())


async def test_a_budget_stop_lets_the_batches_outstanding_end_and_resumes_to_the_same_rewards(
        built_suite: Path, tmp_path: Path) -> None:
    # Only output tokens are priced and every answer has 60 of the 64 allowed, so each reservation is
    # within 7% of the call's cost; the cap pays for about twelve live calls. Batches take a second, so
    # the test episodes in flight when the cap stops new work wait on an outstanding batch: the stop lets
    # every batch end (their items hold room the cap already paid for), none is cancelled, their
    # episodes are journaled, and a resume with more money ends with the free run's rewards.
    live, batch = {**LIVE_OUTPUT_ONLY, "output": 8.0}, {**LIVE_OUTPUT_ONLY, "output": 4.0}
    paid, worst = 60 * 8.0 / 1e6, 64 * 8.0 / 1e6
    cap = 9 * paid + 4 * worst / 2 + worst + paid / 2
    answer = tool_loop(calls_before_finish=1, output_tokens=60)

    def slow_live(request: Recorded) -> Response:  # a batch item's answer does not wait on this
        reply = answer(request)
        return dataclasses.replace(reply, delay_s=0.25) if isinstance(reply, Reply) else reply

    def settings(base_url: str, budget: float | None = None) -> SweepConfig:
        config = config_for(base_url, built_suite, "tests", ("tabular",), "window", max_tokens=64, budget=budget)
        return dataclasses.replace(config, prices={config.models[0]: {**live, "batch": batch}})

    async with serve_mock(slow_live) as mock:
        mock.batches.settings = BatchSettings(latency_s=0.1)
        free = await start_sweep(settings(mock.base_url), tmp_path / "free.sqlite", "none", quiet)
        mock.batches.settings = BatchSettings(latency_s=1.0)
        before = set(mock.batches.batches)
        journal = tmp_path / "capped.sqlite"
        capped = await start_sweep(settings(mock.base_url, cap), journal, "none", quiet)
        made = [batch for key, batch in mock.batches.batches.items() if key not in before]
        with sqlite3.connect(journal) as db:
            spent = db.execute("SELECT sum(cost_usd) FROM model_calls").fetchone()[0]
            statuses = [row[0] for row in db.execute("SELECT status FROM provider_batches")]
            finished_tests = db.execute("SELECT count(*) FROM episodes JOIN units USING (run_id, unit_id) "
                                        "WHERE units.phase = 'test'").fetchone()[0]
        mock.batches.settings = BatchSettings(latency_s=0.1)
        resumed = await resume_sweep(capped.run_id, journal, "none", quiet, budget=1.0)
    assert free.status == "completed" and capped.status == "budget_exhausted" and resumed.status == "completed"
    assert made and all(batch.cancel_at is None for batch in made)  # nothing cancelled at the provider
    assert statuses and set(statuses) == {"collected"}  # ... nor in the journal
    assert spent <= cap and finished_tests >= 1  # answered by batches that ended after the stop began
    assert episode_rewards(journal) == episode_rewards(tmp_path / "free.sqlite")


async def test_merged_batched_shards_report_the_batches_of_the_one_process_run(built_suite: Path,
                                                                                tmp_path: Path) -> None:
    from runner.report import build_report
    from runner.shards.merge import merge_shards
    from runner.shards.spec import ShardSpec
    from runner.shards.start import start_shard

    async with serve_mock() as mock:
        mock.batches.settings = BatchSettings(latency_s=0.05)
        config = config_for(mock.base_url, built_suite, "tests")
        one = await start_sweep(config, tmp_path / "one.sqlite", "none", quiet)
        shards = [tmp_path / f"shard-{index}.sqlite" for index in range(2)]
        for index, path in enumerate(shards):
            assert (await start_shard(config, ShardSpec(index, 2), path, "none", quiet)).status == "completed"
    merged = tmp_path / "merged.sqlite"
    sweep = (await merge_shards(merged, shards, say=quiet)).sweep.sweep_id
    alone = (await build_report(tmp_path / "one.sqlite", one.run_id)).batch
    joined = (await build_report(merged, sweep)).batch
    assert alone is not None and joined is not None
    with sqlite3.connect(merged) as db:
        items = db.execute("SELECT count(*) FROM batch_items WHERE run_id = ?", (sweep,)).fetchone()[0]
        batches = db.execute("SELECT count(*) FROM provider_batches WHERE run_id = ?", (sweep,)).fetchone()[0]
    with sqlite3.connect(tmp_path / "one.sqlite") as db:
        alone_items = db.execute("SELECT count(*) FROM batch_items").fetchone()[0]
    assert items == alone_items > 0 and batches >= alone.batches > 0  # each shard made its own batches
    assert joined.items == alone.items and joined.batches == batches and joined.rounds == alone.rounds
    shard_spend = 0.0
    for path in shards:  # the merged batch spend is the shards' own, summed from their journals
        with sqlite3.connect(path) as db:
            shard_spend += db.execute("SELECT sum(cost_usd) FROM model_calls WHERE route = 'batch'").fetchone()[0]
    assert joined.spend.batch_usd == pytest.approx(shard_spend, rel=1e-9)


@pytest.mark.parametrize("on_failure", ["resubmit", "live"])
async def test_errored_items_are_resubmitted_once_then_sent_live(built_suite: Path, tmp_path: Path,
                                                                 on_failure: str) -> None:
    async with serve_mock() as mock:
        # The mock errors the same custom ids every time it sees them: the resubmission fails too.
        mock.batches.settings = BatchSettings(error_fraction=0.3)
        live = await start_sweep(config_for(mock.base_url, built_suite, "off"), tmp_path / "live.sqlite", "none",
                                 quiet)
        config = config_for(mock.base_url, built_suite, "tests")
        config = dataclasses.replace(config, batch_settings={**config.batch_settings, "on_item_failure": on_failure})
        batched = await start_sweep(config, tmp_path / "b.sqlite", "none", quiet)
        submissions = dict(mock.batches.submissions)
    assert live.status == batched.status == "completed"
    assert episode_rewards(tmp_path / "b.sqlite") == episode_rewards(tmp_path / "live.sqlite")
    with sqlite3.connect(tmp_path / "b.sqlite") as db:
        errored = {row[0] for row in db.execute("SELECT custom_id FROM batch_items WHERE status = 'errored'")}
        resubmitted = {row[0] for row in db.execute(
            "SELECT i.custom_id FROM batch_items i JOIN provider_batches b "
            "ON b.run_id = i.run_id AND b.label = i.label "
            "WHERE b.resubmission = 1")}
        went_live = {row[0] for row in db.execute(
            "SELECT c.request_hash FROM model_calls c JOIN units u ON u.unit_id = c.unit_id "
            "WHERE u.phase = 'test' AND c.route = 'live'")}
    assert errored and went_live == errored
    tries = 2 if on_failure == "resubmit" else 1
    assert {submissions[custom_id] for custom_id in errored} == {tries}
    assert resubmitted == (errored if on_failure == "resubmit" else set())


def judging(inner: Responder) -> Responder:
    """`inner`'s answers, except that a pitch judge's request gets a verdict labelling every item."""

    def respond(request: Recorded) -> Response:
        messages = request.body.get("messages") if isinstance(request.body, dict) else None
        messages = messages if isinstance(messages, list) else []
        system = next((m.get("content") for m in messages if m.get("role") == "system"), "")
        if isinstance(system, str) and system.startswith("You grade a sales pitch"):
            sheet = str(messages[-1].get("content")).split("(id: fact):\n", 1)[1].split("\n\nPitch:", 1)[0]
            ids = [line[2:].split(":", 1)[0] for line in sheet.splitlines() if line.startswith("- ")]
            return Reply(text=json.dumps({"labels": dict.fromkeys(ids, "mentioned"), "invented_claims": []}),
                         usage=MockUsage(input_tokens=300, output_tokens=40))
        return inner(request)

    return respond


async def test_the_pitch_judge_of_test_episodes_is_batched_and_of_serving_live(built_suite: Path,
                                                                               tmp_path: Path) -> None:
    async with serve_mock(judging(tool_loop(calls_before_finish=1))) as mock:
        def config(batch: str) -> SweepConfig:
            base = dataclasses.replace(config_for(mock.base_url, built_suite, batch), scenarios=("pitch_l1",))
            return dataclasses.replace(base, judge=base.models[0])

        live = await start_sweep(config("off"), tmp_path / "live.sqlite", "none", quiet)
        batched = await start_sweep(config("tests"), tmp_path / "b.sqlite", "none", quiet)
    assert live.status == batched.status == "completed"
    assert episode_rewards(tmp_path / "b.sqlite") == episode_rewards(tmp_path / "live.sqlite")
    with sqlite3.connect(tmp_path / "b.sqlite") as db:
        routes = dict(db.execute(
            "SELECT u.phase || ':' || c.purpose || ':' || c.route, count(*) FROM model_calls c JOIN units u "
            "ON u.run_id = c.run_id AND u.unit_id = c.unit_id GROUP BY 1").fetchall())
    assert set(routes) == {"serving:agent:live", "serving:judge:live", "test:agent:batch", "test:judge:batch"}


async def test_a_server_without_a_batch_api_is_refused_before_a_paid_call(built_suite: Path, tmp_path: Path) -> None:
    async with serve_mock() as mock:
        mock.batches.offered = False  # as llama.cpp and vLLM answer
        with pytest.raises(ShiftbenchInputError) as refused:
            await start_sweep(config_for(mock.base_url, built_suite, "tests"), tmp_path / "j.sqlite", "none", quiet)
        paid = [r for r in mock.requests if r.path.endswith("/chat/completions")]
    assert str(refused.value) == (
        f"--batch tests: 'openai-compatible:mock@{mock.base_url}/v1' at {mock.base_url}/v1 offers no batch API "
        "(GET /batches answered 404); run it with --batch off")
    assert not paid and not (tmp_path / "j.sqlite").exists()  # refused before the probe; nothing journaled
