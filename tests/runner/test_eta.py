"""The ETA (runner.display.eta) on a fake clock: episodes finish at known times on known streams, as the
engine reports them (turns started, the count raised, then the episode's end), and each ETA is checked
against the figure worked out by hand in the test."""

from __future__ import annotations

from runner.display.eta import CALL_WINDOW_S, calls_per_second, eta_parts, eta_seconds
from runner.display.figures import eta_text
from runner.display.progress import SERVING_SAMPLE, RunProgress, StreamProgress


class Clock:
    def __init__(self, now: float = 0.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


def _stream(name: str, serving: int, tests: int = 0, windows: int = 1, scenario: str = "") -> StreamProgress:
    return StreamProgress(stream_id=name, model="m", method="tabular", scenario=scenario or name,
                          serving_total=serving, test_total=tests, windows=windows)


def _run(clock: Clock, *streams: StreamProgress, started: float = 0.0) -> RunProgress:
    progress = RunProgress(run_id="r", journal_path="j", clock=clock, started=started)
    progress.streams = {s.stream_id: s for s in streams}
    return progress


def _serve(stream: StreamProgress, at: float, turns: int = 1) -> None:
    """One serving episode of `turns` calls ends at `at`, in the engine's order of reports."""
    unit = f"{stream.stream_id}|serving|{stream.serving_done}"
    for _ in range(turns):
        stream.turn_started(unit)
    stream.serving_done += 1
    stream.episode_ended(unit, at)


def _test(stream: StreamProgress, at: float, turns: int = 1) -> None:
    unit = f"{stream.stream_id}|test|{stream.test_done}"
    for _ in range(turns):
        stream.turn_started(unit)
    stream.record_test("hidden", 1.0)
    stream.episode_ended(unit, at)


def test_the_slower_stream_bounds_the_eta() -> None:
    clock = Clock()
    fast, slow = _stream("fast", 100), _stream("slow", 100)
    progress = _run(clock, fast, slow)
    for t in range(1, 11):
        _serve(fast, float(t))  # 1 s an episode
    for t in range(2, 11, 2):
        _serve(slow, float(t))  # 2 s an episode
    clock.now = 10.0
    # By hand: fast 90 left x 1 s = 90 s; slow 95 left x 2 s = 190 s (both just finished one: nothing
    # under way). Work: 15 calls answered in 10 s = 1.5/s, 185 calls left -> 123.3 s. ETA 190 s.
    parts = eta_parts(progress)
    assert parts.serving_s == 190.0
    assert abs((parts.work_s or 0) - 185 / 1.5) < 1e-9
    assert eta_text(progress) == "0:03:10"
    # 1.5 s into slow's next episode, the 1.5 s it has run count as done.
    clock.now = 11.5
    assert eta_seconds(progress) == 95 * 2.0 - 1.5


def test_the_eta_follows_a_change_of_pace_within_the_window() -> None:
    clock = Clock()
    stream = _stream("s", 200)
    progress = _run(clock, stream)
    for second in range(1, 31):
        _serve(stream, float(second))  # 30 episodes at 1 s
    slow_ends = [30.0 + 3 * i for i in range(1, SERVING_SAMPLE + 1)]  # then SERVING_SAMPLE at 3 s
    for end in slow_ends:
        _serve(stream, end)
    clock.now = slow_ends[-1]
    left = 200 - 30 - SERVING_SAMPLE
    answered, elapsed = 30 + SERVING_SAMPLE, 30 + 3 * SERVING_SAMPLE
    # By hand: the window holds only slow episodes now: 3 s each (the average since the start would be
    # elapsed / answered s). Work: `answered` calls in `elapsed` s, one a remaining episode.
    parts = eta_parts(progress)
    assert parts.serving_s == left * 3.0
    assert parts.work_s is not None and abs(parts.work_s - left / (answered / elapsed)) < 1e-9
    assert eta_seconds(progress) == left * 3.0


def test_no_eta_before_a_stream_has_a_pace() -> None:
    clock = Clock(5.0)
    stream = _stream("s", 10, tests=4)
    progress = _run(clock, stream)
    assert eta_text(progress) == "-"  # nothing finished
    _serve(stream, 4.0)
    assert eta_text(progress) == "-"  # one finish: the time before it holds the process's start, not a pace
    assert eta_text(_run(clock)) == "-"  # no stream planned yet


def test_an_untimed_stream_goes_as_its_scenarios_timed_streams() -> None:
    clock = Clock()
    timed, untimed = _stream("timed", 10, scenario="retail"), _stream("untimed", 10, scenario="retail")
    progress = _run(clock, timed, untimed)
    _serve(timed, 2.0, turns=2)
    _serve(timed, 6.0, turns=2)
    clock.now = 6.0
    # By hand: timed 8 left x 4 s = 32 s; untimed borrows 4 s: 10 x 4 = 40 s (nothing under way).
    # Work: 4 calls in 6 s; 8 x 2 + 10 x 2 calls left (untimed's turns: its scenario's) -> 54 s.
    parts = eta_parts(progress)
    assert parts.serving_s == 40.0
    assert parts.work_s is not None and abs(parts.work_s - 36 / (4 / 6)) < 1e-9
    assert eta_seconds(progress) == parts.work_s


def test_after_a_resume_only_this_process_times_the_run() -> None:
    clock = Clock(9.0)
    stream = _stream("s", 100)
    stream.serving_done = stream.serving_resumed = 40  # journaled by the run before: no timing here
    progress = _run(clock, stream, started=9.0)
    progress.resumed_units = 40
    for t in (10.0, 12.0, 14.0):
        _serve(stream, t)
    clock.now = 14.0
    # By hand: 2 s an episode between this process's finishes; 57 left -> 114 s. Work: 3 calls answered
    # since this process started at 9 s -> 0.6/s, 57 calls left -> 95 s. ETA 114 s.
    parts = eta_parts(progress)
    assert parts.serving_s == 114.0
    assert parts.work_s is not None and abs(parts.work_s - 95.0) < 1e-9
    assert eta_seconds(progress) == 114.0


def test_test_episodes_are_timed_by_their_calls_not_their_bursts() -> None:
    clock = Clock()
    stream = _stream("s", 0, tests=100)
    progress = _run(clock, stream)
    for i in range(20):
        _test(stream, 10.0 + i, turns=3)  # 20 finished, 3 turns each
    for i in range(40):
        stream.turn_started(f"s|test|flight{i}")  # 40 in flight: one answered turn, one waiting
        stream.turn_started(f"s|test|flight{i}")
    clock.now = 50.0
    # By hand: answered calls 60 + 40 = 100 in 50 s = 2/s; left: 80 tests x 3 turns - the 40 answered
    # in flight = 200 calls -> 100 s. (Finished episodes alone, 20 in 50 s, would say 80 / 0.4 = 200 s.)
    assert calls_per_second(progress) == 2.0
    parts = eta_parts(progress)
    assert parts.serving_s == 0.0
    assert parts.work_s == 100.0
    assert eta_text(progress) == "0:01:40"


def test_a_streams_last_test_set_comes_after_its_serving() -> None:
    clock = Clock()
    stream = _stream("s", 10, tests=40, windows=4)
    progress = _run(clock, stream)
    _serve(stream, 1.0, turns=2)
    _serve(stream, 2.0, turns=2)
    _test(stream, 2.0, turns=4)
    clock.now = 2.0
    # By hand: 8 serving left x 1 s = 8 s, then the last window's 40 / 4 = 10 tests x 4 turns at
    # 8 calls / 2 s = 4/s: 10 s -> 18 s. Work: 8 x 2 + 39 x 4 = 172 calls at 4/s = 43 s. ETA 43 s.
    parts = eta_parts(progress)
    assert parts.serving_s == 18.0
    assert parts.work_s == 43.0
    assert eta_seconds(progress) == 43.0


def test_the_call_rate_is_the_latest_window() -> None:
    clock = Clock()
    stream = _stream("s", 0, tests=1000)
    progress = _run(clock, stream)
    rate = None
    for now, answered in ((10.0, 10), (70.0, 70), (100.0, 130)):
        while stream.turns_started < answered:
            stream.turn_started(f"u{stream.turns_started}")
            stream.episode_ended(f"u{stream.turns_started - 1}", now, finished=False)
        clock.now = now
        rate = calls_per_second(progress)
    # By hand, at 100 s: the latest mark at least CALL_WINDOW_S (60 s) old is 10 s's (10 answered):
    # (130 - 10) / (100 - 10).
    assert CALL_WINDOW_S == 60.0
    assert rate == 120 / 90


def test_a_finished_run_has_nothing_left() -> None:
    clock = Clock()
    served, ended = _stream("served", 2, tests=1), _stream("failed", 5, tests=5)
    progress = _run(clock, served, ended)
    _serve(served, 1.0)
    _serve(served, 2.0)
    _test(served, 3.0)
    ended.phase = "method_error"  # stopped by its method: nothing more of it runs
    clock.now = 3.0
    assert eta_seconds(progress) == 0.0
    assert eta_text(progress) == "0:00:00"
