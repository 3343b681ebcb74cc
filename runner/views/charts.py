"""The report's charts as static SVG: per-window learning curves, cost per task against Avg H, and a
comparison's paired differences with their intervals.

Drawn with matplotlib because it writes plain SVG that needs no script, no font download and no
network to show: the HTML report stays one file that opens anywhere, prints, and weighs kilobytes
(a plotly page carries 4.7 MB of JavaScript). Figures are built with `matplotlib.figure.Figure`, never
pyplot, so no global figure state or GUI backend is involved.

Intervals are optional input (`Intervals`): a chart draws a band or an error bar where one is given
and the bare line or point where not, so a report without bootstrap intervals still draws.
"""

from __future__ import annotations

import io
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import matplotlib
from matplotlib.artist import Artist
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.patches import Patch
from matplotlib.ticker import MaxNLocator

from runner.report import StreamReport

__all__ = ["CellKey", "DiffRow", "Intervals", "cost_scatter_svg", "difference_svg", "learning_curve_svg",
           "stream_label"]

HIDDEN, SPECIFIED = "hidden", "fully_specified"
PALETTE = ("#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#17becf", "#8c564b", "#e377c2",
           "#7f7f7f", "#bcbd22")


@dataclass(frozen=True)
class CellKey:
    """One figure of a report: a window's, a setting's (window None) or a stream's average (scenario
    None) score of one category."""

    model: str
    method: str
    scenario: str | None
    category: str
    window: int | None = None


Intervals = Mapping[CellKey, tuple[float, float] | str]
"""A figure's interval (low, high), in the same units as the score (0-100), or why it has none
("no interval (1 family)")."""


def stream_label(stream: StreamReport) -> str:
    return f"{stream.model} / {stream.method}"


def learning_curve_svg(scenario: str, streams: Sequence[StreamReport], intervals: Intervals, salt: str) -> str:
    """H (solid line, filled circles) and F (dashed line, open squares) per window of one scenario, one
    colour per stream. Streams are drawn a little apart along the window axis (DODGE), so lines that
    coincide (every stream's F at 100, say) still show each stream's markers side by side."""
    figure = Figure(figsize=(5.6, 3.7))
    axes = figure.add_subplot()
    drawn = [stream for stream in streams if scenario in stream.settings]
    unbanded = False
    bands: set[str] = set()  # the kinds of band drawn, for the key
    for index, stream in enumerate(drawn):
        setting = stream.settings[scenario]
        colour = PALETTE[index % len(PALETTE)]
        offset = (index - (len(drawn) - 1) / 2) * DODGE
        windows = [w.window for w in setting.windows]
        for category, style, scores in ((HIDDEN, LINE_STYLES[HIDDEN], [w.hidden for w in setting.windows]),
                                        (SPECIFIED, LINE_STYLES[SPECIFIED],
                                         [w.fully_specified for w in setting.windows])):
            points = [(x, y) for x, y in zip(windows, scores, strict=True) if y is not None]
            if not points:
                continue
            xs, ys = [x for x, _ in points], [y for _, y in points]
            axes.plot([x + offset for x in xs], ys, color=colour, linewidth=1.6, clip_on=False, **style)
            unbanded |= _band(axes, stream, scenario, category, xs, offset, intervals, colour, bands)
            _replica_band(axes, stream, scenario, category, offset, colour, bands)
    axes.set_title(f"{scenario}: score per window", fontsize=10)
    axes.set_xlabel("window")
    axes.set_ylabel("score (mean reward x 100)")
    axes.set_ylim(-3, 103)  # a line at 0 or 100 stays off the frame
    axes.margins(x=0.04)
    axes.grid(alpha=0.3)
    axes.xaxis.set_major_locator(MaxNLocator(integer=True))
    _curve_legend(axes, drawn, unbanded, bands)
    return _svg(figure, salt)


