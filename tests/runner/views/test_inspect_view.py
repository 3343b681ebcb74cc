"""`inspect view` serves the logs `export --format inspect` writes: the viewer started as a user starts it
(its own process, a free loopback port), asked over HTTP for its log listing and for one log."""

from __future__ import annotations

import socket
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from urllib.parse import quote, urlparse

import httpx
import pytest

from runner.cli import main

STARTUP_S = 120.0
"""A safety net only: the viewer answers within seconds, slower on a loaded machine."""


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def wait_for_listing(http: httpx.Client, viewer: subprocess.Popen[bytes]) -> httpx.Response:
    deadline = time.monotonic() + STARTUP_S
    while time.monotonic() < deadline:
        assert viewer.poll() is None, "inspect view exited before it answered"
        try:
            answer = http.get("/api/log-files")
            if answer.status_code == 200:
                return answer
        except httpx.TransportError:
            pass  # not listening yet
        time.sleep(0.5)
    raise AssertionError(f"inspect view did not answer within {STARTUP_S:.0f}s")


def test_inspect_view_serves_the_exported_logs(built_suite: Path, tmp_path: Path) -> None:
    log_api = pytest.importorskip("inspect_ai.log", reason="the inspect extra is not installed "
                                                          "(pip install -e '.[inspect]'; .ci/run installs it)")
    journal, logs = tmp_path / "j.sqlite", tmp_path / "logs"
    assert main(["run", "--dataset", str(built_suite), "--scenarios", "retail_l1,pitch_l1", "--methods", "blind",
                 "--pilot", "1", "--display", "none", "--journal", str(journal)]) == 0
    with sqlite3.connect(journal) as db:
        (run_id,) = db.execute("SELECT run_id FROM runs").fetchone()
    assert main(["export", run_id, "--format", "inspect", "--out", str(logs), "--journal", str(journal)]) == 0
    exported = sorted(path.name for path in logs.glob("*.eval"))
    assert len(exported) == 2

    port = free_port()
    viewer = subprocess.Popen([sys.executable, "-m", "inspect_ai", "view", "--log-dir", str(logs), "--port",
                               str(port), "--host", "127.0.0.1"], stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL)
    # trust_env off: a proxy set in the environment must not see loopback requests.
    try:
        with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=60.0, trust_env=False) as http:
            listed = wait_for_listing(http, viewer).json()["files"]
            paths = sorted(urlparse(entry["name"]).path for entry in listed)
            assert [Path(path).name for path in paths] == exported
            assert {entry["task"] for entry in listed} == {"shiftbench/retail_l1", "shiftbench/pitch_l1"}
            served = http.get(f"/api/logs/{quote(paths[0])}").json()
    finally:
        viewer.terminate()
        try:
            viewer.wait(timeout=30)
        except subprocess.TimeoutExpired:
            viewer.kill()
            viewer.wait(timeout=30)
    written = log_api.read_eval_log(paths[0])
    assert served["eval"]["task"] == written.eval.task
    assert len(served["samples"]) == len(written.samples or []) > 0
