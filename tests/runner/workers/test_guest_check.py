"""`methods check` as strict as the run, and under the run's boundary: every play of a user's method is
in a worker of its own, so each broken promise is a FAIL line with its evidence (never a traceback,
exit 1), the label-rebuild attack is refused in one line naming the module, a loop ends at its limit,
a flood of output stays in the worker's log, and nothing the method tries reaches past its worker."""

from __future__ import annotations

import os
import socket
import sys
from pathlib import Path

import pytest

from runner.cli import main
from runner.workers.boundary import landlock_abi
from tests.runner.workers import probe_method
from tests.runner.workers.test_guest_labels import REFUSAL
from tests.runner.workers.test_guest_runs import guest_file

HOG = Path(__file__).with_name("hog_method.py").resolve()

linux_boundary = pytest.mark.skipif(landlock_abi() < 4 or not sys.platform.startswith("linux"),
                                    reason="needs Linux with Landlock network rules (ABI 4+)")


def check(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, dict[str, str]]:
    code = main(["methods", "check", *args, "--pilot", "2"])
    captured = capsys.readouterr()
    assert "Traceback" not in captured.out + captured.err, captured.out + captured.err
    failed = {line.split("  ")[1].strip(): line for line in captured.out.splitlines() if line.startswith("FAIL")}
    return code, captured.out, failed


@pytest.mark.parametrize(("name", "failing", "evidence"), [
    ("RAISES", "plays the stream", "ValueError: planted at record 4"),
    ("SET_STATE", "plays the stream", "state['tags'] is a set"),
    ("REBUILD", "plays the stream", REFUSAL),
])
def test_a_guest_breaking_a_promise_fails_with_evidence_and_no_traceback(
        name: str, failing: str, evidence: str, built_suite: Path, tmp_path: Path,
        capsys: pytest.CaptureFixture[str]) -> None:
    guests = guest_file(tmp_path)
    code, out, failed = check(capsys, f"{guests}:{name}", "--dataset", str(built_suite))
    assert code == 1, out
    assert "of its 720 serving and" in out
    assert list(failed) == [failing] and evidence in failed[failing] and "guests.py:" in failed[failing], out


def test_class_level_state_is_its_own_in_each_guest_s_worker(built_suite: Path, tmp_path: Path,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    # SHARED keeps class-level state: in a worker of its own per instance (as a run plays each stream) there is
    # nothing to share, so the check passes where the runner's process would have shown it.
    code, out, failed = check(capsys, f"{guest_file(tmp_path)}:SHARED", "--dataset", str(built_suite))
    assert code == 0 and failed == {}, out
    assert "PASS  runs as a guest" in out and "every play in a worker process of its own" in out


def test_a_frame_spy_finds_nothing_of_the_check_in_its_frames(built_suite: Path, tmp_path: Path,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    code, out, failed = check(capsys, f"{guest_file(tmp_path)}:SPY", "--dataset", str(built_suite))
    # its state holds its pid, so two instances (two workers) differ: that, and only that, fails
    assert sorted(failed) == ["instances are independent", "learn is deterministic"], out
    assert all('found":[]' in line for line in failed.values()), failed


def test_a_loop_ends_at_its_limit_as_one_fail_line(built_suite: Path, tmp_path: Path,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    guests = guest_file(tmp_path)
    code, out, failed = check(capsys, f"{guests}:SPIN", "--dataset", str(built_suite), "--method-context-limit", "1")
    assert code == 1 and list(failed) == ["plays the stream"], out
    assert "took longer than its limit of 1 s" in failed["plays the stream"]


def test_a_flood_of_output_stays_out_of_the_terminal(built_suite: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, failed = check(capsys, f"{HOG}:HOG", "--option", 'what="output"', "--option", "size_mb=20",
                              "--dataset", str(built_suite))
    assert len(out) < 20_000, len(out)  # the check's own lines only
    assert code == 1 and "output" in failed["plays the stream"], out


@linux_boundary
def test_nothing_the_method_tries_gets_past_its_worker(built_suite: Path, tmp_path: Path,
                                                       capsys: pytest.CaptureFixture[str],
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-check-0123")
    outside = tmp_path / "outside"
    outside.mkdir()
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as udp:
        udp.bind(("127.0.0.1", 0))
        udp.setblocking(False)
        options = {"udp_port": str(udp.getsockname()[1]), "unix_path": str(tmp_path / "none.sock"), "tcp_port": "9",
                   "read_path": str(Path.home() / ".bashrc"), "write_dir": str(outside)}
        probe = Path(probe_method.__file__).resolve()
        code, out, failed = check(capsys, f"{probe}:PROBE", "--dataset", str(built_suite),
                                  *[f"--option={key}={value!r}".replace("'", '"') for key, value in options.items()])
        with pytest.raises(BlockingIOError):
            udp.recv(4096)
    assert os.listdir(outside) == []  # no planted.pth
    assert "PASS  runs as a guest" in out, out