DODGE = 0.1
"""Window units between neighbouring streams' points."""
LINE_STYLES: dict[str, dict[str, Any]] = {
    HIDDEN: {"linestyle": "-", "marker": "o", "markersize": 4.5},
    SPECIFIED: {"linestyle": "--", "marker": "s", "markersize": 4.5, "markerfacecolor": "white"},
}
"""How a category is drawn, whatever the stream's colour: the legend's key says the same."""
REPLICAS = "replicas"
BAND_STYLES: dict[str, dict[str, Any]] = {
    HIDDEN: {"alpha": 0.15},
    SPECIFIED: {"alpha": 0.45, "hatch": "////", "facecolor": "none", "linewidth": 0.5},
    REPLICAS: {"alpha": 0.7, "hatch": "xxx", "facecolor": "none", "linewidth": 0.5},
}
"""How each kind of band is drawn in its stream's colour (a tint, a hatch, a cross-hatch), so the H
interval, the F interval and the replicas' range never read as one; the key names each one drawn."""
BAND_KEYS = {HIDDEN: "H band: 95% interval", SPECIFIED: "F band (hatched): 95% interval",
             REPLICAS: "replicas' range (cross-hatched)"}


def _band(axes: Axes, stream: StreamReport, scenario: str, category: str, xs: Sequence[int], offset: float,
          intervals: Intervals, colour: str, bands: set[str]) -> bool:
    """The interval band where the windows have intervals (its kind added to `bands`); True if some
    window has none for want of a second task family."""
    bounds = [intervals.get(CellKey(stream.model, stream.method, scenario, category, x)) for x in xs]
    present = [(x + offset, b) for x, b in zip(xs, bounds, strict=True) if isinstance(b, tuple)]
    if present:
        _fill(axes, [x for x, _ in present], [b[0] for _, b in present], [b[1] for _, b in present], colour,
              category)
        if any(b[1] > b[0] for _, b in present):  # a band of no height is not seen: no key entry
            bands.add(category)
    return any(isinstance(b, str) for b in bounds)


def _fill(axes: Axes, xs: Sequence[float], lows: Sequence[float], highs: Sequence[float], colour: str,
          kind: str) -> None:
    style = {"color": colour, "linewidth": 0, **BAND_STYLES[kind]}
    if "facecolor" in style:  # a hatch: drawn in the edge colour over no fill
        style["edgecolor"] = style.pop("color")
    axes.fill_between(xs, lows, highs, **style)


def _curve_legend(axes: Axes, streams: Sequence[StreamReport], unbanded: bool, bands: set[str]) -> None:
    """Below the chart: which colour is which stream, what a solid and a dashed line mean, and a key
    entry for each kind of band drawn."""
    handles: list[Artist] = [Line2D([], [], color=PALETTE[i % len(PALETTE)], linewidth=3)
                             for i in range(len(streams))]
    labels = [stream_label(stream) for stream in streams]
    handles += [Line2D([], [], color="#333333", **LINE_STYLES[HIDDEN]),
                Line2D([], [], color="#333333", **LINE_STYLES[SPECIFIED])]
    labels += ["H: hidden-dependent tasks", "F: fully specified tasks"]
    for kind in (HIDDEN, SPECIFIED, REPLICAS):
        if kind in bands:
            style = {"color": "#555555", **BAND_STYLES[kind]}
            if "facecolor" in style:
                style["edgecolor"] = style.pop("color")
            handles.append(Patch(**style))
            labels.append(BAND_KEYS[kind])
    if unbanded:
        handles.append(Patch(facecolor="none", edgecolor="none"))
        labels.append("band: none where a window has 1 task family")
    axes.legend(handles, labels, fontsize=8, loc="upper center", bbox_to_anchor=(0.5, -0.17), ncol=2,
                frameon=False, handlelength=2.6)


def _replica_band(axes: Axes, stream: StreamReport, scenario: str, category: str, offset: float,
                  colour: str, bands: set[str]) -> None:
    """With replicas: the range of the replicas' own scores per window, darker than the interval."""
    if stream.noise is None:
        return
    spreads = [(w.window, w.hidden if category == HIDDEN else w.fully_specified)
               for w in stream.noise.windows.get(scenario, [])]
    present = [(x, s.min, s.max) for x, s in spreads if s.min is not None and s.max is not None]
    if present:
        _fill(axes, [x + offset for x, _, _ in present], [lo for _, lo, _ in present],
              [hi for _, _, hi in present], colour, REPLICAS)
        if any(hi > lo for _, lo, hi in present):
            bands.add(REPLICAS)


