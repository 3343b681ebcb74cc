"""The morning after an offline sweep: read its failed episodes, a method's state, export it, and the
HTML report's links to failed transcripts. One real sweep (built-in suite, scripted model) for all."""

from __future__ import annotations

import argparse
import csv
import io
import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import orjson
import pytest

from runner.cli import main
from runner.cli.main import build_parser
from simulators.record import EpisodeRecord
from tests.support import cli_sweep

SCENARIOS = ("retail_l1", "pitch_l1")


@pytest.fixture(scope="module")
def swept(built_suite: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    return cli_sweep(built_suite, tmp_path_factory.mktemp("sweep"), SCENARIOS, ("blind", "tabular"))


def _journal_rows(journal: Path, sql: str) -> list[tuple[object, ...]]:
    with sqlite3.connect(journal) as db:
        return db.execute(sql).fetchall()


def test_show_failed_prints_every_failed_episode_and_nothing_else(swept: tuple[Path, str],
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    journal, run_id = swept
    failed = _journal_rows(journal, "SELECT unit_id, reward FROM episodes WHERE reward < 1")
    assert failed, "the sweep must have failed episodes to show"
    assert main(["show", run_id, "--failed", "--limit", "0", "--json", "--journal", str(journal)]) == 0
    shown = json.loads(capsys.readouterr().out)
    assert sorted(t["unit_id"] for t in shown) == sorted(str(unit) for unit, _ in failed)
    assert all(t["reward"] < 1 for t in shown)
    # The record comes back whole: the task, every step, the outcome.
    record = EpisodeRecord.from_json(shown[0]["record"])
    assert record.task.instruction and record.steps

    assert main(["show", run_id, "--failed", "--stream", "scripted/blind", "--scenario", "retail_l1",
                 "--limit", "2", "--journal", str(journal)]) == 0
    text = capsys.readouterr().out
    assert text.count("Score: 0/100.") >= 2 and "task:" in text and "call:" in text and "observation:" in text
    assert "scripted/tabular" not in text and "pitch_l1" not in text
    assert "more episodes match" in text


def test_show_one_unit_and_a_window(swept: tuple[Path, str], capsys: pytest.CaptureFixture[str]) -> None:
    journal, run_id = swept
    (unit_id, window), *_ = _journal_rows(journal, "SELECT u.unit_id, u.window FROM units u JOIN episodes e "
                                                   "USING (run_id, unit_id) WHERE u.phase = 'test' ORDER BY u.rowid")
    assert main(["show", run_id, "--unit", str(unit_id), "--json", "--journal", str(journal)]) == 0
    (only,) = json.loads(capsys.readouterr().out)
    assert only["unit_id"] == unit_id and only["window"] == window and only["phase"] == "test"
    # Every field a transcript's plain data carries, in order: the episode's unit and row, its grade, its
    # record (show --json and export share it; the replica tells two replicas' tries of one task apart).
    assert list(only) == ["run_id", "unit_id", "model", "method", "scenario", "phase", "window", "task_id",
                          "category", "reward", "judge", "turns", "tool_calls", "input_tokens",
                          "cached_input_tokens", "output_tokens", "cost_usd", "latency_s", "end_reason",
                          "replica", "grade_details", "record"]
    assert only["run_id"] == run_id and only["replica"] == 0 and isinstance(only["grade_details"], dict)
    assert main(["show", run_id, "--window", "999", "--journal", str(journal)]) == 2
    assert "--window 999: no such window in run" in capsys.readouterr().err


def test_state_as_of_a_window_is_the_checkpoint_its_test_set_ran_against(
        swept: tuple[Path, str], capsys: pytest.CaptureFixture[str]) -> None:
    journal, run_id = swept
    stream_id = "scripted|tabular|retail_l1"
    labels = [row[0] for row in _journal_rows(
        journal, f"SELECT label FROM checkpoints WHERE stream_id = '{stream_id}' AND label LIKE 'window:%'")]
    first = min(int(str(label).split(":")[1]) for label in labels)
    (stored,) = _journal_rows(journal, f"SELECT state FROM checkpoints WHERE stream_id = '{stream_id}' "
                                       f"AND label = 'window:{first}'")[0]
    assert main(["state", run_id, "--stream", "scripted/tabular", "--scenario", "retail_l1", "--window",
                 str(first), "--json", "--journal", str(journal)]) == 0
    assert json.loads(capsys.readouterr().out) == orjson.loads(stored)
    assert main(["state", run_id, "--stream", "scripted/tabular", "--scenario", "retail_l1", "--window",
                 str(first), "--journal", str(journal)]) == 0
    assert f"state as of end of window {first}" in capsys.readouterr().out


@pytest.mark.parametrize(("argv", "expected"), [
    (["--stream", "scripted/tabular"], "name one with --scenario; stream scripted/tabular of run"),
    (["--stream", "scripted/tabular", "--scenario", "banking_l1"],
     "--scenario banking_l1: stream scripted/tabular of run"),
    (["--scenario", "retail_l1", "--window", "6"], "--window 6: retail_l1 of run"),
    (["--stream", "scripted/lessons", "--scenario", "retail_l1"], "has no such stream; its streams: scripted/blind"),
    (["--stream", "tabular"], "--stream 'tabular': name a stream as model/method"),
])
def test_state_names_what_is_missing(swept: tuple[Path, str], argv: list[str], expected: str,
                                     capsys: pytest.CaptureFixture[str]) -> None:
    journal, run_id = swept
    assert main(["state", run_id, *argv, "--journal", str(journal)]) == 2
    assert expected in capsys.readouterr().err


@pytest.mark.parametrize(("argv", "expected"), [
    (["--stream", "scripted/oracle"], "--stream scripted/oracle: run {run} has no such stream; its streams: "
                                      "scripted/blind, scripted/tabular"),
    (["--scenario", "retail_l2"], "--scenario retail_l2: run {run} ran no such scenario; it ran retail_l1, pitch_l1"),
    (["--stream", "scripted/blind", "--scenario", "pitch_l1", "--window", "4"],
     "--window 4: no such window in run {run} for stream scripted/blind, scenario pitch_l1; its windows: 0, 1, 2, 3"),
    (["--unit", "scripted|blind|retail_l1|test|nope"], "--unit scripted|blind|retail_l1|test|nope: run {run} has no "
                                                       "such unit"),
    (["--stream", "scripted/blind", "--phase", "serving"], "--phase serving: run {run} planned no serving episodes "
                                                           "for stream scripted/blind"),
    (["--replica", "1"], "--replica 1: run {run} has no such stream replica; its replicas: 0"),
])
def test_show_refuses_a_name_the_run_does_not_have_and_names_what_it_has(
        swept: tuple[Path, str], argv: list[str], expected: str, capsys: pytest.CaptureFixture[str]) -> None:
    journal, run_id = swept
    for shown in ([], ["--json"], ["--failed"]):
        assert main(["show", run_id, *argv, *shown, "--journal", str(journal)]) == 2
        out, err = capsys.readouterr()
        assert out == "" and err.count("\n") == 1 and expected.format(run=run_id) in err


def test_show_says_why_nothing_matches_when_every_name_exists(swept: tuple[Path, str],
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    journal, run_id = swept
    perfect = _journal_rows(journal, "SELECT u.scenario, u.window FROM units u JOIN episodes e USING (run_id, unit_id) "
                                     "WHERE u.method = 'blind' GROUP BY u.scenario, u.window HAVING min(e.reward) = 1")
    assert perfect, "a window where blind failed nothing"
    scenario, window = perfect[0]
    assert main(["show", run_id, "--stream", "scripted/blind", "--scenario", str(scenario), "--window", str(window),
                 "--failed", "--journal", str(journal)]) == 0
    assert "no episode matches: every finished episode that matches scored in full" in capsys.readouterr().out


def test_show_keeps_window_and_category_on_a_narrow_terminal(swept: tuple[Path, str]) -> None:
    journal, run_id = swept
    (unit_id, window, category), *_ = _journal_rows(
        journal, "SELECT u.unit_id, u.window, u.category FROM units u JOIN episodes e USING (run_id, unit_id) "
                 "WHERE u.phase = 'test' AND u.scenario = 'retail_l1' ORDER BY u.rowid")
    shown = subprocess.run([sys.executable, "-m", "runner.cli", "show", run_id, "--unit", str(unit_id), "--journal",
                            str(journal)], capture_output=True, text=True, check=True,
                           env={**os.environ, "COLUMNS": "60"}).stdout
    title = shown.splitlines()[0]
    assert len(title) == 60 and f"window {window}" in title and category in title, title
    assert "retail_l1" in shown and str(unit_id) in shown.replace("│", "").replace("\n", "").replace(" ", "")


def test_state_prints_what_the_method_learned_as_a_person_reads_it(swept: tuple[Path, str],
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    journal, run_id = swept
    assert main(["state", run_id, "--scenario", "retail_l1", "--window", "3", "--journal", str(journal)]) == 0
    text = capsys.readouterr().out
    blind, tabular = text.split("\n\n", 1)
    assert blind.startswith("scripted/blind on retail_l1") and "blind learns nothing" in blind
    assert tabular.startswith("scripted/tabular on retail_l1, state as of end of window 3\nBeliefs:")
    assert "Policy block it writes into the agent's prompt:" in tabular and "```shiftbench-policy" in tabular
    assert "DIFFERS from the documents" in tabular
    assert main(["state", run_id, "--stream", "scripted/tabular", "--scenario", "retail_l1", "--window", "3", "--json",
                 "--journal", str(journal)]) == 0
    raw = capsys.readouterr().out
    assert json.loads(raw)["domain"] == "retail" and len(tabular.splitlines()) < len(raw.splitlines()) / 3


def test_export_jsonl_has_one_line_per_episode(swept: tuple[Path, str], tmp_path: Path) -> None:
    journal, run_id = swept
    assert main(["export", run_id, "--out", str(tmp_path / "out"), "--journal", str(journal)]) == 0
    lines = (tmp_path / "out" / f"{run_id}.jsonl").read_bytes().splitlines()
    rewards = dict(_journal_rows(journal, "SELECT unit_id, reward FROM episodes"))
    exported = {row["unit_id"]: row["reward"] for row in map(orjson.loads, lines)}
    assert exported == rewards
    assert [p.name for p in (tmp_path / "out").iterdir()] == [f"{run_id}.jsonl"]  # no temporary left behind


def test_export_of_one_stream_and_scenario_and_of_a_name_the_run_lacks(
        swept: tuple[Path, str], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    journal, run_id = swept
    assert main(["export", run_id, "--out", str(tmp_path / "one"), "--stream", "scripted/blind",
                 "--scenario", "retail_l1", "--journal", str(journal)]) == 0
    rows = [orjson.loads(line) for line in (tmp_path / "one" / f"{run_id}.jsonl").read_bytes().splitlines()]
    expected = _journal_rows(journal, "SELECT count(*) FROM units u JOIN episodes e USING (run_id, unit_id) "
                                      "WHERE u.method = 'blind' AND u.scenario = 'retail_l1'")[0][0]
    assert len(rows) == expected > 0
    assert {(r["method"], r["scenario"]) for r in rows} == {("blind", "retail_l1")}
    capsys.readouterr()
    assert main(["export", run_id, "--out", str(tmp_path / "none"), "--stream", "scripted/nothing",
                 "--journal", str(journal)]) == 2
    error = capsys.readouterr().err
    assert "--stream scripted/nothing" in error and "scripted/blind" in error
    assert not (tmp_path / "none").exists()  # refused before anything was written


def test_export_inspect_logs_read_back_with_inspects_reader(swept: tuple[Path, str], tmp_path: Path) -> None:
    log_api = pytest.importorskip("inspect_ai.log", reason="the inspect extra is not installed "
                                                          "(pip install -e '.[inspect]'; .ci/run installs it)")
    journal, run_id = swept
    out = tmp_path / "logs"
    assert main(["export", run_id, "--format", "inspect", "--out", str(out), "--journal", str(journal)]) == 0
    expected: dict[tuple[str, str], dict[str, float]] = {}
    for stream_id, task_id, phase, reward in _journal_rows(
            journal, "SELECT u.stream_id, u.task_id, u.phase, e.reward FROM units u JOIN episodes e "
                     "USING (run_id, unit_id)"):
        _, method, scenario = str(stream_id).split("|")
        expected.setdefault((method, scenario), {})[f"{phase}/{task_id}"] = float(reward)
    logs = sorted(out.glob("*.eval"))
    assert len(logs) == len(expected) == 4
    for path in logs:
        log = log_api.read_eval_log(str(path))
        key = (log.eval.solver, log.eval.task.removeprefix("shiftbench/"))
        assert {s.id: s.scores["shiftbench"].value for s in log.samples} == expected[key]
        tests = [value for sample_id, value in expected[key].items() if sample_id.startswith("test/")]
        assert log.results.scores[0].metrics["mean_test_reward"].value == pytest.approx(sum(tests) / len(tests))
        sample = log.samples[0]
        assert sample.messages[0].role == "user" and any(m.role == "tool" for m in sample.messages)
        assert sample.metadata["phase"] in ("serving", "test")


def test_html_report_links_each_setting_to_its_failed_transcripts(swept: tuple[Path, str], tmp_path: Path) -> None:
    journal, run_id = swept
    out = tmp_path / "r.html"
    assert main(["report", run_id, "--html", str(out), "--journal", str(journal)]) == 0
    page = out.read_text()
    failed_blind_retail = _journal_rows(
        journal, "SELECT count(*) FROM episodes e JOIN units u USING (run_id, unit_id) "
                 "WHERE u.stream_id = 'scripted|blind|retail_l1' AND u.phase = 'test' AND e.reward < 1")[0][0]
    assert failed_blind_retail > 5
    anchor = page.split(f">{failed_blind_retail} failed</a>")[0].rsplit('href="#', 1)[1].split('"')[0]
    section = page.split(f'id="{anchor}"')[1].split("</div>")[0]
    assert "retail_l1 &middot; scripted / blind" in section
    assert section.count("<details>") == 5  # the first five in full, then the command for the rest
    assert f"{failed_blind_retail - 5} more: <code>shiftbench show {run_id} --failed" in section


def test_csv_windows_has_one_row_per_stream_setting_and_window(swept: tuple[Path, str],
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    journal, run_id = swept
    assert main(["report", run_id, "--csv", "--windows", "--journal", str(journal)]) == 0
    rows = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    windows = _journal_rows(journal, "SELECT DISTINCT u.model, u.method, u.scenario, u.window FROM units u "
                                     "JOIN episodes e USING (run_id, unit_id) WHERE u.phase = 'test'")
    assert sorted((r["model"], r["method"], r["setting"], int(r["window"])) for r in rows) == sorted(
        (str(m), str(k), str(s), int(str(w))) for m, k, s, w in windows)
    assert all(r["run_id"] == run_id and r["n"] for r in rows)


def test_every_flag_of_every_command_explains_itself() -> None:
    missing = []

    def walk(parser: argparse.ArgumentParser) -> None:
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                for sub in action.choices.values():
                    walk(sub)
            elif not action.help and not isinstance(action, argparse._HelpAction):
                missing.append(f"{parser.prog} {'/'.join(action.option_strings) or action.dest}")
    walk(build_parser())
    assert missing == []
