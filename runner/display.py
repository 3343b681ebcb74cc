"""The live display behind one small interface: a rich dashboard, plain log lines, or nothing.

The engine calls `refresh()` whenever it likes (after an episode, from a ticker); each display throttles
itself, so the hot path never pays for rendering. Displays only read `RunProgress`. This is the one
module of the runner that imports rich, so the rest of the runner stays testable without a terminal.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable, Sequence
from typing import Protocol, TextIO

from rich.console import Console, Group, RenderableType
from rich.live import Live
from rich.table import Table
from rich.text import Text

from runner.progress import CacheCounter, RunProgress, StreamProgress
from runner.providers.waits import BREAKER_OPEN, QUOTA
from simulators.errors import ShiftbenchInputError

__all__ = [
    "DISPLAY_KINDS",
    "Display",
    "NullDisplay",
    "PlainDisplay",
    "RichDisplay",
    "make_display",
    "running_scores",
    "status_line",
    "stream_scores",
    "stream_state",
]

DISPLAY_KINDS = ("auto", "rich", "plain", "none")
RICH_MIN_INTERVAL_S = 0.25
"""At most 4 redraws a second: more costs CPU on the event loop and nobody reads faster."""


class Display(Protocol):
    def start(self) -> None: ...

    def refresh(self) -> None: ...

    def stop(self) -> None: ...

    def message(self, text: str) -> None: ...


def make_display(kind: str, progress: RunProgress) -> Display:
    """`auto` draws the dashboard on a terminal and writes log lines when output goes to a file."""
    if kind == "auto":
        kind = "rich" if sys.stdout.isatty() else "plain"
    if kind == "rich":
        return RichDisplay(progress)
    if kind == "plain":
        return PlainDisplay(progress)
    if kind == "none":
        return NullDisplay()
    raise ShiftbenchInputError(f"unknown display '{kind}'; choose one of {', '.join(DISPLAY_KINDS)}")


# ---------------------------------------------------------------- figures both displays show

def stream_scores(stream: StreamProgress) -> tuple[float | None, float | None]:
    """Running hidden and fully specified scores (mean reward x 100) of one stream's finished test tasks."""
    return _mean_score(stream.hidden_rewards), _mean_score(stream.specified_rewards)


def running_scores(progress: RunProgress) -> tuple[float | None, float | None]:
    """Run-wide running Avg H / Avg F: every stream that has a score counts once, as settings do."""
    scores = [stream_scores(stream) for stream in progress.streams.values()]
    return _mean(h for h, _ in scores), _mean(f for _, f in scores)


def status_line(progress: RunProgress) -> str:
    """One log line: everything a user watching a file needs to know the run is alive and on budget."""
    avg_h, avg_f = running_scores(progress)
    done, total = progress.done, progress.total
    percent = 100 * done / total if total else 0.0
    parts = [
        f"[{_duration(progress.clock() - progress.started)}] {progress.status} {done}/{total} units ({percent:.0f}%)",
        *([f"stopping: {progress.stop_reason}"] if progress.stop_reason else []),
        f"H {_score(avg_h)} F {_score(avg_f)}",
        f"tokens {_count(progress.input_tokens)} in {_count(progress.output_tokens)} out",
        _spend(progress),
        f"cache {_cache(progress.cache)}",
        f"calls {progress.calls_in_flight}/{progress.call_limit}",
        f"retries {progress.retries} 429s {progress.rate_limited}",
        f"ETA {_eta(progress)}",
        *progress.paused_endpoints(),
    ]
    return " | ".join(parts)


def _mean_score(rewards: Sequence[float]) -> float | None:
    return 100 * sum(rewards) / len(rewards) if rewards else None


def _mean(values: Iterable[float | None]) -> float | None:
    present = [value for value in values if value is not None]
    return sum(present) / len(present) if present else None


def _score(value: float | None) -> str:
    return "-" if value is None else f"{value:.1f}"


def _count(n: int) -> str:
    for size, suffix in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
        if n >= size:
            return f"{n / size:.1f}{suffix}"
    return str(n)


def _duration(seconds: float) -> str:
    seconds = max(0, int(seconds))
    hours, rest = divmod(seconds, 3600)
    minutes, secs = divmod(rest, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}"


def _eta(progress: RunProgress) -> str:
    eta = progress.eta_seconds()
    return "-" if eta is None else _duration(eta)


def _cache(cache: CacheCounter) -> str:
    """Hit rate and spend saved; '-' before any priced call."""
    if cache.hit_rate is None:
        return "-"
    return f"{100 * cache.hit_rate:.0f}% hit, ${cache.saved_usd:.2f} saved"


def _spend(progress: RunProgress) -> str:
    text = f"${progress.spent_usd:.2f} spent, ${progress.reserved_usd:.2f} reserved"
    if progress.budget_usd is not None:
        text += f", cap ${progress.budget_usd:.2f}"
    return text


def stream_state(stream: StreamProgress, progress: RunProgress) -> str:
    """What a stream is doing, in the words that tell stuck from slow."""
    if stream.phase in ("done", "stopped"):
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


def _in_flight(stream: StreamProgress) -> str:
    """How many episodes are in flight and the turn each is on (a few, highest first)."""
    if not stream.in_flight:
        return "-"
    turns = sorted(stream.in_flight.values(), reverse=True)
    shown = ", ".join(str(t) for t in turns[:4]) + (", ..." if len(turns) > 4 else "")
    return f"{len(turns)} ({shown})"


# ---------------------------------------------------------------- displays

