"""The displays against a hand-filled RunProgress and a fake clock: what a user watching the run reads."""

from __future__ import annotations

import io
import re
import sys
from pathlib import Path

import pytest
from rich.console import Console

import runner
from runner.display.live import (
    RICH_MIN_INTERVAL_S,
    NullDisplay,
    PlainDisplay,
    RichDisplay,
    make_display,
    running_scores,
    stream_state,
)
from runner.display.progress import RunProgress, StreamProgress
from runner.providers import RateLimiter
from runner.providers.breaker import CircuitBreaker
from runner.providers.pool import Replica, Router
from runner.schedule.engine import StopControl
from simulators.errors import ShiftbenchInputError

ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def _stream(method: str, scenario: str, serving: tuple[int, int], test_total: int, windows: int,
            window: int, phase: str) -> StreamProgress:
    return StreamProgress(stream_id=f"openai/gpt-4o/{method}/{scenario}", model="openai/gpt-4o", method=method,
                          scenario=scenario, serving_total=serving[1], test_total=test_total, windows=windows,
                          serving_done=serving[0], window=window, window_number=window, phase=phase)


def make_progress(clock: Clock, budget_usd: float | None = 50.0) -> RunProgress:
    """retail: 16/18 done, H [1, 0, 1, 1] -> 75.0, F [1, 0] -> 50.0; pitch: 4/8 done, H [0.5] -> 50.0.

    Run-wide H = (75 + 50) / 2 = 62.5, F = 50.0. ETA (runner.display.eta): retail's 6 tests of 3 turns
    finished here, 18 calls in 100 s = 0.18/s; left: retail 2 tests, pitch 1 serving and 3 tests, at 3
    turns each = 18 calls -> 100 s; pitch's serving (20 s a piece, the last 10 s ago: 10 s) and then its
    last test set (1 x 3 calls: 16.7 s) ends sooner: ETA 100 s.
    """
    retail = _stream("blind", "retail_l1", (10, 10), 8, 6, 3, "testing")
    for category, reward in [("hidden", 1.0), ("hidden", 0.0), ("hidden", 1.0), ("hidden", 1.0),
                             ("fully_specified", 1.0), ("fully_specified", 0.0)]:
        retail.record_test(category, reward)
    pitch = _stream("blind", "pitch_l1", (3, 4), 4, 4, 2, "serving")
    pitch.record_test("hidden", 0.5)
    retail.turns_started, retail.test_timed, retail.test_turns = 18, 6, 18
    pitch.serving_finished_at.extend([50.0, 70.0, 90.0])
    progress = RunProgress(run_id="run-7", journal_path="/data/journal.sqlite", clock=clock, started=0.0,
                           input_tokens=1_234_567, output_tokens=34_500, spent_usd=12.5, reserved_usd=0.75,
                           budget_usd=budget_usd, calls_in_flight=7, call_limit=32, retries=3, rate_limited=2,
                           call_started={1: 70.0, 2: 95.0})
    progress.streams = {s.stream_id: s for s in (retail, pitch)}
    return progress


def _console() -> tuple[Console, io.StringIO]:
    buffer = io.StringIO()
    return Console(file=buffer, force_terminal=True, width=160), buffer


def _plain(buffer: io.StringIO) -> str:
    return ANSI.sub("", buffer.getvalue())


def test_running_scores_weigh_each_stream_once() -> None:
    assert running_scores(make_progress(Clock())) == (62.5, 50.0)


def test_plain_line_holds_every_figure() -> None:
    clock, out = Clock(), io.StringIO()
    display = PlainDisplay(make_progress(clock), stream=out)
    display.start()
    journal_line, status = out.getvalue().splitlines()
    assert journal_line == "run run-7: journal /data/journal.sqlite"
    for part in ("[0:01:40] running 20/26 units (77%)", "H 62.5 F 50.0", "tokens 1.2M in 34.5k out",
                 "$12.50 spent, $0.75 reserved, cap $50.00", "calls 7/32", "retries 3 429s 2", "ETA 0:01:40"):
        assert part in status


def test_plain_prints_once_per_period_and_on_stop() -> None:
    clock, out = Clock(), io.StringIO()
    display = PlainDisplay(make_progress(clock), stream=out, every_s=10)
    display.start()
    clock.now += 9.9
    display.refresh()
    assert len(out.getvalue().splitlines()) == 2
    clock.now += 0.1
    display.refresh()
    display.refresh()
    assert len(out.getvalue().splitlines()) == 3
    display.message("Stopping: finishing in-flight episodes.")
    display.stop()
    lines = out.getvalue().splitlines()
    assert lines[3] == "Stopping: finishing in-flight episodes."
    assert len(lines) == 5


