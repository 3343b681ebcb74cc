"""Methods from outside the project, run as a user runs them: the worked example from its file and
installed (an entry point) through real sweeps killed by SIGKILL and resumed; a resume refusing its
edited source unless told, and the reports naming the change; and a class of the reference's interface
through the adapter matching shiftbench's `rag` context for context."""

from __future__ import annotations

import shutil
import sqlite3
import subprocess
from pathlib import Path

import anyio
import orjson
import pytest

from runner.cli import main
from runner.config.settings import config_from_json
from runner.display.progress import RunProgress
from runner.journal import open_journal
from runner.schedule.engine import Engine
from runner.schedule.guests import engine_method_options
from runner.schedule.sweep import plan_sweep
from simulators.dataset import load_dataset
from tests.fakes import offline_clients
from tests.methods.test_method_specs import NOTES_FILE, installed_example
from tests.runner.test_kill_resume import assert_complete, committed, kill_after, only_run, rewards, shiftbench

REFERENCE_RAG = Path(__file__).resolve().parents[1] / "methods" / "reference_rag.py"


def sweep(suite: Path, journal: Path, methods: str, *more: str, pilot: int = 3) -> list[str]:
    return ["--dataset", str(suite), "--scenarios", "retail_l1", "--methods", methods, "--pilot", str(pilot),
            "--journal", str(journal), "--display", "none", *more]


def final_states(journal: Path) -> dict[str, bytes]:
    with sqlite3.connect(journal) as db:
        return dict(db.execute("SELECT stream_id, state FROM checkpoints WHERE label = 'latest'").fetchall())


