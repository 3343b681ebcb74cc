"""The benchmark scripts run end to end (tiny sizes) and record what a result needs. No timing is
asserted: speed is shown by `python -m bench.run_benchmarks`, never by a test."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import pytest

from bench.run_benchmarks import BENCHMARKS, main


@pytest.mark.slow
def test_smoke_run_writes_every_benchmark_with_its_machine(built_suite: Path, tmp_path: Path) -> None:
    out = tmp_path / "smoke.json"
    assert main(["--smoke", "--suite", str(built_suite), "--out", str(out)]) == 0
    result = orjson.loads(out.read_bytes())
    assert result["mode"] == "smoke"
    assert result["machine"]["cores_usable"] >= 1 and result["machine"]["python"]
    assert result["git"]["commit"]
    assert set(result["benchmarks"]) == set(BENCHMARKS)
    for name, section in result["benchmarks"].items():
        assert section["rows"], name
    offline = {row["case"]: row for row in result["benchmarks"]["offline"]["rows"]}
    assert offline["icl_full"]["serving"] > 0 and offline["icl_full"]["checkpoints"] > 0
    makespan = result["benchmarks"]["makespan"]["rows"]
    assert all(row["calls"] == 3 * row["episodes"] for row in makespan)  # tool_loop: 3 turns an episode


def test_endpoint_pool_bench_runs_its_three_cases_with_equal_rewards(built_suite: Path,
                                                                     capsys: pytest.CaptureFixture[str]) -> None:
    from bench.endpoint_pool import main as pool_main

    pool_main(["--pilot", "1", "--latency", "0.01", "--suite", str(built_suite)])
    rows = [line for line in capsys.readouterr().out.splitlines() if line.startswith("| 1 ") or
            line.startswith("| 3")]
    assert len(rows) == 3
    assert all("| completed |" in row and row.endswith("| yes |") for row in rows)
    assert "r3" in rows[1] and "r2 exited" in rows[2]


async def test_sweep_cost_mock_agent_takes_the_scripted_models_turns_in_both_dialects(
    built_suite: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The bench's projection rests on the suite's real turn counts: over the mock, in either dialect, every
    episode takes the turns the offline scripted model takes and earns the same reward."""
    import sqlite3

    from bench.sweep_cost import pilot_run
    from runner.config.settings import SweepConfig
    from runner.schedule.sweep import start_sweep

    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-loopback-test-key")
    scenarios = ("retail_l1", "banking_l1", "pitch_l1")
    _, cache = await pilot_run(built_suite, tmp_path / "mock.sqlite", 1, ["blind"], scenarios)
    offline = SweepConfig(models=("scripted",), methods=("blind",), scenarios=scenarios, dataset=str(built_suite),
                          pilot=1)
    await start_sweep(offline, tmp_path / "offline.sqlite", "none", lambda _: None)

    def episodes(journal: Path) -> dict[tuple[str, str], tuple[int, float]]:
        with sqlite3.connect(journal) as db:
            return {(model, task): (turns, reward) for model, task, turns, reward in db.execute(
                "SELECT u.model, u.task_id, e.turns, e.reward FROM episodes e JOIN units u USING (run_id, unit_id)")}

    scripted = {task: found for (_, task), found in episodes(tmp_path / "offline.sqlite").items()}
    for model in ("mock-anthropic", "mock-openai"):
        mocked_episodes = {task: found for (m, task), found in episodes(tmp_path / "mock.sqlite").items() if m == model}
        assert mocked_episodes == scripted
    assert sum(b.cached_tokens for b in cache.billed) > 0


def _last_json(out: str) -> dict[str, Any]:
    result: dict[str, Any] = orjson.loads(out.strip().splitlines()[-1])
    return result


def test_sustained_load_reports_each_level(built_suite: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from bench.sustained_load import main as load_main

    load_main(["--levels", "2", "4", "--rounds", "1", "--warmup", "1", "--measure", "2",
               "--delays", "0.01", "0.02", "--suite", str(built_suite)])
    medians = _last_json(capsys.readouterr().out)["medians"]
    assert [m["in_flight"] for m in medians] == [2, 4]
    assert all(m["calls_per_s"] > 0 and m["added_ms_p99"] >= m["added_ms_p50"] for m in medians)


def test_cpu_per_call_measures_both_layers(built_suite: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from bench.cpu_per_call import main as cpu_main

    cpu_main(["--episodes", "4", "--concurrency", "2", "--latency", "0.01", "--rounds", "1",
              "--suite", str(built_suite)])
    medians = {m["layer"]: m for m in _last_json(capsys.readouterr().out)["medians"]}
    assert set(medians) == {"sweep", "client"}
    assert all(m["run_ms_per_call"] > 0 and m["ideal_s"] > 0 for m in medians.values())


@pytest.mark.slow
@pytest.mark.heavy
def test_scale_pairs_each_seed_with_a_fresh_journal_and_resumes_a_killed_run() -> None:
    """Two seeds of the whole suite (built here), each paired with a fresh journal, then a killed run
    resumed. Two of the bench's five methods, a learner among them (checkpoints grow the journal, the
    resume restores its state), do what the five did at 80% of the time: what costs is the six processes
    and two suite builds, not the methods."""
    import anyio

    from bench.scale import run_scale

    result = anyio.run(run_scale, 2, "blind,tabular", 2, True, lambda _line: None)
    runs, cumulative = result["runs"], result["cumulative"]
    assert [r["seed"] for r in runs] == [0, 1]
    assert runs[1]["journal_mb_before"] == runs[0]["journal_mb"] > 0  # the second seed starts on the first's
    for row in runs:
        assert row["episodes"] > 0 and row["cpu_s"] > 0 and row["fresh_wall_s"] > 0 and row["fresh_cpu_s"] > 0
    both = cumulative[-1]
    assert both["seeds"] == 2 and both["episodes"] == sum(r["episodes"] for r in runs)
    expected = 2 * sum(r["wall_s"] for r in runs) / sum(r["fresh_wall_s"] for r in runs)
    assert both["wall_over_one_seed"] == pytest.approx(expected, abs=0.06)  # from the rounded sums
    assert 0 < result["resume"]["first_new_episode_s"] <= result["resume"]["resume_wall_s"]
    assert result["resume"]["episodes_before"] >= int(0.8 * runs[0]["episodes"])
