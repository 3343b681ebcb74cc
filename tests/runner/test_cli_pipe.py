"""`shiftbench ... | head`: a reader that stops early ends the command quietly, as any Unix tool."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import orjson

from tests.support import cli_sweep


def test_a_closed_pipe_ends_quietly_with_the_sigpipe_status() -> None:
    read_end, write_end = os.pipe()
    os.close(read_end)  # the reader is gone before the first byte: every write fails, deterministically
    try:
        done = subprocess.run([sys.executable, "-m", "runner.cli", "methods"], stdout=write_end,
                              stderr=subprocess.PIPE, timeout=120, check=False)
    finally:
        os.close(write_end)
    assert done.stderr == b""
    assert done.returncode == 128 + signal.SIGPIPE


def test_a_slow_reader_gets_the_whole_json_report_with_unbuffered_output(built_suite: Path, tmp_path: Path) -> None:
    # PYTHONUNBUFFERED=1 (CI systems, containers, SLURM setups set it) made Python write the report straight
    # to the pipe: a write the kernel took only in part lost the rest (64 KiB of 120 KB, exit code 0) when the
    # reader came late, as `report --json | jq` on a loaded machine. The reader here starts a second late.
    journal, run_id = cli_sweep(built_suite, tmp_path, ("retail_l1", "pitch_l1", "banking_l1", "retail_l2", "pitch_l2",
                                                        "banking_l2"),
                                ("blind", "oracle", "tabular"))
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    child = subprocess.Popen([sys.executable, "-m", "runner.cli", "report", run_id, "--json", "--journal",
                              str(journal)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    time.sleep(1.0)  # only lets the pipe fill first; the check below holds however long the child takes
    out, err = child.communicate(timeout=300)
    assert child.returncode == 0, err
    assert len(out) > 65_536  # more than a pipe holds
    assert orjson.loads(out)["run_id"] == run_id  # whole: it parses


def test_a_late_thread_answer_is_dropped_and_any_other_loop_error_goes_to_the_default_handler() -> None:
    # The handler run_async installs on the command's loop; it once named asyncio without importing it, so
    # the late answer it exists to drop raised NameError and printed a traceback instead.
    import asyncio

    from runner.cli.parsing import _late_result

    class Loop:
        def __init__(self) -> None:
            self.passed: list[dict[str, object]] = []

        def default_exception_handler(self, context: dict[str, object]) -> None:
            self.passed.append(context)

    class Handle:
        def __repr__(self) -> str:
            return "<Handle Future.set_result(<result>)>"

    loop = Loop()
    late = {"exception": asyncio.InvalidStateError("invalid state"), "handle": Handle()}
    other = {"exception": ValueError("boom"), "handle": Handle()}
    _late_result(loop, late)  # type: ignore[arg-type]
    _late_result(loop, other)  # type: ignore[arg-type]
    assert loop.passed == [other]