class NullDisplay:
    def start(self) -> None:
        pass

    def refresh(self) -> None:
        pass

    def stop(self) -> None:
        pass

    def message(self, text: str) -> None:
        pass


class PlainDisplay:
    """One status line per period, for logs and pipes where a redrawn dashboard would be garbage."""

    def __init__(self, progress: RunProgress, stream: TextIO | None = None, every_s: float = 10.0) -> None:
        self.progress = progress
        # Resolved at call time so a redirected sys.stderr (pytest, a wrapper) is honoured.
        self.stream = stream if stream is not None else sys.stderr
        self.every_s = every_s
        self._last = float("-inf")

    def start(self) -> None:
        self.message(f"run {self.progress.run_id}: journal {self.progress.journal_path}")
        self._print_status()

    def refresh(self) -> None:
        if self.progress.clock() - self._last >= self.every_s:
            self._print_status()

    def stop(self) -> None:
        self._print_status()

    def message(self, text: str) -> None:
        print(text, file=self.stream, flush=True)

    def _print_status(self) -> None:
        self._last = self.progress.clock()
        self.message(status_line(self.progress))


class RichDisplay:
    """A Live dashboard redrawn on `refresh()`, never from a thread: progress is only read on the loop."""

    def __init__(self, progress: RunProgress, console: Console | None = None, max_rows: int | None = None) -> None:
        self.progress = progress
        self.console = console if console is not None else Console()
        self.max_rows = max_rows
        # auto_refresh off: rich's refresh thread would read progress while the event loop mutates it.
        self._live = Live(console=self.console, auto_refresh=False, transient=False)
        self._last = float("-inf")

    def start(self) -> None:
        self._live.update(self.render())
        self._live.start(refresh=True)
        self._last = self.progress.clock()

    def refresh(self) -> None:
        now = self.progress.clock()
        if now - self._last < RICH_MIN_INTERVAL_S:
            return
        self._last = now
        self._live.update(self.render(), refresh=True)

    def stop(self) -> None:
        self._live.update(self.render())
        self._live.stop()

    def message(self, text: str) -> None:
        # Printed above the live area; no markup, so brackets in error messages stay as they are.
        self.console.print(text, markup=False, highlight=False)

    def render(self) -> RenderableType:
        return Group(self._stream_table(), *self._footer())

    def _stream_table(self) -> Table:
        table = Table(expand=False, box=None, header_style="bold", pad_edge=False)
        # The window is the dataset's own id (0- or 1-based, as the data says), as in the report.
        right = {"window", "done", "Avg H", "Avg F", "spend", "cache", "ep/min", "last done"}
        for name in ("model", "method", "scenario", "state", "window", "done", "Avg H", "Avg F", "spend",
                     "cache", "ep/min", "last done", "in flight (turns)"):
            table.add_column(name, justify="right" if name in right else "left")
        shown, hidden = self._visible_streams()
        now, started = self.progress.clock(), self.progress.started
        for stream in shown:
            avg_h, avg_f = stream_scores(stream)
            rate = stream.episodes_per_minute(now, started)
            ended = stream.phase in ("done", "stopped")
            quiet = "-" if ended else f"{stream.since_progress(now, started):.0f}s ago"
            table.add_row(stream.model, stream.method, stream.scenario, stream_state(stream, self.progress),
                          f"{stream.window}/{stream.windows}", f"{stream.done}/{stream.total}",
                          _score(avg_h), _score(avg_f), f"${stream.spent_usd:.2f}", _cache(stream.cache),
                          "-" if rate is None else f"{rate:.1f}",
                          quiet, _in_flight(stream))
        if hidden:
            finished = sum(stream.phase == "done" for stream in hidden)
            table.caption = f"+{len(hidden)} more streams ({finished} done)"
        return table

    def _visible_streams(self) -> tuple[list[StreamProgress], list[StreamProgress]]:
        """Unfinished streams first, cut to what fits so the dashboard never scrolls off screen."""
        streams = sorted(self.progress.streams.values(), key=lambda stream: stream.phase == "done")
        limit = self.max_rows if self.max_rows is not None else max(5, self.console.height - 8)
        return streams[:limit], streams[limit:]

    def _footer(self) -> list[Text]:
        progress = self.progress
        avg_h, avg_f = running_scores(progress)
        done, total = progress.done, progress.total
        stop = [Text(f"stopping: {progress.stop_reason}", style="bold red")] if progress.stop_reason else []
        paused = [Text(line, style="bold yellow") for line in progress.paused_endpoints()]
        pools = [Text(line) for line in progress.pool_lines()]
        return [
            *stop,
            Text(f"run {progress.run_id} {progress.status}  {done}/{total} units  "
                 f"Avg H {_score(avg_h)}  Avg F {_score(avg_f)}  "
                 f"elapsed {_duration(progress.clock() - progress.started)}  ETA {_eta(progress)}"),
            Text(f"tokens {_count(progress.input_tokens)} in {_count(progress.output_tokens)} out  "
                 f"{_spend(progress)}  cache {_cache(progress.cache)}"
                 + (f", {_count(progress.cache.cache_write_tokens)} written" if progress.cache.input_tokens else "")),
            Text(f"calls {progress.calls_in_flight}/{progress.call_limit} in flight  "
                 f"oldest {progress.oldest_call_age():.0f}s  retries {progress.retries}  "
                 f"429s {progress.rate_limited}  requeued {progress.episodes_requeued}"),
            *pools,
            *paused,
        ]
