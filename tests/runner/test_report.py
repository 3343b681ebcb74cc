"""The report against a small hand-built journal whose every number is computed by hand below."""

from __future__ import annotations

import csv
import hashlib
import io
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path

import orjson
import pytest

from runner.journal import Batch, open_journal
from runner.report import (
    Report,
    build_report,
    percentile,
    render_csv,
    render_json,
    render_markdown,
    render_text,
)
from runner.report.scores import scores_seal
from runner.stats.seal import is_sealed_intact
from simulators.errors import ShiftbenchInputError

RUN = "run-1"
MODEL = "openai/gpt-4o"  # a '/' in the name: streams must never be split on it


@dataclass
class Unit:
    """One planned unit; finished (an episode row) when reward is set."""

    method: str
    scenario: str
    phase: str
    window: int
    category: str
    reward: float | None = None
    latency_s: float = 1.0
    cost_usd: float = 0.0
    input_tokens: int = 100
    output_tokens: int = 10
    model: str = MODEL

    @property
    def stream_id(self) -> str:
        return f"{self.model}/{self.method}/{self.scenario}"


@dataclass
class Call:
    unit: Unit | None
    purpose: str
    cost_usd: float
    input_tokens: int = 0
    output_tokens: int = 0
    stream_id: str = ""
    status: str = "ok"
    estimated: bool = False


Row = tuple[object, ...]


def _unit_rows(run_id: str, units: Sequence[Unit]) -> tuple[list[Row], list[Row]]:
    unit_rows: list[Row] = []
    episode_rows: list[Row] = []
    for seq, unit in enumerate(units):
        unit_id = f"{unit.stream_id}/{unit.phase}/t{seq}"
        status = "pending" if unit.reward is None else "done"
        unit_rows.append((run_id, unit_id, unit.stream_id, unit.model, unit.method, unit.scenario, unit.phase,
                          unit.window, seq, f"t{seq}", seq, unit.category, status))
        if unit.reward is not None:
            episode_rows.append((run_id, unit_id, unit.stream_id, unit.reward, "", unit.category, 3, 2,
                                 unit.input_tokens, 0, unit.output_tokens, unit.cost_usd, unit.latency_s,
                                 "finish", b"{}", b"{}", 0.0))
    return unit_rows, episode_rows


