"""Promises the README makes that nothing else checks: a malformed dataset line given to `run`, resume
refusing a changed config or dataset, `--allow-unpriced`, `--judge` wiring, and a second Ctrl-C."""

from __future__ import annotations

import re
import shutil
import signal
import sqlite3
import subprocess
import sys
from pathlib import Path

import anyio
import orjson
import pytest

from bench.mock_provider import MockUsage, Recorded, Reply, Response, serve_mock, tool_loop
from runner.cli import main
from tests.runner.test_cli_errors import one_error_line

SCRIPTED = ["--models", "scripted", "--methods", "blind", "--scenarios", "banking_l1", "--pilot", "1",
            "--display", "none"]


ENV = {"OPENAI_COMPATIBLE_API_KEY": "sk-x", "PATH": "/usr/bin:/bin"}


async def cli(argv: list[str]) -> subprocess.CompletedProcess[bytes]:
    """The real command line in its own process (its signal handlers need a main thread)."""
    return await anyio.run_process([sys.executable, "-m", "runner.cli", *argv], env=ENV, check=False)


@pytest.fixture
def suite_copy(built_suite: Path, tmp_path: Path) -> Path:
    copy = tmp_path / "suite"
    shutil.copytree(built_suite / "environments" / "banking_l1", copy / "environments" / "banking_l1")
    shutil.copytree(built_suite / "data" / "banking_l1", copy / "data" / "banking_l1")
    return copy