def test_the_example_method_from_its_file_and_installed_resumes_after_sigkill_to_identical_rewards(
        built_suite: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """One sweep runs both: the file as `own`, the installed package's entry point as `notes`."""
    monkeypatch.setenv("PYTHONPATH", str(installed_example(tmp_path / "site")))
    methods = f"own={NOTES_FILE}:NOTES,notes"
    reference = tmp_path / "reference.sqlite"
    subprocess.run(shiftbench("run", *sweep(built_suite, reference, methods)), check=True, capture_output=True)
    expected = rewards(reference)
    journal = tmp_path / "killed.sqlite"
    assert kill_after(shiftbench("run", *sweep(built_suite, journal, methods)), journal, len(expected) // 3)
    subprocess.run(shiftbench("resume", only_run(journal)[0], "--journal", str(journal), "--display", "none"),
                   check=True, capture_output=True)
    assert_complete(journal, expected)
    states = final_states(journal)
    assert states == final_states(reference) and len(states) == 2
    with sqlite3.connect(journal) as db:
        (provenance,) = db.execute("SELECT value FROM meta WHERE key LIKE 'run:%:methods'").fetchone()
    methods_seen = orjson.loads(provenance)
    assert (methods_seen["own"]["origin"], methods_seen["own"]["distribution"]) == ("file", "")
    assert (methods_seen["notes"]["origin"], methods_seen["notes"]["distribution"]) == ("entry_point",
                                                                                        "shiftbench-notes 0.1.0")


def dump(journal: Path) -> list[str]:
    with sqlite3.connect(journal) as db:
        return list(db.iterdump())


def test_resume_refuses_an_edited_method_unless_told_and_the_reports_name_the_change(
        built_suite: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    own = tmp_path / "notes.py"
    shutil.copy(NOTES_FILE, own)
    journal = tmp_path / "j.sqlite"
    assert kill_after(shiftbench("run", *sweep(built_suite, journal, f"tuned={own}:NOTES")), journal, 6)
    run_id = only_run(journal)[0]
    own.write_text(own.read_text().replace('"keep", int, 8', '"keep", int, 9'))
    before = dump(journal)
    refused = subprocess.run(shiftbench("resume", run_id, "--journal", str(journal), "--display", "none"),
                             capture_output=True, text=True)
    assert refused.returncode == 2 and len(refused.stderr.strip().splitlines()) == 1
    assert refused.stdout == ""  # no "Journal: ... (resuming run ...)" before the refusal
    assert f"run {run_id}: method 'tuned' changed since the run began" in refused.stderr
    assert "--accept-method-change" in refused.stderr
    assert dump(journal) == before
    subprocess.run(shiftbench("resume", run_id, "--journal", str(journal), "--display", "none",
                              "--accept-method-change"), check=True, capture_output=True)
    assert main(["report", run_id, "--journal", str(journal)]) == 0
    text = capsys.readouterr().out
    assert f"method tuned: file {own}:NOTES, source sha256 " in text
    assert "method tuned: source changed, resumed with it at " in text
    assert main(["report", run_id, "--journal", str(journal), "--json"]) == 0
    sealed = orjson.loads(capsys.readouterr().out)
    provenance = sealed["provenance"]
    assert provenance["methods"]["tuned"]["origin"] == "file" and len(sealed["sha256"]) == 64
    (change,) = provenance["method_changes"]
    assert change["method"] == "tuned" and change["before"] == provenance["methods"]["tuned"]["source_sha256"]
    html = tmp_path / "report.html"
    assert main(["report", run_id, "--journal", str(journal), "--html", str(html)]) == 0
    assert "method tuned" in html.read_text() and committed(journal) > 6


async def contexts_of(journal: Path, method: str) -> dict[str, str]:
    """Every unit's context as the engine gave it (restored as an audit's replay restores it)."""
    async with open_journal(journal, create=False) as opened:
        run = (await opened.read.runs())[0]
        config = config_from_json(run.config)
        dataset = load_dataset(run.dataset_path, only=config.scenarios)
        resolved = config.resolved_methods()
        progress = RunProgress(run_id=run.run_id, journal_path=str(journal))
        engine = Engine(run_id=run.run_id, journal=opened, progress=progress,
                        clients=offline_clients(opened, progress, None),  # type: ignore[arg-type]
                        block_size=config.block_size, max_episode_attempts=1,
                        **engine_method_options(config, resolved))
        found = {}
        for stream in plan_sweep(config, dataset):
            if stream.method == method:
                for unit in stream.units():
                    as_of = await engine.method_as_of(stream, unit.task)
                    try:
                        (found[f"{unit.phase}|{unit.task.task_id}"],) = await as_of.contexts([unit.task])
                    finally:
                        await as_of.close()
        return found


def test_a_reference_shaped_rag_through_the_adapter_matches_shiftbench_rag(
        built_suite: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    journal = tmp_path / "j.sqlite"
    # The reference's block size (12) for both, so rag's blocks are the adapter's.
    assert main(["run", *sweep(built_suite, journal, f"rag,refrag=slb:{REFERENCE_RAG}:RAG", "--block-size", "12",
                               pilot=13)]) == 0
    capsys.readouterr()
    ours, theirs = anyio.run(contexts_of, journal, "rag"), anyio.run(contexts_of, journal, "refrag")
    assert ours == theirs and len(ours) > 100
    assert sum(1 for text in ours.values() if "## Case observed at stream position" in text) > 50
    by_method: dict[str, dict[str, float]] = {}
    for unit, reward in rewards(journal).items():
        method, rest = unit.split("|", 1)
        by_method.setdefault(method, {})[rest] = reward
    assert by_method["rag"] == by_method["refrag"]
    run_id = only_run(journal)[0]
    assert main(["report", run_id, "--journal", str(journal), "--json"]) == 0
    report = orjson.loads(capsys.readouterr().out)
    streams = {s["method"]: s for s in report["streams"]}
    assert (streams["rag"]["avg_h"], streams["rag"]["avg_f"]) == (streams["refrag"]["avg_h"],
                                                                  streams["refrag"]["avg_f"])
    assert report["provenance"]["methods"]["refrag"]["origin"] == "adapter"


def test_state_describes_a_users_method_by_its_own_spec_not_the_registry_method_of_its_name(
        built_suite: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A user's method run under a shipped method's name (`rag=./notes.py:NOTES`) is shown as itself: rag's
    description of a state that is not rag's would misread it (or fail on it)."""
    journal = tmp_path / "j.sqlite"
    assert main(["run", *sweep(built_suite, journal, f"rag={NOTES_FILE}:NOTES", pilot=2)]) == 0
    capsys.readouterr()
    run_id = only_run(journal)[0]
    assert main(["state", run_id, "--stream", "scripted/rag", "--json", "--journal", str(journal)]) == 0
    stored = orjson.loads(capsys.readouterr().out)
    assert "cases" not in stored  # the notes method's state, not rag's
    assert main(["state", run_id, "--stream", "scripted/rag", "--journal", str(journal)]) == 0
    text = capsys.readouterr().out
    assert text.startswith("scripted/rag on retail_l1, state as of latest")
    # The notes method has no description of its own: its state is printed as stored, every note in it.
    assert orjson.loads(text.split("\n", 1)[1]) == stored
