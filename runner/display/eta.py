"""The run's ETA: what is left, at the pace the run goes now.

Two bounds; the ETA is the later of them.
- Serving: serving runs strictly in order within a stream and the streams run at once, so the run cannot
  end before its slowest stream has run its remaining serving episodes, each at that stream's recent
  per-episode time (over its latest `SERVING_SAMPLE` episodes: a slow start, a resume or a change of
  pace has left the estimate once that many episodes have run at the new pace), and then its last
  window's test set, which starts only once all its serving is done.
- Work: every remaining episode's agent turns at the run's recent call rate (turns started per second
  over the latest `CALL_WINDOW_S`). Test episodes are timed by calls, not by how often they finish: a
  test set fans out 64 episodes that share the endpoint's (or the CPU's) capacity, so they finish in
  bursts long after their calls started, and a count of finished episodes reads 0 and then thousands.
  Turns per episode are this process's measured means (per stream and phase, else its other phase,
  else its scenario's streams, else any stream's).
bench/eta_error.py measures them against the real end of six runs (bench/README.md has the figures).

Only this process is timed: what a resumed run journaled before has no timing that applies. Before a
stream has two serving episodes finished here it goes as the timed streams of its scenario (else of
any scenario); before any stream has, the ETA is unknown (None), never a guess.
"""

from __future__ import annotations

from dataclasses import dataclass

from runner.display.progress import RunProgress, StreamProgress

__all__ = ["CALL_WINDOW_S", "EtaParts", "calls_per_second", "eta_parts", "eta_seconds", "seconds_per_serving_episode",
           "turns_per_episode"]

NOT_RUNNING = ("done", "stopped", "method_error")
"""Phases in which a stream has nothing more to run in this process."""
CALL_WINDOW_S = 60.0
"""The run's call rate is measured over about this long (the latest mark at least this old and now)."""


@dataclass(frozen=True)
class EtaParts:
    """The two bounds behind the ETA, in seconds from now; None where a pace is not measured yet."""

    serving_s: float | None
    """The slowest stream's remaining serving and then its last test set (0 once every serving is done)."""
    work_s: float | None
    """Every remaining episode's turns at the run's recent call rate."""

    @property
    def eta_s(self) -> float | None:
        if self.serving_s is None:
            return None  # a stream's serving pace is unknown: no bound can stand for it
        if self.work_s is None:
            # The call rate or the turns per episode are not measured yet: the serving bound is what is
            # known, unless it is 0 (no serving left), which would claim the tests take no time.
            return self.serving_s if self.serving_s > 0 else None
        return max(self.serving_s, self.work_s)


def eta_seconds(progress: RunProgress) -> float | None:
    """Seconds until the run ends at the pace it goes now; 0 when nothing is left; None before it is known."""
    return eta_parts(progress).eta_s


def eta_parts(progress: RunProgress) -> EtaParts:
    rate = calls_per_second(progress)  # marks the call count even when nothing is left to estimate
    if not progress.streams:
        return EtaParts(None, None)  # nothing planned yet
    now = progress.clock()
    running = [s for s in progress.streams.values() if s.phase not in NOT_RUNNING]
    if all(s.serving_done >= s.serving_total and s.test_done >= s.test_total for s in running):
        return EtaParts(0.0, 0.0)
    calls_left = _calls_left(running)
    paces = {s.stream_id: seconds_per_serving_episode(s) for s in running}
    serving_s = 0.0
    for stream in running:
        left = stream.serving_total - stream.serving_done
        if left <= 0:
            continue
        pace = paces[stream.stream_id]
        if pace is None:
            pace = _borrowed(stream, running, paces)
        if pace is None:
            return EtaParts(None, None)  # no stream timed yet: its serving could take any time
        last_set = _last_test_set_calls(stream, running)
        tail = 0.0 if rate is None or last_set is None else last_set / rate
        serving_s = max(serving_s, _serving_left_s(stream, left, pace, now) + tail)
    work_s = None if rate is None or calls_left is None else calls_left / rate
    return EtaParts(serving_s, work_s)


