"""The rich dashboard in a real terminal (a pty) during runs against a loopback provider: what its frames
show for a slow provider, and for a budget stop. Frames are read until they show what is asserted; no
assertion depends on how fast the machine is."""

from __future__ import annotations

import dataclasses
import fcntl
import json
import os
import pty
import re
import select
import signal
import struct
import subprocess
import sys
import termios
import time
from collections.abc import Callable
from pathlib import Path

import anyio
import pytest

from bench.mock_provider import Recorded, Reply, Response, serve_mock, tool_loop

KEY = "sk-loopback-dashboard-key"
ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
HEADER = re.compile(r"(model\s+)?method\s+scenario\s+state")
STOPPING = "Ctrl-C again"
"""What a run prints once it has taken the first Ctrl-C (runner.sweep)."""
SAFETY_S = 240.0
"""A safety net only: the conditions below are met after a few calls."""


def slow_replies(delay_s: float) -> Callable[[Recorded], Response]:
    inner = tool_loop(calls_before_finish=2)

    def respond(request: Recorded) -> Response:
        reply = inner(request)
        assert isinstance(reply, Reply)
        return dataclasses.replace(reply, delay_s=delay_s)
    return respond


def sweep_file(tmp_path: Path, base_url: str, budget: float | None, suite: Path) -> Path:
    model = f"openai-compatible:mock@{base_url}/v1"
    lines = [f'models = ["{model}"]', 'methods = ["blind"]', 'scenarios = ["retail_l1"]', "pilot = 1",
             f'dataset = "{suite}"',
             "concurrency = 4", f'[prices."{model}"]', "input = 2.0", "cached_input = 0.5", "cache_write = 2.5",
             "output = 8.0"]
    if budget is not None:
        lines.insert(4, f"budget = {budget}")
    path = tmp_path / "sweep.toml"
    path.write_text("\n".join(lines) + "\n")
    return path


