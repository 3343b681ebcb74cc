"""`shiftbench ... | head`: a reader that stops early ends the command quietly, as any Unix tool."""

from __future__ import annotations

import os
import signal
import subprocess
import sys


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
