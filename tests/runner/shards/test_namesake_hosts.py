"""Two hosts of one name: a second machine or container whose hostname is this one's (`debian`,
`localhost`, an image's default) cannot see the first's PIDs, so a lease of this hostname is judged by its
PID only when it was taken in this process space too (boot id and PID namespace). The real case: a copy
of a running shard started in another PID namespace under the same hostname is refused in one line
naming the host and PID that hold it, before it says it "continues" the shard, and the first goes on."""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import time
from pathlib import Path

import orjson
import pytest

from runner.journal.lease import Lease, live_writer, process_space
from runner.schedule.lease_keeper import LEASE_ENV
from tests.runner.shards.processes import PROCESS_TIMEOUT_S, finish, freeze_after, shiftbench, start

OTHER_SPACE = "0b00-other-boot/pid:[4026531999]"


def _gone_pid() -> int:
    """The PID of a process that has ended (and been reaped): no process here has it."""
    ended = subprocess.Popen(["true"])
    ended.wait(timeout=60)
    return ended.pid


def test_a_lease_of_this_hostname_from_another_process_space_holds_until_it_lapses() -> None:
    now, host = time.time(), socket.gethostname()
    elsewhere = Lease(host, _gone_pid(), now - 3, 60.0, space=OTHER_SPACE)
    said = live_writer(True, 0, "", elsewhere.to_json(), now)
    assert said is not None and said.startswith(f"process {elsewhere.pid} on host {host} (another machine or "
                                                "container of this one's name; its lease was renewed 3 s ago")
    assert live_writer(True, 0, "", Lease(host, elsewhere.pid, now - 61, 60.0, space=OTHER_SPACE).to_json(),
                       now) is None
    # taken here (this space, the default): judged by its PID, which is gone
    assert Lease(host, 1, now, 60.0).space == process_space()
    assert live_writer(True, 0, "", Lease(host, elsewhere.pid, now, 60.0).to_json(), now) is None
    # a lease written before spaces were recorded: judged by the hostname, as it always was
    old = orjson.dumps({"host": host, "pid": elsewhere.pid, "renewed_at": now, "ttl_s": 60.0}).decode()
    assert Lease.from_json(old) == Lease(host, elsewhere.pid, now, 60.0, space="")
    assert live_writer(True, 0, "", old, now) is None


def _in_other_pid_space(command: list[str]) -> list[str]:
    """`command` in a new PID namespace (and its own /proc), the hostname unchanged: a second machine or
    container of this one's name as far as PIDs go, on the same files."""
    return ["unshare", "--pid", "--fork", "--mount-proc", *command]


def _pid_namespaces_work() -> bool:
    if shutil.which("unshare") is None or not process_space():
        return False
    done = subprocess.run(_in_other_pid_space(["sh", "-c", "echo $$"]), capture_output=True, text=True, timeout=60)
    return done.returncode == 0 and done.stdout.strip() == "1"


@pytest.mark.slow
def test_a_copy_of_a_running_shard_under_the_same_hostname_is_refused_naming_its_holder(
        built_suite: Path, tmp_path: Path) -> None:
    if not _pid_namespaces_work():
        pytest.skip("needs unshare --pid (root, or user namespaces) to run a second host of the same name")
    journal = tmp_path / "shard-0.sqlite"
    flags = ["--dataset", str(built_suite), "--models", "scripted", "--methods", "tabular,rag",
             "--scenarios", "retail_l1,banking_l1", "--pilot", "6", "--display", "none",
             "--shard", "0/2", "--journal", str(tmp_path / "shard-{shard}.sqlite")]
    env = {LEASE_ENV: "600"}  # the frozen first copy's lease holds however slow this machine is
    first = start(shiftbench("run", *flags), tmp_path / "first.log", env)
    try:
        assert freeze_after(first, journal, 3), (tmp_path / "first.log").read_text()
        second = subprocess.run(_in_other_pid_space(shiftbench("run", *flags)), capture_output=True, text=True,
                                timeout=PROCESS_TIMEOUT_S, env={**os.environ, **env})
        assert second.returncode == 2 and second.stderr.count("\n") == 1, second.stderr
        assert (f"is still running in process {first.pid} on host {socket.gethostname()} (another machine or "
                "container of this one's name") in second.stderr, second.stderr
        assert "continues run" not in second.stdout, second.stdout
    finally:
        if first.poll() is None:
            first.send_signal(signal.SIGCONT)  # the first copy goes on
    assert finish([first]) == [0], (tmp_path / "first.log").read_text()
    assert "took this run over" not in (tmp_path / "first.log").read_text()