def calls_per_second(progress: RunProgress) -> float | None:
    """The run's recent call rate: turns answered in this process since the latest mark at least
    CALL_WINDOW_S old (or since the process started), over that time. Marks the count now."""
    # A turn is counted once answered: each episode in flight waits on at most one call (its turns run in
    # order), and a fanned-out test set starts 64 calls at once that the endpoint then serves a few at a time.
    now = progress.clock()
    turns = sum(s.turns_started - len(s.in_flight) for s in progress.streams.values())
    marks = progress.call_marks
    if not marks or marks[-1][0] < now:
        marks.append((now, turns))
    while len(marks) > 1 and marks[1][0] <= now - CALL_WINDOW_S:
        marks.popleft()
    since, then = marks[0] if marks[0][0] <= now - CALL_WINDOW_S else (progress.started, 0)
    if now <= since or turns <= then:
        return None
    return (turns - then) / (now - since)


def seconds_per_serving_episode(stream: StreamProgress) -> float | None:
    """The stream's recent time per serving episode in this process, between its latest finishes
    (`StreamProgress.serving_finished_at`); None before two finished at different times (the time
    before the first holds whatever the process did before: the method's restore, a test fan-out)."""
    times = stream.serving_finished_at
    if len(times) < 2 or times[-1] <= times[0]:
        return None
    first = times[0]
    return (times[-1] - first) / sum(1 for t in times if t > first)


def turns_per_episode(stream: StreamProgress, phase: str, streams: list[StreamProgress]) -> float | None:
    """Mean turns of a finished `phase` ("serving" | "test") episode of `stream` in this process; else of
    its other phase, else of its scenario's streams, else of any stream; None before any finished."""
    def mean(of: list[StreamProgress], kind: str) -> float | None:
        count = sum(s.serving_timed if kind == "serving" else s.test_timed for s in of)
        turns = sum(s.serving_turns if kind == "serving" else s.test_turns for s in of)
        return turns / count if count else None

    other = "test" if phase == "serving" else "serving"
    alike = [s for s in streams if s.scenario == stream.scenario]
    for of, kind in (([stream], phase), ([stream], other), (alike, phase), (alike, other), (streams, phase),
                     (streams, other)):
        if (found := mean(of, kind)) is not None:
            return found
    return None


def _calls_left(running: list[StreamProgress]) -> float | None:
    """The remaining episodes' turns, less those their episodes in flight have had answered."""
    total = 0.0
    for stream in running:
        serving, tests = stream.serving_total - stream.serving_done, stream.test_total - stream.test_done
        parts = [(n, turns_per_episode(stream, phase, running)) for n, phase in ((serving, "serving"),
                                                                                 (tests, "test")) if n > 0]
        if any(per is None for _, per in parts):
            return None
        answered = sum(stream.in_flight.values()) - len(stream.in_flight)  # each one's current call is to come
        total += max(0.0, sum(n * (per or 0.0) for n, per in parts) - answered)
    return total


def _serving_left_s(stream: StreamProgress, left: int, pace: float, now: float) -> float:
    """`left` episodes at `pace`, less what the episode under way has already run (at most one pace:
    an episode slower than the pace is not counted as done early)."""
    under_way = 0.0 if not stream.serving_finished_at else min(now - stream.serving_finished_at[-1], pace)
    return max(0.0, left * pace - under_way)


def _last_test_set_calls(stream: StreamProgress, running: list[StreamProgress]) -> float | None:
    """The turns of the stream's last window's test set, which starts only after all its serving. The
    built-in windows hold equal test sets (within one task), so the last is the stream's share per window."""
    if stream.windows <= 0 or stream.test_total <= 0:
        return 0.0
    per = turns_per_episode(stream, "test", running)
    return None if per is None else round(stream.test_total / stream.windows) * per


def _borrowed(stream: StreamProgress, running: list[StreamProgress],
              paces: dict[str, float | None]) -> float | None:
    """A stream not timed yet goes as the timed streams of its scenario (the same tasks), else of any."""
    for alike in (lambda s: s.scenario == stream.scenario, lambda s: True):
        known = [pace for s in running if alike(s) and (pace := paces[s.stream_id]) is not None]
        if known:
            return sum(known) / len(known)
    return None