def cost_scatter_svg(streams: Sequence[StreamReport], intervals: Intervals, salt: str) -> str:
    """One point per stream: total cost per finished episode against Avg H, with Avg H's interval."""
    figure = Figure(figsize=(5.6, 3.4))
    axes = figure.add_subplot()
    costs = []
    for index, stream in enumerate(streams):
        if stream.avg_h is None:
            continue
        cost = stream.cost_per_task_usd.total if stream.cost_per_task_usd else 0.0
        colour = PALETTE[index % len(PALETTE)]
        bounds = intervals.get(CellKey(stream.model, stream.method, None, HIDDEN))
        error = [[stream.avg_h - bounds[0]], [bounds[1] - stream.avg_h]] if isinstance(bounds, tuple) else None
        axes.errorbar([cost], [stream.avg_h], yerr=error, fmt="o", color=colour, capsize=3,
                      label=stream_label(stream) + ("" if isinstance(bounds, tuple) or bounds is None
                                                    else f" ({bounds})"), clip_on=False)
        costs.append(cost)
    axes.set_title("cost per task vs Avg H, one point per stream", fontsize=10)
    axes.set_xlabel("total USD per finished episode")
    axes.set_ylabel("Avg H")
    axes.set_ylim(-3, 103)
    # The cost axis starts at 0, so distances read as ratios; points on an edge are drawn whole
    # (clip_on off). An offline run spends nothing: its points sit on the axis, and the chart says why.
    axes.set_xlim(0, 1.1 * max(costs) if costs and max(costs) > 0 else 1.0)
    if costs and max(costs) == 0:
        axes.text(0.5, 0.5, "no spend (offline run)", transform=axes.transAxes, ha="center", color="#999")
    axes.grid(alpha=0.3)
    _legend(axes)
    return _svg(figure, salt)


@dataclass(frozen=True)
class DiffRow:
    """One paired difference A - B in score points, with its interval (None: too few pairs for one)."""

    label: str
    diff: float
    interval: tuple[float, float] | None


def difference_svg(rows: Sequence[DiffRow], title: str, salt: str) -> str:
    """One row per figure, top to bottom: the difference as a point, its interval as a bar, and the line
    of no difference, so a bar that crosses it reads at a glance as "not shown either way"."""
    figure = Figure(figsize=(6.4, 0.9 + 0.32 * max(1, len(rows))))
    axes = figure.add_subplot()
    ys = list(range(len(rows), 0, -1))
    for y, row in zip(ys, rows, strict=True):
        colour = PALETTE[0] if row.interval is None or row.interval[0] > 0 or row.interval[1] < 0 else "#777777"
        error = None if row.interval is None else [[row.diff - row.interval[0]], [row.interval[1] - row.diff]]
        axes.errorbar([row.diff], [y], xerr=error, fmt="o", color=colour, capsize=3, markersize=4)
    axes.axvline(0, color="#444444", linewidth=0.8)
    axes.set_yticks(ys, [row.label for row in rows], fontsize=8)
    axes.set_ylim(0.4, len(rows) + 0.6)
    # Symmetric about 0 and only as wide as the figures need (a 3-point difference stays visible).
    reach = max([5.0, *(abs(row.diff) for row in rows),
                 *(abs(bound) for row in rows if row.interval is not None for bound in row.interval)])
    axes.set_xlim(-min(102.0, reach * 1.1), min(102.0, reach * 1.1))
    axes.set_xlabel("A - B, score points (95% paired bootstrap interval)")
    axes.set_title(title, fontsize=10)
    axes.grid(axis="x", alpha=0.3)
    return _svg(figure, salt)


def _legend(axes: Axes) -> None:
    if axes.get_legend_handles_labels()[0]:
        axes.legend(fontsize=8, loc="upper center", bbox_to_anchor=(0.5, -0.2), ncol=2, frameon=False)


def _svg(figure: Figure, salt: str) -> str:
    """The figure as an inline <svg> element. Text stays text (selectable, no glyph definitions) and
    the id salt differs per chart, so several charts in one page never share an element id."""
    buffer = io.StringIO()
    with matplotlib.rc_context({"svg.fonttype": "none", "svg.hashsalt": salt}):
        figure.savefig(buffer, format="svg", bbox_inches="tight", metadata={"Date": None})
    text = buffer.getvalue()
    return text[text.index("<svg"):]
