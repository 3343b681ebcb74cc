"""The report of one run, read from the journal: scores per setting, Avg H / Avg F, tokens, spend, latency.

`model` is what a report says (typed dataclasses); `build` reads a run from the journal and assembles
that model; the renderers each turn the model into one format: `text` (terminal and Markdown, through
the tables of `sections`, `noise_tables` and `batch_tables`), `csv_export` and `sealed` (JSON with its
sha256); `batch_figures` reads a batched run's batches and calls into `Report.batch` (None for a live
run). The HTML page (`runner.views.html_report`) and the evidence commands read the same model. Inside, imports
run build -> model <- renderers; no renderer reads the journal.

Arrows: report -> audits (state-audit rates), stats, cost, schedule (method time), config, journal, common.
"""

from __future__ import annotations

from runner.report.build import build_report
from runner.report.csv_export import render_csv, render_window_csv
from runner.report.model import (
    Costs,
    Provenance,
    Report,
    Setting,
    StreamReport,
    WindowScore,
    percentile,
    scenario_sort_key,
)
from runner.report.sealed import render_json
from runner.report.text import (
    cache_summary,
    render_markdown,
    render_text,
    render_windows_markdown,
    render_windows_text,
)

__all__ = [
    "Costs",
    "Provenance",
    "Report",
    "Setting",
    "StreamReport",
    "WindowScore",
    "build_report",
    "cache_summary",
    "percentile",
    "render_csv",
    "render_json",
    "render_markdown",
    "render_text",
    "render_window_csv",
    "render_windows_markdown",
    "render_windows_text",
    "scenario_sort_key",
]
