"""The figures the live displays show, as text: scores, counts, durations, spend, cache, a stream's state.

Pure functions of `RunProgress` and `StreamProgress`, shared by the plain status line and the rich
dashboard (`runner.display.live`, laid out by `runner.display.layout`), so both say the same thing in the
same words.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from runner.common.money import usd
from runner.display.eta import eta_seconds
from runner.display.progress import CacheCounter, RunProgress, StreamProgress
from runner.providers.waits import BREAKER_OPEN, QUOTA

__all__ = [
    "cache_text",
    "count_text",
    "duration_text",
    "eta_text",
    "in_flight_text",
    "last_done_text",
    "running_scores",
    "score_text",
    "spend_text",
    "stream_scores",
    "stream_state",
    "window_text",
]

ENDED = ("done", "stopped", "method_error")


def stream_scores(stream: StreamProgress) -> tuple[float | None, float | None]:
    """Running hidden and fully specified scores (mean reward x 100) of one stream's finished test tasks."""
    return _mean_score(stream.hidden_rewards), _mean_score(stream.specified_rewards)


def running_scores(progress: RunProgress) -> tuple[float | None, float | None]:
    """Run-wide running Avg H / Avg F: every stream that has a score counts once, as settings do."""
    scores = [stream_scores(stream) for stream in progress.streams.values()]
    return _mean(h for h, _ in scores), _mean(f for _, f in scores)


def _mean_score(rewards: Sequence[float]) -> float | None:
    return 100 * sum(rewards) / len(rewards) if rewards else None


def _mean(values: Iterable[float | None]) -> float | None:
    present = [value for value in values if value is not None]
    return sum(present) / len(present) if present else None


def score_text(value: float | None) -> str:
    return "-" if value is None else f"{value:.1f}"


def count_text(n: int) -> str:
    for size, suffix in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
        if n >= size:
            return f"{n / size:.1f}{suffix}"
    return str(n)


def duration_text(seconds: float) -> str:
    seconds = max(0, int(seconds))
    hours, rest = divmod(seconds, 3600)
    minutes, secs = divmod(rest, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}"


def eta_text(progress: RunProgress) -> str:
    eta = eta_seconds(progress)
    return "-" if eta is None else duration_text(eta)


def cache_text(cache: CacheCounter) -> str:
    """Hit rate and spend saved; '-' before any priced call."""
    if cache.hit_rate is None:
        return "-"
    return f"{100 * cache.hit_rate:.0f}% hit, ${cache.saved_usd:.2f} saved"


def spend_text(progress: RunProgress) -> str:
    if progress.budget_usd is None:
        return f"${progress.spent_usd:.2f} spent, ${progress.reserved_usd:.2f} reserved"
    # Beside a cap, each figure with the digits it needs: a $0.006 cap is not "$0.01" beside "$0.01 spent".
    waiting = f", {progress.budget_waiting} calls waiting for room" if progress.budget_waiting else ""
    return (f"{usd(progress.spent_usd)} spent, {usd(progress.reserved_usd)} reserved, cap {usd(progress.budget_usd)}"
            + waiting)


def stream_state(stream: StreamProgress, progress: RunProgress) -> str:
    """What a stream is doing, in the words that tell stuck from slow."""
    if stream.phase in ENDED:
        return stream.phase
    if progress.stop_reason:
        return "stopping"
    held = set(stream.held.values())
    if BREAKER_OPEN in held:
        return BREAKER_OPEN  # the endpoint is down for now: no quota will help
    wait = stream.quota_until - progress.clock()
    if wait > 0:
        return f"{QUOTA} ({wait:.0f}s)"
    if QUOTA in held:
        return QUOTA
    return stream.phase


def window_text(stream: StreamProgress) -> str:
    """'n/N': the stream is in the n-th of its N windows; a finished stream has been through all N.

    An ordinal, not the dataset's window id (0- or 1-based as the data says), so a finished stream
    reads N/N whatever the ids are."""
    number = stream.windows if stream.phase == "done" else stream.window_number
    return f"{number}/{stream.windows}" if number else f"-/{stream.windows}"


def last_done_text(stream: StreamProgress, now: float) -> str:
    """How long ago the stream last finished an episode here; '-' before its first, and once it ended."""
    if stream.phase in ENDED or stream.last_finished is None:
        return "-"
    return f"{now - stream.last_finished:.0f}s ago"


def in_flight_text(stream: StreamProgress) -> str:
    """How many episodes are in flight and the turn each is on (a few, highest first)."""
    if not stream.in_flight:
        return "-"
    turns = sorted(stream.in_flight.values(), reverse=True)
    shown = ", ".join(str(t) for t in turns[:4]) + (", ..." if len(turns) > 4 else "")
    return f"{len(turns)} ({shown})"