async def write_run(path: Path, run_id: str, units: Sequence[Unit], calls: Sequence[Call] = (),
                    status: str = "completed", created_at: float = 1000.0, budget_usd: float | None = None,
                    stop_reason: str = "", config: object | None = None) -> None:
    """Fill a journal the way the engine does: a run row, planned units, finished episodes, model calls."""
    config = config if config is not None else {"models": [MODEL], "methods": ["blind"], "block_size": 1}
    unit_rows, episode_rows = _unit_rows(run_id, units)
    ids = {id(unit): row[1] for unit, row in zip(units, unit_rows, strict=True)}
    call_rows = [(run_id, ids[id(c.unit)] if c.unit else "", c.unit.stream_id if c.unit else c.stream_id,
                  c.purpose, MODEL, "h", c.status, 1, 0, c.input_tokens, 0, 0, c.output_tokens, c.cost_usd, 0.5,
                  0.0, int(c.estimated)) for c in calls]
    batch = Batch().add(
        "INSERT INTO runs (run_id, created_at, updated_at, status, stop_reason, config, config_hash, dataset_path,"
        " dataset_fingerprint, dataset_files, code_version, budget_usd)"
        " VALUES (?, ?, ?, ?, ?, ?, 'x', 'd', 'f', '{}', 'c', ?)",
        (run_id, created_at, created_at, status, stop_reason, orjson.dumps(config).decode(), budget_usd))
    batch.add_many("INSERT INTO units (run_id, unit_id, stream_id, model, method, scenario, phase, window, seq,"
                   " task_id, position, category, status) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", unit_rows)
    batch.add_many("INSERT INTO episodes VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", episode_rows)
    batch.add_many("INSERT INTO model_calls (run_id, unit_id, stream_id, purpose, model, request_hash, status,"
                   " attempts, from_cache, input_tokens, cached_input_tokens, cache_write_tokens, output_tokens,"
                   " cost_usd, latency_s, created_at, usage_estimated)"
                   " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                   call_rows)
    async with open_journal(path) as journal:
        await journal.commit(batch)


def blind_units() -> list[Unit]:
    """Stream (gpt-4o, blind): retail_l1 over two windows and pitch_l1, 11 finished episodes, latency 1..11 s.

    retail_l1 test hidden [1, 0 | 1, 1] -> 75.0; fully specified [1 | 0, 1] -> 66.67; n 7
      window 1: H 50.0, F 100.0, n 3; window 2: H 100.0, F 50.0, n 4
    pitch_l1 test hidden [0.5, 0.25] -> 37.5; no fully specified tasks; n 2
    Avg H = (75 + 37.5) / 2 = 56.25; Avg F = retail only = 66.67
    """
    spec = [("retail_l1", "serving", 1, "hidden", 1.0), ("retail_l1", "serving", 2, "fully_specified", 0.0),
            ("retail_l1", "test", 1, "hidden", 1.0), ("retail_l1", "test", 1, "hidden", 0.0),
            ("retail_l1", "test", 1, "fully_specified", 1.0),
            ("retail_l1", "test", 2, "hidden", 1.0), ("retail_l1", "test", 2, "hidden", 1.0),
            ("retail_l1", "test", 2, "fully_specified", 0.0), ("retail_l1", "test", 2, "fully_specified", 1.0),
            ("pitch_l1", "test", 1, "hidden", 0.5), ("pitch_l1", "test", 1, "hidden", 0.25)]
    return [Unit("blind", scenario, phase, window, category, reward, latency_s=float(i + 1), cost_usd=0.01)
            for i, (scenario, phase, window, category, reward) in enumerate(spec)]


def oracle_units() -> list[Unit]:
    """Stream (gpt-4o, oracle): one of two retail test units done, so the stream is partial."""
    return [Unit("oracle", "retail_l1", "test", 1, "hidden", 1.0, latency_s=2.0, cost_usd=0.02),
            Unit("oracle", "retail_l1", "test", 1, "hidden")]


def blind_calls(units: list[Unit]) -> list[Call]:
    """Agent $0.22 and 2,200 / 220 tokens over the 11 episodes; judge $0.05 on pitch; method $0.11, of
    which $0.06 on a call outside any unit, claimed through its stream id."""
    calls = [Call(unit, "agent", 0.02, 200, 20) for unit in units]
    calls += [Call(units[9], "judge", 0.03), Call(units[10], "judge", 0.02), Call(units[0], "method", 0.05),
              Call(None, "method", 0.06, stream_id=units[0].stream_id)]
    return calls


@pytest.fixture
async def journal(tmp_path: Path) -> Path:
    path = tmp_path / "journal.sqlite"
    blind = blind_units()
    # Plus a $1 judge call no unit or stream claims: it counts for the run, for no stream.
    calls = [*blind_calls(blind), Call(None, "judge", 1.0, stream_id="gone")]
    await write_run(path, RUN, [*blind, *oracle_units()], calls, budget_usd=5.0)
    return path


async def _report(path: Path) -> Report:
    return await build_report(path, RUN)


async def test_setting_scores_are_mean_reward_x_100_per_category(journal: Path) -> None:
    blind = (await _report(journal)).streams[0]
    assert (blind.model, blind.method) == (MODEL, "blind")
    retail, pitch = blind.settings["retail_l1"], blind.settings["pitch_l1"]
    assert retail.hidden == pytest.approx(75.0)
    assert retail.fully_specified == pytest.approx(200 / 3)
    assert retail.n == 7
    assert pitch.hidden == pytest.approx(37.5)
    assert pitch.fully_specified is None
    assert pitch.n == 2


async def test_averages_weigh_each_setting_once_and_avg_f_skips_pitch(journal: Path) -> None:
    blind = (await _report(journal)).streams[0]
    assert blind.avg_h == pytest.approx(56.25)
    assert blind.avg_f == pytest.approx(200 / 3)


async def test_settings_follow_format_order_and_streams_the_planning_order(journal: Path) -> None:
    report = await _report(journal)
    assert [s.method for s in report.streams] == ["blind", "oracle"]
    assert list(report.streams[0].settings) == ["retail_l1", "pitch_l1"]


async def test_per_window_scores(journal: Path) -> None:
    windows = (await _report(journal)).streams[0].settings["retail_l1"].windows
    assert [(w.window, w.hidden, w.fully_specified, w.n) for w in windows] == [
        (1, 50.0, 100.0, 3), (2, 100.0, 50.0, 4)]


async def test_stream_is_partial_until_every_planned_test_unit_is_done(journal: Path) -> None:
    blind, oracle = (await _report(journal)).streams
    assert blind.complete and blind.settings["retail_l1"].complete
    assert not oracle.complete
    assert (oracle.test_done, oracle.test_planned) == (1, 2)
    assert oracle.avg_h == pytest.approx(100.0)
    assert oracle.avg_f is None
    assert "partial 1/2" in render_text(await _report(journal))


async def test_latency_percentiles_over_all_finished_episodes(journal: Path) -> None:
    blind = (await _report(journal)).streams[0]
    # Latencies 1..11 s: p50 = 6; p95 at rank 9.5 between 10 and 11.
    assert blind.latency_p50_s == pytest.approx(6.0)
    assert blind.latency_p95_s == pytest.approx(10.5)


def test_percentile_edges() -> None:
    assert percentile([], 50) is None
    assert percentile([3.0], 95) == 3.0
    assert percentile([4.0, 1.0, 3.0, 2.0], 50) == pytest.approx(2.5)


async def test_spend_by_purpose_and_per_task(journal: Path) -> None:
    report = await _report(journal)
    blind = report.streams[0]
    assert blind.episodes == 11
    assert blind.cost_usd.agent == pytest.approx(0.22)
    assert blind.cost_usd.judge == pytest.approx(0.05)
    assert blind.cost_usd.method == pytest.approx(0.11)
    assert blind.cost_usd.total == pytest.approx(0.38)
    assert blind.cost_per_task_usd is not None
    assert blind.cost_per_task_usd.total == pytest.approx(0.38 / 11)
    assert blind.input_tokens_per_task == pytest.approx(200.0)
    assert blind.output_tokens_per_task == pytest.approx(20.0)
    # The oracle stream journaled no calls of its own; the run total still holds the unclaimed judge call.
    assert report.streams[1].cost_usd.total == 0.0
    assert report.cost_usd.total == pytest.approx(1.38)
    assert report.cost_usd.judge == pytest.approx(1.05)


async def test_agent_spend_falls_back_to_episodes_without_agent_calls(tmp_path: Path) -> None:
    path = tmp_path / "journal.sqlite"
    await write_run(path, RUN, blind_units())  # every episode cost $0.01, tokens 100 / 10
    report = await build_report(path, RUN)
    blind = report.streams[0]
    assert blind.cost_usd.agent == pytest.approx(0.11)
    assert blind.input_tokens == 1100
    assert report.cost_usd.total == pytest.approx(0.11)


async def test_unknown_run_names_the_journal_and_the_runs_command(journal: Path) -> None:
    with pytest.raises(ShiftbenchInputError) as caught:
        await build_report(journal, "nope")
    assert str(journal) in str(caught.value)
    assert "shiftbench runs" in str(caught.value)


async def test_missing_journal_is_an_input_error(tmp_path: Path) -> None:
    with pytest.raises(ShiftbenchInputError):
        await build_report(tmp_path / "absent.sqlite", RUN)


async def test_json_shape(journal: Path) -> None:
    data = json.loads(render_json(await _report(journal)))
    assert data["run_id"] == RUN
    assert data["status"] == "completed"
    blind = data["streams"][0]
    assert {"model", "method", "avg_h", "avg_f", "settings", "complete"} <= set(blind)
    assert blind["settings"]["pitch_l1"] == {**blind["settings"]["pitch_l1"],
                                             "hidden": 37.5, "fully_specified": None, "n": 2}
    # Tasks without a family are their own clusters: window 1's hidden [1, 0] is two, too few for an interval.
    assert blind["settings"]["retail_l1"]["windows"][0] == {"window": 1, "hidden": 50.0,
                                                            "hidden_ci": "2 tasks: too few for an interval",
                                                            "fully_specified": 100.0,
                                                            "fully_specified_ci": "no interval (1 family)", "n": 3}
    assert blind["avg_h_ci"] == "pitch_l1: 2 tasks: too few for an interval"  # the average is as sure as its parts
    assert data["bootstrap"]["draws"] == 2000 and data["provenance"]["code_version"] == "c"


async def test_csv_is_one_row_per_stream_with_a_column_group_per_setting(journal: Path) -> None:
    rows = list(csv.reader(io.StringIO(render_csv(await _report(journal)))))
    header = rows[0]
    assert header[:6] == ["run_id", "model", "method", "complete", "avg_h", "avg_f"]
    assert header[6:12] == ["retail_l1_h", "retail_l1_f", "retail_l1_n", "pitch_l1_h", "pitch_l1_f", "pitch_l1_n"]
    assert {"agent_usd_per_task", "judge_usd_per_task", "method_usd_per_task", "total_usd_per_task",
            "latency_p50_s", "latency_p95_s"} <= set(header)
    blind = dict(zip(header, rows[1], strict=True))
    oracle = dict(zip(header, rows[2], strict=True))
    assert (blind["model"], blind["avg_h"], blind["pitch_l1_f"], blind["complete"]) == (MODEL, "56.25", "", "true")
    assert (oracle["pitch_l1_h"], oracle["complete"]) == ("", "false")


async def test_text_and_markdown_show_the_numbers(journal: Path) -> None:
    report = await _report(journal)
    text = render_text(report)
    blind_row = next(line for line in text.splitlines() if "blind" in line and "complete" in line)
    interval = r"\[\d+\.\d, \d+\.\d\]"
    # Avg H rests on pitch_l1's two tasks, too few for an interval, and says so; Avg F's interval beside it.
    too_few = r"2 tasks: too few for an interval"
    assert re.search(rf"blind +56\.2 +pitch_l1: {too_few} +66\.7 +{interval} +9 ", blind_row), blind_row
    assert "of cap $5.00" in text
    markdown = render_markdown(report)
    assert re.search(rf"\| {MODEL} \| blind \| 56.2 \| pitch_l1: {too_few} \| 66.7 \| {interval} \| 9 \| complete \|",
                     markdown)
    assert re.search(rf"\| {MODEL} \| blind \| retail_l1 \| 2 \| 100.0 \| {too_few} \| 50.0 \| {too_few} \| 4 \|",
                     markdown)



async def test_per_task_figures_count_finished_episodes_and_show_unfinished_spend_apart(tmp_path: Path) -> None:
    # One finished episode, one interrupted (its calls were answered, its episode never finished) and a
    # failed call the provider billed: only the finished episode's calls are divided by the one task.
    finished = Unit("blind", "retail_l1", "test", 1, "hidden", 1.0, cost_usd=0.10)
    interrupted = Unit("blind", "retail_l1", "test", 1, "hidden")
    calls = [Call(finished, "agent", 0.10, input_tokens=1000, output_tokens=100),
             Call(interrupted, "agent", 0.50, input_tokens=5000, output_tokens=500),
             Call(finished, "agent", 0.02, input_tokens=200, status="failed")]
    path = tmp_path / "j.sqlite"
    await write_run(path, RUN, [finished, interrupted], calls)
    stream = (await build_report(path, RUN)).streams[0]
    assert stream.episodes == 1
    assert stream.input_tokens_per_task == 1000 and stream.output_tokens_per_task == 100
    assert stream.cost_per_task_usd is not None and stream.cost_per_task_usd.total == pytest.approx(0.10)
    assert (stream.unfinished_input_tokens, stream.unfinished_output_tokens) == (5200, 500)
    assert stream.unfinished_cost_usd == pytest.approx(0.52)
    assert stream.cost_usd.total == pytest.approx(0.62)  # spent is spent: the total keeps it all


async def test_calls_with_estimated_tokens_are_counted_and_shown(tmp_path: Path) -> None:
    unit = Unit("blind", "retail_l1", "test", 1, "hidden", 1.0)
    calls = [Call(unit, "agent", 0.0, input_tokens=300, output_tokens=20, estimated=True),
             Call(unit, "agent", 0.0, input_tokens=310, output_tokens=25)]
    path = tmp_path / "j.sqlite"
    await write_run(path, RUN, [unit], calls)
    report = await build_report(path, RUN)
    assert report.streams[0].estimated_calls == 1
    assert "est." in render_text(report) and ",estimated_calls," in render_csv(report).splitlines()[0] + ","


async def test_episodes_are_counted_by_end_reason(tmp_path: Path) -> None:
    path = tmp_path / "j.sqlite"
    await write_run(path, RUN, blind_units())
    async with open_journal(path) as journal:
        await journal.commit(Batch().add("UPDATE episodes SET end_reason = 'context_length' WHERE unit_id LIKE '%t3'"))
    report = await build_report(path, RUN)
    assert report.streams[0].end_reasons == {"finish": 10, "context_length": 1}
    assert "finish 10, context_length 1" in render_text(report)


async def test_the_sealed_hash_covers_every_field_and_is_recomputed_as_its_docstring_says(journal: Path) -> None:
    sealed = json.loads(render_json(await _report(journal)))
    body = {key: value for key, value in sealed.items() if key != "sha256"}
    # What anyone can recompute from the document alone (runner/stats/seal.py).
    recomputed = hashlib.sha256(json.dumps(body, sort_keys=True, separators=(",", ":"),
                                           ensure_ascii=False).encode()).hexdigest()
    assert sealed["sha256"] == recomputed and is_sealed_intact(sealed)
    for key in body:  # every field, provenance, the scores seal and the run's identity alike
        assert not is_sealed_intact({**sealed, key: "edited"}), key
    deep = json.loads(render_json(await _report(journal)))
    deep["streams"][0]["settings"]["retail_l1"]["windows"][0]["hidden"] = 100.0
    assert not is_sealed_intact(deep)


async def test_the_scores_seal_covers_the_results_and_nothing_about_how_they_were_run(journal: Path) -> None:
    report = await _report(journal)
    base = scores_seal(report)["sha256"]
    elsewhere = replace(report, run_id="another", journal="/elsewhere.sqlite", created_at=0.0,
                        streams=[replace(s, latency_p50_s=99.0, input_tokens=1, episodes=1) for s in report.streams])
    assert scores_seal(elsewhere)["sha256"] == base
    first = report.streams[0]
    for changed in (replace(report, task_rewards_sha256="0" * 64),
                    replace(report, provenance=replace(report.provenance, config_hash="edited")),
                    replace(report, provenance=replace(report.provenance, dataset_fingerprint="edited")),
                    replace(report, bootstrap={**report.bootstrap, "draws": 10}),
                    replace(report, streams=[replace(first, avg_h=(first.avg_h or 0) + 1), *report.streams[1:]]),
                    replace(report, streams=[replace(first, test_done=first.test_done - 1), *report.streams[1:]])):
        assert scores_seal(changed)["sha256"] != base
    assert json.loads(render_json(report))["scores_seal"]["sha256"] == base
