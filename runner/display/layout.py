"""What the dashboard shows on a terminal of a given size: which columns, how many stream rows, and the
footer's lines. Pure text, no rich: `runner.display.live` draws what this decides.

The footer (progress, Avg H / F, ETA, spend and cap, calls in flight) is what a user watching a run
needs most, so it is laid out first and always fits: its parts are packed into lines of the terminal's
width, never cut. The stream table gets the height left over (the streams that do not fit are counted
in its caption) and the width: columns give way in reverse order of importance (the stream's name,
progress and state stay; cache, rate and model go first), and a column is either shown whole or not
at all, so no cell is ever squeezed into an ellipsis.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from runner.display.figures import (
    cache_text,
    count_text,
    duration_text,
    eta_text,
    in_flight_text,
    last_done_text,
    running_scores,
    score_text,
    spend_text,
    stream_scores,
    stream_state,
    window_text,
)
from runner.display.progress import RunProgress, StreamProgress

__all__ = ["COLUMNS", "COLUMN_GAP", "Column", "Footer", "TableLayout", "fit_columns", "footer_lines", "lay_out",
           "pack_line"]

COLUMN_GAP = 2
"""Spaces between two columns (the table's padding)."""
CHROME_ROWS = 3
"""Lines the table takes besides its stream rows: its header, its caption, and one kept free so the
live area never fills the terminal to its last line (which would scroll it)."""
MIN_STREAM_ROWS = 1


@dataclass(frozen=True)
class Column:
    name: str
    importance: int
    """1 is kept longest; a larger number gives way first when the terminal is narrow."""
    cell: Callable[[StreamProgress, RunProgress], str]
    right: bool = False


def _scores(index: int) -> Callable[[StreamProgress, RunProgress], str]:
    return lambda stream, _: score_text(stream_scores(stream)[index])


def _rate(stream: StreamProgress, progress: RunProgress) -> str:
    rate = stream.episodes_per_minute(progress.clock(), progress.started)
    return "-" if rate is None else f"{rate:.1f}"


COLUMNS: tuple[Column, ...] = (
    Column("model", 9, lambda s, _: s.model),
    Column("method", 1, lambda s, _: s.method),
    Column("scenario", 2, lambda s, _: s.scenario_label),
    Column("state", 4, stream_state),
    Column("window", 5, lambda s, _: window_text(s), right=True),
    Column("done", 3, lambda s, _: f"{s.done}/{s.total}", right=True),
    Column("Avg H", 6, _scores(0), right=True),
    Column("Avg F", 7, _scores(1), right=True),
    Column("spend", 8, lambda s, _: f"${s.spent_usd:.2f}", right=True),
    Column("cache", 13, lambda s, _: cache_text(s.cache), right=True),
    Column("ep/min", 12, _rate, right=True),
    Column("last done", 10, lambda s, p: last_done_text(s, p.clock()), right=True),
    Column("in flight (turns)", 11, lambda s, _: in_flight_text(s)),
)
"""In the order they are drawn; `importance` decides which stay on a narrow terminal."""


def fit_columns(columns: Sequence[Column], cells: Sequence[Sequence[str]], width: int) -> list[int]:
    """The indexes of the columns to draw: the most important first, each added while the table (every
    cell whole, COLUMN_GAP between columns) still fits in `width`; at least the most important one. The
    first that does not fit ends it, so a column is never shown while a more important one is not."""
    widths = [max([len(column.name), *(len(row[i]) for row in cells)]) for i, column in enumerate(columns)]
    chosen: list[int] = []
    used = 0
    for index in sorted(range(len(columns)), key=lambda i: columns[i].importance):
        needed = widths[index] + (COLUMN_GAP if chosen else 0)
        if chosen and used + needed > width:
            break
        chosen.append(index)
        used += needed
    return sorted(chosen)


def pack_line(parts: Sequence[str], width: int, gap: str = "  ") -> list[str]:
    """The parts joined by `gap`, broken into lines of at most `width` between parts (a part longer
    than the width gets a line of its own, which the terminal wraps)."""
    lines: list[str] = []
    for part in parts:
        if lines and len(lines[-1]) + len(gap) + len(part) <= width:
            lines[-1] += gap + part
        else:
            lines.append(part)
    return lines


@dataclass(frozen=True)
class Footer:
    line: str
    style: str = ""


def footer_lines(progress: RunProgress, width: int) -> list[Footer]:
    """The run's figures, packed into the width: a stop's reason first, then progress and ETA, spend,
    calls, then each endpoint pool, the batches of `--batch tests`, and each paused endpoint."""
    avg_h, avg_f = running_scores(progress)
    cache = f"cache {cache_text(progress.cache)}" + (
        f", {count_text(progress.cache.cache_write_tokens)} written" if progress.cache.input_tokens else "")
    groups = [
        [f"run {progress.run_id} {progress.status}", f"{progress.done}/{progress.total} units",
         f"Avg H {score_text(avg_h)}", f"Avg F {score_text(avg_f)}",
         f"elapsed {duration_text(progress.clock() - progress.started)}", f"ETA {eta_text(progress)}"],
        [f"tokens {count_text(progress.input_tokens)} in {count_text(progress.output_tokens)} out",
         spend_text(progress), cache],
        [f"calls {progress.calls_in_flight}/{progress.call_limit} in flight",
         f"oldest {progress.oldest_call_age():.0f}s", f"retries {progress.retries}", f"429s {progress.rate_limited}",
         f"requeued {progress.episodes_requeued}"],
    ]
    lines = [Footer(f"stopping: {progress.stop_reason}", "bold red")] if progress.stop_reason else []
    for group in groups:
        lines += [Footer(line) for line in pack_line(group, width)]
    lines += [Footer(line) for line in progress.pool_lines()]
    lines += [Footer(line) for batcher in progress.batchers for line in pack_line(
        batcher.dashboard_line().split("; "), width)]
    lines += [Footer(line, "bold yellow") for line in progress.paused_endpoints()]
    return lines


def _height(line: str, width: int) -> int:
    """Terminal lines one line of text takes once wrapped."""
    return max(1, -(-len(line) // max(1, width)))


@dataclass(frozen=True)
class TableLayout:
    columns: list[Column]
    rows: list[list[str]]
    hidden: list[StreamProgress]
    """Streams left out for want of height (unfinished streams are shown first)."""


def lay_out(progress: RunProgress, width: int, height: int, footer: Sequence[Footer],
            max_rows: int | None = None) -> TableLayout:
    """The stream table for a `width` x `height` terminal below which `footer` is drawn."""
    streams = sorted(progress.streams.values(), key=lambda stream: stream.phase == "done")
    room = height - sum(_height(line.line, width) for line in footer) - CHROME_ROWS
    limit = max(MIN_STREAM_ROWS, room) if max_rows is None else max_rows
    shown, hidden = streams[:limit], streams[limit:]
    cells = [[column.cell(stream, progress) for column in COLUMNS] for stream in shown]
    kept = fit_columns(COLUMNS, cells, width)
    return TableLayout([COLUMNS[i] for i in kept], [[row[i] for i in kept] for row in cells], hidden)
