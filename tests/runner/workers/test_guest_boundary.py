"""The boundary a worker's method runs under: with Landlock (this machine's kernel has ABI 7), a method
that opens the dataset or connects to a TCP port of its own is refused (PermissionError: its stream
stops with `method_error`), while the same code with `--methods-in-process` reads and connects, which
shows the refusal is the boundary's; the report names each stream's boundary."""

from __future__ import annotations

import os
import socket
import subprocess
from pathlib import Path

import anyio
import pytest

from runner.report.build import build_report
from runner.workers.boundary import landlock_abi
from tests.runner.test_kill_resume import only_run, shiftbench
from tests.runner.workers.test_guest_failures import failure_lines
from tests.runner.workers.test_guest_runs import guest_file

pytestmark = pytest.mark.skipif(landlock_abi() < 4, reason="needs Landlock with network rules (ABI 4+)")


def sweep(suite: Path, journal: Path, methods: str, env: dict[str, str],
          *more: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(shiftbench("run", "--dataset", str(suite), "--scenarios", "retail_l1", "--methods", methods,
                                     "--pilot", "2", "--journal", str(journal), "--display", "none", *more),
                          capture_output=True, text=True, timeout=300, env={**os.environ, **env})


def test_a_guest_cannot_open_the_dataset_or_a_tcp_connection_of_its_own(built_suite: Path, tmp_path: Path) -> None:
    folder = tmp_path / "method"
    folder.mkdir()
    guests = guest_file(folder)
    secret = next((built_suite / "data" / "retail_l1").glob("*.jsonl"))
    with socket.create_server(("127.0.0.1", 0)) as server:
        env = {"GUEST_SECRET": str(secret), "GUEST_PORT": str(server.getsockname()[1])}
        methods = f"reader={guests}:READER,net={guests}:NET,counter={guests}:COUNTER"
        journal = tmp_path / "bounded.sqlite"
        named = ("--method-env", "GUEST_SECRET", "--method-env", "GUEST_PORT")  # a worker gets named variables only
        done = sweep(built_suite, journal, methods, env, *named)
        assert done.returncode == 1 and "Traceback" not in done.stdout + done.stderr, done.stdout + done.stderr
        lines = {line.split(" ")[1]: line for line in failure_lines(done.stdout)}
        assert set(lines) == {"scripted|reader|retail_l1", "scripted|net|retail_l1"}, lines
        assert f"PermissionError: [Errno 13] Permission denied: '{secret}'" in lines["scripted|reader|retail_l1"]
        assert "PermissionError" in lines["scripted|net|retail_l1"]
        report = anyio.run(build_report, journal, only_run(journal)[0])
        boundaries = {row.stream_id: row.boundary for row in report.method_streams}
        assert boundaries["scripted|counter|retail_l1"].startswith(f"landlock ABI {landlock_abi()}")
        opened = sweep(built_suite, tmp_path / "open.sqlite", methods, env, *named, "--methods-in-process")
        assert opened.returncode == 0 and failure_lines(opened.stdout) == [], opened.stdout
