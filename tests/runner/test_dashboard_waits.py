"""The dashboard names why a stream's calls are held, in a real terminal: "breaker open" for a stream whose
endpoint fails every call (its circuit breaker opens and its calls wait), "waiting for quota" for one
whose endpoint allows a request a minute. Frames are read until they show it; both states last far
longer than a redraw (the breaker's probes back off from 2 s, the quota refills in a minute), so no
assertion depends on how fast the machine is."""

from __future__ import annotations

import pty
from pathlib import Path

import anyio
import pytest

from bench.mock_provider import Failure, Recorded, Response, serve_mock, tool_loop
from tests.runner.test_dashboard_pty import Terminal, shiftbench

ANSWER = tool_loop(calls_before_finish=2)


def respond(request: Recorded) -> Response:
    """Every agent call to /failing/ gets a 500; the probe (no tools) and everything else is answered."""
    if request.path.startswith("/failing/") and request.tools():
        return Failure(500, "mock: the server is down")
    return ANSWER(request)


def sweep_file(tmp_path: Path, base_url: str, suite: Path) -> Path:
    text = f"""models = ["failing", "limited"]
methods = ["blind"]
scenarios = ["retail_l1"]
pilot = 1
dataset = "{suite}"
allow_unpriced = true
breaker_failures = 2
max_request_attempts = 100
[endpoints.failing]
kind = "openai-compatible"
model = "m"
base_url = "{base_url}/failing/v1"
[endpoints.limited]
kind = "openai-compatible"
model = "m"
base_url = "{base_url}/limited/v1"
requests_per_minute = 1
"""
    path = tmp_path / "sweep.toml"
    path.write_text(text)
    return path


def model_row(frame: str, model: str) -> str:
    return next((line for line in frame.splitlines() if line.split()[:1] == [model]), "")


def shows(frames: list[str], model: str, state: str) -> bool:
    return any(state in model_row(frame, model) for frame in frames)


@pytest.mark.slow
@pytest.mark.skipif(not hasattr(pty, "openpty"), reason="no pseudo-terminals on this platform")
async def test_a_stream_held_by_an_open_breaker_or_a_quota_says_so(built_suite: Path, tmp_path: Path) -> None:
    async with serve_mock(respond) as mock:
        terminal = Terminal(shiftbench(sweep_file(tmp_path, mock.base_url, built_suite), tmp_path / "j.sqlite"))

        def both(frames: list[str]) -> bool:
            return shows(frames, "failing", "breaker open") and shows(frames, "limited", "waiting for quota")
        try:
            frames = await anyio.to_thread.run_sync(terminal.read_until, both)
        finally:
            await anyio.to_thread.run_sync(terminal.stop)
    assert both(frames), frames[-1] if frames else terminal.raw[-2000:]
    # Each state is its own stream's: the stream whose endpoint answers never shows the breaker, and the
    # footer names the paused endpoint.
    assert not shows(frames, "limited", "breaker open")
    assert any("/failing/v1 paused" in frame for frame in frames)