class Terminal:
    """A child process on a pty (200 x 50 characters unless told); its output split into dashboard frames."""

    def __init__(self, argv: list[str], columns: int = 200, lines: int = 50) -> None:
        self.master, slave = pty.openpty()
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", lines, columns, 0, 0))
        env = {**os.environ, "OPENAI_COMPATIBLE_API_KEY": KEY, "TERM": "xterm-256color", "COLUMNS": str(columns),
               "LINES": str(lines)}
        self.process = subprocess.Popen(argv, stdin=slave, stdout=slave, stderr=slave, env=env, close_fds=True)
        os.close(slave)
        self.raw = ""

    def frames(self) -> list[str]:
        text = self.text()
        starts = [m.start() for m in HEADER.finditer(text)]
        if not starts:
            return []
        return [text[a:b] for a, b in zip(starts, [*starts[1:], len(text)], strict=True)]

    def read_until(self, done: Callable[[list[str]], bool]) -> list[str]:
        """Blocking (run it in a worker thread): read output until `done(frames)` or the child ends."""
        deadline = time.monotonic() + SAFETY_S
        while time.monotonic() < deadline:
            try:
                chunk = os.read(self.master, 65536)
            except OSError:  # the child closed the terminal
                break
            if not chunk:
                break
            self.raw += chunk.decode(errors="replace")
            if done(self.frames()):
                return self.frames()
        return self.frames()

    def stop(self) -> None:
        """Ctrl-C, and once the run says it is stopping, Ctrl-C again to cancel what is in flight. Two
        signals sent back to back arrive as one (the kernel keeps one pending SIGINT, not two), which left
        the run its whole grace period (a minute) to finish calls held by a breaker or a quota."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGINT)
            self.read_until(lambda _: STOPPING in self.text())
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGINT)
        try:
            self.drain_until_exit()
        finally:
            os.close(self.master)

    def text(self) -> str:
        """Everything the child wrote so far, without its terminal escapes."""
        return ANSI.sub("", self.raw.replace("\r", ""))

    def drain_until_exit(self) -> None:
        """Keep reading while the child ends: a full terminal buffer would block its writes (and it)."""
        deadline = time.monotonic() + SAFETY_S
        while self.process.poll() is None and time.monotonic() < deadline:
            if select.select([self.master], [], [], 0.5)[0]:
                try:
                    self.raw += os.read(self.master, 65536).decode(errors="replace")
                except OSError:
                    break
        self.process.wait(timeout=60)


def row(frame: str, scenario: str = "retail_l1") -> str:
    return next((line for line in frame.splitlines() if f" {scenario} " in line), "")


def in_flight_turns(frame: str) -> list[int]:
    found = re.search(r"\d+ \(([\d, .]+)\)\s*$", row(frame))
    return [int(t) for t in re.findall(r"\d+", found.group(1))] if found else []


def since_progress(frame: str) -> int | None:
    found = re.search(r"(\d+)s ago", row(frame))
    return int(found.group(1)) if found else None


def done_count(frame: str) -> str:
    found = re.search(r"\s(\d+/\d+)\s", row(frame).split("retail_l1", 1)[-1])
    return found.group(1) if found else ""


def shiftbench(config: Path, journal: Path) -> list[str]:
    return [sys.executable, "-m", "runner.cli", "run", "--config", str(config), "--journal", str(journal),
            "--display", "rich"]


@pytest.mark.slow
@pytest.mark.skipif(not hasattr(pty, "openpty"), reason="no pseudo-terminals on this platform")
async def test_a_slow_provider_shows_turns_in_flight_and_a_rising_time_since_progress(
        built_suite: Path, tmp_path: Path) -> None:
    async with serve_mock(slow_replies(3.0)) as mock:
        config = sweep_file(tmp_path, mock.base_url, None, built_suite)
        terminal = Terminal(shiftbench(config, tmp_path / "j.sqlite"))

        def slow_but_alive(frames: list[str]) -> bool:
            # A frame with an episode past its first turn, and two frames at the same progress whose
            # "last done" grew by at least 2 s: the stream is slow, not stuck.
            advanced = any(max(in_flight_turns(f), default=0) >= 2 for f in frames)
            quiet = [(done_count(f), since_progress(f)) for f in frames if since_progress(f) is not None]
            rising = any(a[0] == b[0] and b[1] is not None and a[1] is not None and b[1] >= a[1] + 2
                         for i, a in enumerate(quiet) for b in quiet[i + 1:])
            return advanced and rising
        try:
            frames = await anyio.to_thread.run_sync(terminal.read_until, slow_but_alive)
        finally:
            await anyio.to_thread.run_sync(terminal.stop)
    assert slow_but_alive(frames), frames[-1] if frames else terminal.raw[-2000:]
    assert "state" in frames[-1] and "in flight (turns)" in frames[-1]


@pytest.mark.skipif(not hasattr(pty, "openpty"), reason="no pseudo-terminals on this platform")
async def test_a_binding_cap_shows_the_calls_waiting_for_room_and_the_stop_says_why(built_suite: Path,
                                                                                    tmp_path: Path) -> None:
    async with serve_mock(slow_replies(0.5)) as mock:
        # Each call reserves its worst case (~$0.05 at these prices: its prompt bound and 4,096 output
        # tokens): the cap holds one call in flight, so the others wait for room while it is answered.
        config = sweep_file(tmp_path, mock.base_url, 0.08, built_suite)
        terminal = Terminal(shiftbench(config, tmp_path / "j.sqlite"))

        def waiting(frames: list[str]) -> bool:
            return any(WAITING_FOR_ROOM.search(f) for f in frames)
        try:
            frames = await anyio.to_thread.run_sync(terminal.read_until, waiting)
            await anyio.to_thread.run_sync(terminal.drain_until_exit)
        finally:
            await anyio.to_thread.run_sync(terminal.stop)
    shown = next(f for f in frames if WAITING_FOR_ROOM.search(f))
    assert "cap $0.080" in shown, shown  # beside the cap it waits under, in the cap's own digits
    assert terminal.process.returncode == 0
    assert "budget_exhausted" in terminal.raw and "budget cap $0.080" in terminal.raw  # the stop, and why


WAITING_FOR_ROOM = re.compile(r"cap \$[\d.]+, [1-9]\d* calls waiting for room")


FOOTER = (re.compile(r"run \S+ (running|completed|stopping) +\d+/\d+ units"), re.compile(r"ETA \S+"),
          re.compile(r"\$\d+\.\d\d spent"), re.compile(r"calls \d+/\d+ in flight"))


def _frame_lines(frame: str) -> list[str]:
    """A frame's lines up to its footer's last (what comes after the final frame is the report)."""
    lines = frame.rstrip("\n").splitlines()
    last = max((i for i, line in enumerate(lines) if FOOTER[3].search(line)), default=len(lines) - 1)
    return lines[: last + 1]


@pytest.mark.skipif(not hasattr(pty, "openpty"), reason="no pseudo-terminals on this platform")
@pytest.mark.parametrize(("columns", "lines"), [(80, 24), (100, 30)])
def test_on_an_ordinary_terminal_every_frame_fits_and_keeps_its_footer(
        built_suite: Path, tmp_path: Path, columns: int, lines: int) -> None:
    # 27 streams (three methods over the nine scenarios): more rows than the terminal has.
    terminal = Terminal([sys.executable, "-m", "runner.cli", "run", "--dataset", str(built_suite), "--methods",
                         "blind,oracle,tabular", "--pilot", "2", "--journal", str(tmp_path / "j.sqlite"),
                         "--display", "rich"], columns, lines)
    try:
        terminal.drain_until_exit()
    finally:
        terminal.stop()
    frames = terminal.frames()
    assert frames and terminal.process.returncode == 0, terminal.raw[-2000:]
    for frame in frames:
        shown = _frame_lines(frame)
        assert len(shown) < lines, frame  # the live area never fills the terminal (it would scroll)
        assert all(len(line.rstrip()) <= columns for line in shown), frame
        assert "…" not in frame, frame  # columns give way whole; no cell is squeezed
        footer = "\n".join(shown[-4:])
        assert all(part.search(footer) for part in FOOTER), frame
        assert re.search(r"\+\d+ more streams \(\d+ done\)", frame), frame
    header = _frame_lines(frames[-1])[0].split()
    # What gives way first: the cache, the rate, the model; the stream's name, progress and state stay.
    assert header[:5] == ["method", "scenario", "state", "window", "done"] or header[1:6] == [
        "method", "scenario", "state", "window", "done"], header
    assert "cache" not in header
    final = _frame_lines(frames[-1])
    units = re.search(r"completed +(\d+)/(\d+) units", "\n".join(final))
    listed = subprocess.run([sys.executable, "-m", "runner.cli", "runs", "--json", "--journal",
                             str(tmp_path / "j.sqlite")], capture_output=True, text=True, check=True)
    (run,) = json.loads(listed.stdout)
    assert units is not None and (int(units.group(1)), int(units.group(2))) == (run["done"], run["total"])
    finished = [line for line in final[1:] if " done " in line]
    assert finished and all(re.search(r"\s(\d+)/\1\s", line) for line in finished), final  # N/N windows
