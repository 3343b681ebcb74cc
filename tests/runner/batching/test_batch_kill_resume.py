"""SIGKILL a `--batch tests` sweep while a batch is outstanding, resume it: against each of the mock's batch
APIs (OpenAI files + batches, Anthropic message batches), every batched request was submitted exactly
once (the mock's own per-custom-id counter) and the rewards are those of an uninterrupted live run.

The kill waits on state, never on a clock: the mock lists a batch in progress AND the journal holds its
'submitted' row (the id a resume must poll)."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import anyio.to_thread
import httpx
import pytest

from bench.mock_batch_state import BatchSettings
from bench.mock_server import mock_process
from tests.support import episode_rewards

pytestmark = pytest.mark.slow

KEY = "sk-loopback-test-key-0123456789"
PRICE = 'input = 2.0\ncached_input = 0.5\ncache_write = 2.5\noutput = 8.0\n'
BATCH_PRICE = 'input = 1.0\ncached_input = 0.25\ncache_write = 1.25\noutput = 4.0\n'
DEADLINE_S = 120.0


def sweep_file(folder: Path, kind: str, url: str) -> Path:
    base = url if kind == "anthropic" else f"{url}/v1"
    path = folder / f"{kind}.toml"
    path.write_text(f'[sweep]\nmodels = ["m"]\nmethods = ["blind", "tabular"]\nscenarios = ["banking_l1"]\npilot = 2\n'
                    f'block_size = 2\n[batch]\nwait_s = 0.2\npoll_s = 0.2\npoll_max_s = 0.5\n'
                    f'[endpoints.m]\nkind = "{kind}"\nmodel = "mock-model"\nbase_url = "{base}"\n'
                    f'[prices."m"]\n{PRICE}[prices."m".batch]\n{BATCH_PRICE}', encoding="utf-8")
    return path


def shiftbench(*args: str) -> list[str]:
    return [sys.executable, "-m", "runner.cli", *args]


def env() -> dict[str, str]:
    return {**os.environ, "OPENAI_API_KEY": KEY, "ANTHROPIC_API_KEY": KEY}


def submitted_row(journal: Path) -> bool:
    if not journal.exists():
        return False
    try:
        with sqlite3.connect(f"file:{journal}?mode=ro", uri=True, timeout=10) as db:
            row = db.execute("SELECT count(*) FROM provider_batches WHERE status = 'submitted'").fetchone()
            return bool(row[0] > 0)
    except sqlite3.OperationalError:
        return False


def mock_in_progress(http: httpx.Client, kind: str) -> bool:
    if kind == "anthropic":
        listed = http.get("/v1/messages/batches", params={"limit": 5}).json()["data"]
        return any(b["processing_status"] == "in_progress" for b in listed)
    listed = http.get("/v1/batches", params={"limit": 5}).json()["data"]
    return any(b["status"] in ("validating", "in_progress") for b in listed)


@pytest.mark.parametrize("kind", ["openai", "anthropic"])
async def test_killed_with_a_batch_outstanding_resumes_without_paying_twice(built_suite: Path, tmp_path: Path,
                                                                            kind: str) -> None:
    async with mock_process(0.0, 2, batch=BatchSettings(latency_s=3.0)) as url:
        # The processes and polls block: they run in a thread while the mock serves from its own process.
        live, journal, outstanding, submissions = await anyio.to_thread.run_sync(
            kill_and_resume, sweep_file(tmp_path, kind, url), built_suite, tmp_path, url, kind)
    with sqlite3.connect(journal) as db:
        batched = {row[0] for row in db.execute("SELECT DISTINCT custom_id FROM batch_items")}
        polled = {row[0] for row in db.execute("SELECT batch_id FROM provider_batches WHERE status = 'collected'")}
        status, = db.execute("SELECT status FROM runs").fetchone()
        routes = {row[0] for row in db.execute(
            "SELECT c.route FROM model_calls c JOIN units u ON u.unit_id = c.unit_id WHERE u.phase = 'test'")}
    assert status == "completed" and routes == {"batch"}
    assert outstanding and outstanding <= polled  # the batch outstanding at the kill was polled, not redone
    assert set(submissions) == batched and set(submissions.values()) == {1}
    assert episode_rewards(journal) == episode_rewards(live)


def kill_and_resume(config: Path, suite: Path, folder: Path, url: str, kind: str
                    ) -> tuple[Path, Path, set[str], dict[str, int]]:
    """A live reference run, then the batched run killed with a batch outstanding and resumed: (live
    journal, batched journal, the batch ids outstanding at the kill, the mock's submissions per custom id)."""
    common = ["--config", str(config), "--dataset", str(suite), "--display", "none"]
    live = folder / "live.sqlite"
    subprocess.run(shiftbench("run", *common, "--journal", str(live)), env=env(), check=True, capture_output=True,
                   timeout=DEADLINE_S)
    journal = folder / "batched.sqlite"
    with httpx.Client(base_url=url) as http:
        assert http.get("/_mock/batch_submissions").json() == {}  # the live run batched nothing
        process = subprocess.Popen(shiftbench("run", *common, "--batch", "tests", "--journal", str(journal)),
                                   env=env(), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        try:
            deadline = time.monotonic() + DEADLINE_S
            while not (submitted_row(journal) and mock_in_progress(http, kind)):
                assert process.poll() is None, process.stderr.read().decode() if process.stderr else ""
                assert time.monotonic() < deadline, "no batch outstanding in time"
                time.sleep(0.05)
            process.send_signal(signal.SIGKILL)
        finally:
            process.wait(timeout=30)
            if process.stderr is not None:
                process.stderr.close()
        with sqlite3.connect(journal) as db:
            run_id, = db.execute("SELECT run_id FROM runs").fetchone()
            outstanding = {row[0] for row in db.execute(
                "SELECT batch_id FROM provider_batches WHERE status = 'submitted'")}
        resumed = subprocess.run(shiftbench("resume", run_id, "--journal", str(journal), "--display", "none"),
                                 env=env(), capture_output=True, timeout=DEADLINE_S, text=True)
        assert resumed.returncode == 0, resumed.stderr
        submissions: dict[str, int] = http.get("/_mock/batch_submissions").json()
    return live, journal, outstanding, submissions
