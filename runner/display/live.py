"""The live display behind one small interface: a rich dashboard, plain log lines, or nothing.

The engine calls `refresh()` whenever it likes (after an episode, from a ticker); each display throttles
itself, so the hot path never pays for rendering. Displays only read `RunProgress`. This is the one
module of the runner that imports rich, so the rest of the runner stays testable without a terminal;
what the dashboard shows at a terminal's size is decided in `runner.display.layout`, the figures'
words in `runner.display.figures`.
"""

from __future__ import annotations

import sys
from typing import Protocol, TextIO

from rich.console import Console, Group, RenderableType
from rich.live import Live
from rich.table import Table
from rich.text import Text

from runner.common.tables import join_fitted, terminal_width, wrap_prose
from runner.display.figures import (
    cache_text,
    count_text,
    duration_text,
    eta_text,
    running_scores,
    score_text,
    spend_text,
    stream_scores,
    stream_state,
)
from runner.display.layout import COLUMN_GAP, TableLayout, footer_lines, lay_out
from runner.display.progress import RunProgress
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


# ---------------------------------------------------------------- the plain display's line

def status_line(progress: RunProgress, width: int | None = None) -> str:
    """One log line: everything a user watching a file needs to know the run is alive and on budget;
    at a terminal's `width`, as many lines as it takes, each break between two figures."""
    avg_h, avg_f = running_scores(progress)
    done, total = progress.done, progress.total
    percent = 100 * done / total if total else 0.0
    parts = [
        f"[{duration_text(progress.clock() - progress.started)}] {progress.status} {done}/{total} units "
        f"({percent:.0f}%)",
        *([f"stopping: {progress.stop_reason}"] if progress.stop_reason else []),
        f"H {score_text(avg_h)} F {score_text(avg_f)}",
        f"tokens {count_text(progress.input_tokens)} in {count_text(progress.output_tokens)} out",
        spend_text(progress),
        f"cache {cache_text(progress.cache)}",
        f"calls {progress.calls_in_flight}/{progress.call_limit}",
        f"retries {progress.retries} 429s {progress.rate_limited}",
        f"ETA {eta_text(progress)}",
        *(batcher.dashboard_line() for batcher in progress.batchers),
        *progress.paused_endpoints(),
    ]
    return join_fitted(parts, " | ", width)


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
        # The width is read per line: a pipe (no COLUMNS) keeps one line per status, for grep.
        print(wrap_prose(text, terminal_width()), file=self.stream, flush=True)

    def _print_status(self) -> None:
        self._last = self.progress.clock()
        print(status_line(self.progress, terminal_width()), file=self.stream, flush=True)


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
        if not self.console.is_terminal:
            # rich ends the last frame with a newline only on a terminal: in a pipe or a file the next
            # line (the run's summary) would be glued to the dashboard's last line.
            self.console.line()

    def message(self, text: str) -> None:
        # Printed above the live area; no markup, so brackets in error messages stay as they are.
        self.console.print(text, markup=False, highlight=False)

    def render(self) -> RenderableType:
        """The footer first (it always fits), then the stream table in the room left (runner.display.layout)."""
        width, height = self.console.size
        footer = footer_lines(self.progress, width)
        layout = lay_out(self.progress, width, height, footer, self.max_rows)
        return Group(_table(layout), *(Text(line.line, style=line.style) for line in footer))


def _table(layout: TableLayout) -> Table:
    table = Table(expand=False, box=None, header_style="bold", pad_edge=False, padding=(0, COLUMN_GAP // 2))
    for column in layout.columns:
        table.add_column(column.name, justify="right" if column.right else "left", no_wrap=True)
    for row in layout.rows:
        table.add_row(*row)
    if layout.hidden:
        finished = sum(stream.phase == "done" for stream in layout.hidden)
        table.caption = f"+{len(layout.hidden)} more streams ({finished} done)"
    return table