def test_a_malformed_dataset_line_given_to_run_is_one_line_and_no_journal(
    suite_copy: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = suite_copy / "data" / "banking_l1" / "test.jsonl"
    lines = path.read_text().splitlines()
    lines[2] = lines[2][:-7]  # cut mid-object
    path.write_text("\n".join(lines) + "\n")
    journal = tmp_path / "j.sqlite"
    assert main(["run", "--dataset", str(suite_copy), "--journal", str(journal), *SCRIPTED]) == 2
    line = one_error_line(capsys)
    assert f"{path}:3: not valid JSON" in line
    assert not journal.exists()


def test_resume_refuses_a_changed_config_or_dataset(suite_copy: Path, tmp_path: Path,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    journal = tmp_path / "j.sqlite"
    assert main(["run", "--dataset", str(suite_copy), "--journal", str(journal), *SCRIPTED]) == 0
    with sqlite3.connect(journal) as db:
        run_id, config = db.execute("SELECT run_id, config FROM runs").fetchone()
        db.execute("UPDATE runs SET status = 'interrupted'")
        db.execute("UPDATE runs SET config = ?", (config.replace('"blind"', '"oracle"'),))
    capsys.readouterr()
    assert main(["resume", run_id, "--journal", str(journal), "--display", "none"]) == 2
    assert "stored config does not match its hash" in one_error_line(capsys)
    with sqlite3.connect(journal) as db:
        db.execute("UPDATE runs SET config = ?", (config,))
    tools = suite_copy / "environments" / "banking_l1" / "tools.json"
    tools.write_bytes(tools.read_bytes() + b"\n")
    assert main(["resume", run_id, "--journal", str(journal), "--display", "none"]) == 2
    assert "the dataset changed since run" in one_error_line(capsys)
    with sqlite3.connect(journal) as db:
        assert db.execute("SELECT status FROM runs").fetchone()[0] == "interrupted"  # a refused resume changes nothing


async def test_allow_unpriced_runs_a_model_with_no_price_at_what_the_provider_reports(
    built_suite: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_COMPATIBLE_API_KEY", "sk-x")
    answer = tool_loop(calls_before_finish=1)

    def respond(request: Recorded) -> Response:
        reply = answer(request)
        assert isinstance(reply, Reply)
        return Reply(text=reply.text, tool_calls=reply.tool_calls, usage=MockUsage(100, 10, cost_usd=0.001))

    journal = tmp_path / "j.sqlite"
    async with serve_mock(respond) as mock:
        model = f"openai-compatible:unpriced@{mock.base_url}/v1"
        argv = ["run", "--dataset", str(built_suite), "--models", model, "--methods", "blind", "--scenarios",
                "banking_l1", "--pilot", "1", "--journal", str(journal), "--display", "none"]
        assert (await cli(argv)).returncode == 2  # refused without the flag, nothing sent
        assert mock.requests == []
        assert (await cli([*argv, "--allow-unpriced"])).returncode == 0
        sent = len(mock.requests)
    with sqlite3.connect(journal) as db:
        calls, cost = db.execute("SELECT count(*), sum(cost_usd) FROM model_calls").fetchone()
    assert calls == sent and cost == pytest.approx(0.001 * sent)  # the probe included


async def test_judge_flag_sends_pitch_grading_to_the_named_model(built_suite: Path, tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_COMPATIBLE_API_KEY", "sk-x")

    def judge(request: Recorded) -> Response:
        prompt = str(request.body["messages"][-1]["content"])
        items = re.findall(r"^- ([^:]+):", prompt.split("Pitch:")[0], re.MULTILINE)
        verdict = {"labels": dict.fromkeys(items, "mentioned"), "invented_claims": []}
        return Reply(text=orjson.dumps(verdict).decode())

    journal = tmp_path / "j.sqlite"
    async with serve_mock(judge) as mock:
        name = f"openai-compatible:judge@{mock.base_url}/v1"
        argv = ["run", "--dataset", str(built_suite), "--models", "scripted", "--methods", "blind", "--scenarios",
                "pitch_l1", "--pilot", "1", "--judge", name, "--allow-unpriced", "--journal", str(journal),
                "--display", "none"]
        done = await cli(argv)
        assert done.returncode == 0, done.stderr
    with sqlite3.connect(journal) as db:
        judges = {row[0] for row in db.execute("SELECT judge FROM episodes")}
        judged = db.execute("SELECT count(*) FROM model_calls WHERE purpose = 'judge'").fetchone()[0]
        episodes = db.execute("SELECT count(*) FROM episodes").fetchone()[0]
    assert judges == {f"llm:{name}"} and judged >= episodes > 0


async def test_a_second_ctrl_c_cancels_in_flight_episodes(built_suite: Path, tmp_path: Path) -> None:
    answer = tool_loop()
    working = anyio.Event()

    def respond(request: Recorded) -> Response:
        # The probe (no tools) is answered; every episode's call hangs far longer than the test waits.
        if request.tools():
            working.set()
            return Reply(text="ok", delay_s=600)
        return answer(request)

    journal = tmp_path / "j.sqlite"
    async with serve_mock(respond) as mock:
        cmd = [sys.executable, "-m", "runner.cli", "run", "--dataset", str(built_suite), "--models",
               f"openai-compatible:m@{mock.base_url}/v1", "--allow-unpriced", "--methods", "blind", "--scenarios",
               "banking_l1", "--pilot", "1", "--journal", str(journal), "--display", "plain"]
        output = []
        with anyio.fail_after(240):  # a safety net only: each step waits for an event
            # The plain display writes its messages to stderr.
            async with await anyio.open_process(cmd, env=ENV, stdout=subprocess.DEVNULL) as process:
                await working.wait()
                process.send_signal(signal.SIGINT)
                assert process.stderr is not None
                async for chunk in process.stderr:
                    output.append(chunk.decode())
                    if "Ctrl-C again to cancel" in "".join(output):
                        break
                process.send_signal(signal.SIGINT)
                async for chunk in process.stderr:
                    output.append(chunk.decode())
                code = await process.wait()
    text = "".join(output)
    assert code == 130, text
    assert "Cancelling in-flight episodes" in text
    with sqlite3.connect(journal) as db:
        status, = db.execute("SELECT status FROM runs").fetchone()
        episodes, = db.execute("SELECT count(*) FROM episodes").fetchone()
    assert status == "interrupted" and episodes == 0