def test_plain_line_without_a_cap_and_before_any_progress() -> None:
    clock, out = Clock(), io.StringIO()
    progress = make_progress(clock, budget_usd=None)
    progress.streams = {}
    PlainDisplay(progress, stream=out).stop()
    line = out.getvalue()
    assert "cap" not in line
    assert "0/0 units (0%)" in line and "H - F -" in line and "ETA -" in line


def test_rich_dashboard_shows_streams_and_run_figures() -> None:
    console, buffer = _console()
    progress = make_progress(Clock())
    retail_stream = next(s for s in progress.streams.values() if s.scenario == "retail_l1")
    retail_stream.cache.add(10_000, 7_500, 400, 0.125)  # a stream's prompt cache: 75% read, $0.125 saved
    progress.cache.add(40_000, 10_000, 1_500, 0.25)
    display = RichDisplay(progress, console=console)
    display.start()
    display.stop()
    text = _plain(buffer)
    retail = next(line for line in text.splitlines() if "retail_l1" in line)
    # Its episodes were done before this process (a resume): no "last done" to show.
    assert retail.split() == ["openai/gpt-4o", "blind", "retail_l1", "testing", "3/6", "16/18", "75.0", "50.0",
                              "$0.00", "75%", "hit,", "$0.12", "saved", "-", "-", "-"]
    assert "cache 25% hit, $0.25 saved, 1.5k written" in text
    pitch = next(line for line in text.splitlines() if "pitch_l1" in line)
    assert pitch.split()[3:10] == ["serving", "2/4", "4/8", "50.0", "-", "$0.00", "-"]
    # ETA: the tests left at the run's test throughput outlast pitch's serving and last test set.
    for part in ("run run-7 running", "20/26 units", "Avg H 62.5", "Avg F 50.0", "ETA 0:01:40",
                 "tokens 1.2M in 34.5k out", "$12.50 spent, $0.75 reserved, cap $50.00", "calls 7/32 in flight",
                 "oldest 30s", "retries 3", "429s 2"):
        assert part in text


def test_rich_dashboard_shows_each_replica_of_an_endpoint_pool() -> None:
    clock = Clock()
    pool = Router([Replica(f"http://r{i}/v1", f"http://r{i}/v1", RateLimiter(), CircuitBreaker(label=f"http://r{i}/v1"))
                   for i in range(2)], label="qwen-pool")
    pool.replicas[0].outstanding, pool.replicas[0].served = 3, 120
    pool.replicas[1].served, pool.replicas[1].failed = 40, 2
    progress = make_progress(clock)
    progress.pools = [pool]
    console, buffer = _console()
    display = RichDisplay(progress, console=console)
    display.start()
    display.stop()
    assert ("pool qwen-pool: http://r0/v1 3 out 120 served, http://r1/v1 0 out 40 served 2 failed"
            in _plain(buffer))


class _Batches:
    def dashboard_line(self) -> str:
        return "batches 2 out (1,200 items), 35 waiting; 7 sent, 4 resubmitted, 1 live"


def test_both_displays_show_the_batches_of_batch_tests_and_the_rich_one_packs_them_to_80() -> None:
    clock = Clock()
    progress = make_progress(clock)
    progress.batchers = [_Batches()]
    out = io.StringIO()
    plain = PlainDisplay(progress, stream=out)
    plain.start()
    assert "| batches 2 out (1,200 items), 35 waiting; 7 sent, 4 resubmitted, 1 live" in out.getvalue()
    buffer = io.StringIO()
    rich = RichDisplay(progress, console=Console(file=buffer, force_terminal=True, width=80, height=24))
    rich.start()
    rich.stop()
    text = _plain(buffer)
    assert "batches 2 out (1,200 items), 35 waiting  7 sent, 4 resubmitted, 1 live" in text
    assert max(len(line) for line in text.splitlines()) <= 80


def test_rich_refresh_is_throttled_to_four_per_second() -> None:
    clock = Clock()
    console, buffer = _console()
    display = RichDisplay(make_progress(clock), console=console)
    display.start()  # render 1
    clock.now += 0.1
    display.refresh()  # skipped: 0.1 s after the last
    clock.now += 0.2
    display.refresh()  # render 2: 0.3 s after
    display.refresh()  # skipped
    display.stop()  # render 3: the final state is always drawn
    assert _plain(buffer).count("retail_l1") == 3


def test_rich_message_prints_above_the_dashboard() -> None:
    console, buffer = _console()
    display = RichDisplay(make_progress(Clock()), console=console)
    display.start()
    display.message("[429] rate limited by provider")
    display.stop()
    assert "[429] rate limited by provider" in _plain(buffer)


def test_rich_cuts_long_stream_lists_and_keeps_unfinished_first() -> None:
    clock = Clock()
    progress = make_progress(clock)
    finished = _stream("oracle", "banking_l1", (4, 4), 2, 4, 4, "done")
    progress.streams = {finished.stream_id: finished, **progress.streams}
    console, buffer = _console()
    console.print(RichDisplay(progress, console=console, max_rows=2).render())
    text = _plain(buffer)
    assert "retail_l1" in text and "pitch_l1" in text
    assert "banking_l1" not in text
    assert "+1 more streams (1 done)" in text


def test_make_display_kinds(monkeypatch: pytest.MonkeyPatch) -> None:
    progress = make_progress(Clock())
    assert isinstance(make_display("rich", progress), RichDisplay)
    assert isinstance(make_display("plain", progress), PlainDisplay)
    assert isinstance(make_display("none", progress), NullDisplay)
    monkeypatch.setattr(sys.stdout, "isatty", lambda: False)
    assert isinstance(make_display("auto", progress), PlainDisplay)
    monkeypatch.setattr(sys.stdout, "isatty", lambda: True)
    assert isinstance(make_display("auto", progress), RichDisplay)
    with pytest.raises(ShiftbenchInputError, match="auto, rich, plain, none"):
        make_display("fancy", progress)


def test_null_display_does_nothing(capsys: pytest.CaptureFixture[str]) -> None:
    display = NullDisplay()
    display.start()
    display.refresh()
    display.message("x")
    display.stop()
    assert capsys.readouterr() == ("", "")


def test_rich_is_imported_only_by_the_display_and_view_layer() -> None:
    root = Path(runner.__file__).parent
    importers = [path.relative_to(root).as_posix() for path in root.rglob("*.py")
                 if re.search(r"^\s*(from|import)\s+rich\b", path.read_text(), re.MULTILINE)]
    assert [name for name in importers if name != "display/live.py" and not name.startswith("views/")] == []
    assert "display/live.py" in importers


def test_a_stream_tells_stuck_from_slow_and_shows_a_stop_at_once() -> None:
    clock = Clock()
    progress = make_progress(clock)
    pitch = next(s for s in progress.streams.values() if s.scenario == "pitch_l1")
    pitch.turn_started("u1")
    pitch.turn_started("u1")
    pitch.turn_started("u2")
    pitch.episode_ended("u0", clock.now)  # finished at 100 s
    clock.now += 12
    assert stream_state(pitch, progress) == "serving"
    assert pitch.since_progress(clock.now, progress.started) == 12
    pitch.quota_until = clock.now + 30  # a 429 asked this stream's call to wait 30 s
    assert stream_state(pitch, progress) == "waiting for quota (30s)"
    console, buffer = _console()
    display = RichDisplay(progress, console=console)
    display.start()
    progress_row = next(line for line in _plain(buffer).splitlines() if "pitch_l1" in line)
    assert "waiting for quota (30s)" in progress_row and "12s ago" in progress_row and "2 (2, 1)" in progress_row
    StopControl(progress=progress).request("budget cap $5.00 reached", "budget_exhausted")
    clock.now += RICH_MIN_INTERVAL_S
    display.refresh()  # the next refresh already shows it
    display.stop()
    text = _plain(buffer)
    assert "stopping: budget cap $5.00 reached" in text and "run run-7 stopping" in text
    assert stream_state(pitch, progress) == "stopping"


def test_a_stream_whose_calls_are_held_says_by_what_the_breaker_first() -> None:
    clock = Clock()
    progress = make_progress(clock)
    pitch = next(s for s in progress.streams.values() if s.scenario == "pitch_l1")
    pitch.call_held(1, "waiting for quota")  # a bucket refills: no 429 yet, so no countdown
    assert stream_state(pitch, progress) == "waiting for quota"
    pitch.call_held(2, "breaker open")  # another call waits on the paused endpoint: no quota will help it
    assert stream_state(pitch, progress) == "breaker open"
    pitch.call_held(2, None)
    pitch.call_held(1, None)
    assert stream_state(pitch, progress) == "serving"


def test_last_done_shows_only_once_a_stream_has_finished_an_episode_and_a_finished_stream_all_its_windows() -> None:
    clock = Clock()
    progress = make_progress(clock)
    fresh = _stream("tabular", "banking_l1", (0, 4), 4, 4, 1, "serving")
    fresh.turn_started("u1")
    ended = _stream("oracle", "pitch_l2", (0, 0), 4, 6, 0, "done")  # no serving: its loop never named a window
    progress.streams = {s.stream_id: s for s in (fresh, ended)}

    def row(scenario: str) -> list[str]:
        console, buffer = _console()
        console.print(RichDisplay(progress, console=console).render())
        return next(line for line in _plain(buffer).splitlines() if scenario in line).split()
    assert row("banking_l1")[4:6] == ["1/4", "0/8"] and row("banking_l1")[-3:] == ["-", "1", "(1)"]
    clock.now += 5
    fresh.episode_ended("u0", clock.now)
    clock.now += 7
    assert row("banking_l1")[-4:] == ["7s", "ago", "1", "(1)"]
    assert row("pitch_l2")[3:5] == ["done", "6/6"]
