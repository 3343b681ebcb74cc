"""The report as one self-contained HTML page: `shiftbench report RUN_ID --html FILE`.

One file, nothing fetched at view time (`runner.views.html_page`: inline styles and SVG charts, a
Content-Security-Policy that forbids every network load). Sections, in reading order: the run's
heading, the leaderboard, the cost / Avg H scatter, one learning-curve chart per scenario, the
per-setting table with links to each setting's failed episodes, then the text report's own tables
(tokens, cost and latency p50/p95, per-window scores, state audits, end reasons), a batched run's
live and batch spend, the prompt cache,
those transcripts, and provenance.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from html import escape

from runner.common.journal_flag import journal_flag
from runner.config.method_provenance import method_lines
from runner.cost.cache_savings import CacheFigures
from runner.report import Report, StreamReport, cache_summary, scenario_sort_key
from runner.report.batch_tables import batch_lines
from runner.report.model import Pair
from runner.report.scores import scores_seal
from runner.report.sections import (
    AUDITS_TITLE,
    COSTS_TITLE,
    END_REASONS_TITLE,
    POOLS_TITLE,
    RETRIES_TITLE,
    WINDOWS_TITLE,
    Table,
    audit_table,
    cost_table,
    end_reason_table,
    pool_table,
    retry_table,
    window_table,
)
from runner.report.text import sweep_lines
from runner.views.charts import HIDDEN, SPECIFIED, CellKey, Intervals, cost_scatter_svg, learning_curve_svg
from runner.views.html_batch import batch_html
from runner.views.html_noise import noise_html
from runner.views.html_page import facts, figure, page, score, section, table
from runner.views.transcript import FailedSetting, SettingKey, Transcript, json_text
from simulators.record import Step

__all__ = ["render_html", "report_intervals"]


def report_intervals(report: Report) -> dict[CellKey, tuple[float, float] | str]:
    """The report's own 95% bootstrap intervals (`runner.evidence`), keyed as the charts read them; a
    figure over one task family has its "no interval (1 family)" instead."""
    found: dict[CellKey, tuple[float, float] | str] = {}

    def put(key: CellKey, pair: Pair) -> None:
        if isinstance(pair, str):
            found[key] = pair
        elif pair is not None:
            found[key] = (pair[0], pair[1])

    for s in report.streams:
        put(CellKey(s.model, s.method, None, HIDDEN), s.avg_h_ci)
        put(CellKey(s.model, s.method, None, SPECIFIED), s.avg_f_ci)
        for name, setting in s.settings.items():
            put(CellKey(s.model, s.method, name, HIDDEN), setting.hidden_ci)
            put(CellKey(s.model, s.method, name, SPECIFIED), setting.fully_specified_ci)
            for w in setting.windows:
                put(CellKey(s.model, s.method, name, HIDDEN, w.window), w.hidden_ci)
                put(CellKey(s.model, s.method, name, SPECIFIED, w.window), w.fully_specified_ci)
    return found


def render_html(report: Report, intervals: Intervals | None = None,
                failed: Mapping[SettingKey, FailedSetting] | None = None) -> str:
    """`intervals` default to the report's own; pass a mapping to draw others (or {} for none)."""
    intervals = report_intervals(report) if intervals is None else intervals
    failed = failed or {}
    anchors = {key: f"failed-{index}" for index, key in enumerate(failed)}
    return page(f"shiftbench run {report.run_id}", [
        _heading(report),
        section("Leaderboard", _leaderboard(report, intervals)),
        section("Charts", "<div class=charts>" + figure(cost_scatter_svg(report.streams, intervals, "scatter"),
                                                        "scatter", "all streams")
                + _curves(report, intervals) + "</div>"),
        section("Settings", _settings(report, intervals, failed, anchors)),
        section("Tokens, cost and latency", _plain_table(COSTS_TITLE, cost_table(report))),
        section("Windows", _plain_table(f"{WINDOWS_TITLE}: each scenario's scores per window (the learning "
                                        "curves as numbers)", window_table(report))),
        *([section("State audits", _plain_table(AUDITS_TITLE, audit_table(report)))]
          if any(s.audits for s in report.streams) else []),
        section("End reasons", _plain_table(END_REASONS_TITLE, end_reason_table(report))),
        *([section("Retries", _plain_table(RETRIES_TITLE, retry_table(report)))] if report.retries else []),
        *([section("Endpoint pools", _plain_table(POOLS_TITLE, pool_table(report)))] if report.replicas else []),
        *([section("Batch API", batch_html(report))] if report.batch is not None else []),
        section("Noise across replicas", noise_html(report)),
        section("Prompt cache", _cache(report)),
        section("Failed episodes", _failed(report, failed, anchors)),
        section("Provenance", _provenance(report)),
    ])


def _heading(report: Report) -> str:
    status = report.status + (f" ({report.stop_reason})" if report.stop_reason else "")
    cost = report.cost_usd
    spend = (f"${cost.total:.4f} (agent ${cost.agent:.4f}, judge ${cost.judge:.4f}, method ${cost.method:.4f})"
             + (f" of cap ${report.budget_usd:.2f}" if report.budget_usd is not None else ""))
    created = time.strftime("%Y-%m-%d %H:%M:%S %Z", time.localtime(report.created_at))
    return (f"<header><h1>Run {escape(report.run_id)}</h1>"
            f"<p>status <b>{escape(status)}</b> &middot; created {escape(created)} &middot; spend {escape(spend)}</p>"
            + "".join(f"<p>{escape(line)}</p>" for line in batch_lines(report)) +
            f"<p>prompt cache: {escape(cache_summary(report.cache))}</p>"
            "<p class=note>Scores are mean reward x 100 over test tasks. H: hidden-dependent tasks, "
            "F: fully specified tasks; Avg H / Avg F weigh every setting once. Bracketed figures and shaded "
            "bands are 95% bootstrap intervals (task families resampled within each setting); a figure "
            "resting on a single task family has none (no interval (1 family)).</p></header>")


def _curves(report: Report, intervals: Intervals) -> str:
    scenarios = sorted({name for stream in report.streams for name in stream.settings}, key=scenario_sort_key)
    if not scenarios:
        return "<p>No finished test episodes yet.</p>"
    return "\n".join(figure(learning_curve_svg(name, report.streams, intervals, f"curve-{name}"),
                             "learning-curve", name) for name in scenarios)


def _state(stream: StreamReport) -> str:
    return "complete" if stream.complete else f"partial {stream.test_done}/{stream.test_planned}"


def _leaderboard(report: Report, intervals: Intervals) -> str:
    rows = []
    for s in report.streams:
        per = s.cost_per_task_usd.total if s.cost_per_task_usd else 0.0
        rows.append([escape(s.model), escape(s.method),
                     score(s.avg_h, intervals.get(CellKey(s.model, s.method, None, HIDDEN))),
                     score(s.avg_f, intervals.get(CellKey(s.model, s.method, None, SPECIFIED))),
                     str(s.test_done), escape(_state(s)), f"{per:.4f}", f"{s.cost_usd.total:.2f}"])
    return table(["model", "method", "Avg H", "Avg F", "test", "state", "$ / task", "total $"], rows)


def _plain_table(title: str, found: Table) -> str:
    """A table of the text report, its title as the note above it."""
    headers, rows = found
    return f"<p class=note>{escape(title)}</p>" + table(headers, [[escape(cell) for cell in row] for row in rows])


def _cache(report: Report) -> str:
    def row(model: str, method: str, c: CacheFigures) -> list[str]:
        rate = "-" if c.hit_rate is None else f"{100 * c.hit_rate:.1f}%"
        return [escape(model), escape(method), f"{c.input_tokens:,}", f"{c.cached_input_tokens:,}", rate,
                f"{c.cache_write_tokens:,}", f"{c.saved_usd:.4f}"]

    rows = [row(s.model, s.method, s.cache) for s in report.streams] + [row("(run)", "all calls", report.cache)]
    note = ("<p class=note>Every call sent. Hit rate: cached / all input tokens. Saved: the same tokens at the "
            "plain input price minus what they cost, at the run's prices (negative when cache writes cost more "
            "than the reads saved).</p>")
    return note + table(["model", "method", "input tok", "cached tok", "hit rate", "cache writes", "saved $"], rows)


def _settings(report: Report, intervals: Intervals, failed: Mapping[SettingKey, FailedSetting],
              anchors: Mapping[SettingKey, str]) -> str:
    rows = []
    for s in report.streams:
        for name, setting in s.settings.items():
            key = (s.model, s.method, name)
            missed = failed.get(key)
            link = "0" if missed is None or missed.total == 0 else \
                f"<a href=\"#{anchors[key]}\">{missed.total} failed</a>"
            bounds = intervals.get(CellKey(s.model, s.method, name, HIDDEN)), \
                intervals.get(CellKey(s.model, s.method, name, SPECIFIED))
            rows.append([escape(name), escape(s.model), escape(s.method), score(setting.hidden, bounds[0]),
                         score(setting.fully_specified, bounds[1]), f"{setting.n}/{setting.planned}",
                         link if failed else "-"])
    rows.sort(key=lambda row: scenario_sort_key(row[0]))
    return table(["setting", "model", "method", "H", "F", "done", "failed episodes"], rows)


def _failed(report: Report, failed: Mapping[SettingKey, FailedSetting], anchors: Mapping[SettingKey, str]) -> str:
    if not failed:
        return ("<p>Transcripts are not included in this page; "
                f"<code>shiftbench show {escape(report.run_id)} --failed{escape(_journal_flag(report))}</code> "
                "prints them.</p>")
    parts = []
    for key, missed in failed.items():
        if missed.total == 0:
            continue
        model, method, scenario = key
        more = missed.total - len(missed.shown)
        command = (f"shiftbench show {report.run_id} --failed --stream {model}/{method} --scenario {scenario}"
                   f"{_journal_flag(report)}")
        note = f"<p class=note>{more} more: <code>{escape(command)}</code></p>" if more > 0 else ""
        parts.append(f"<div class=failed id=\"{anchors[key]}\"><h3>{escape(scenario)} &middot; "
                     f"{escape(model)} / {escape(method)}: {missed.total} failed</h3>"
                     + "".join(_transcript(t) for t in missed.shown) + note + "</div>")
    return "\n".join(parts) or "<p>No failed test episodes.</p>"


def _transcript(t: Transcript) -> str:
    e = t.row  # the journaled episode
    summary = (f"{escape(e.task_id)} &middot; window {e.window} &middot; {escape(e.category)} &middot; "
               f"{escape(t.score_line)} &middot; {escape(e.end_reason)}")
    steps = "".join(_step(number, step) for number, step in enumerate(t.record.steps, start=1))
    figures = (f"{e.turns} turns, {e.tool_calls} tool calls, {e.input_tokens} in / {e.output_tokens} out tokens, "
               f"${e.cost_usd:.4f}, {e.latency_s:.1f} s")
    finish = f"<p><b>finish</b></p><pre>{escape(t.finish)}</pre>" if t.finish else ""
    return (f"<details><summary>{summary}</summary>"
            f"<p><b>task</b> {escape(t.record.task.instruction)}</p><ol class=steps>{steps}</ol>{finish}"
            f"<p><b>grade</b> {escape(t.score_line)} by {escape(e.judge or 'the grader')}</p>"
            f"<pre>{escape(json_text(t.grade_details))}</pre><p class=note>{escape(figures)}</p></details>")


def _step(number: int, step: Step) -> str:
    parts = []
    if step.reasoning:
        parts.append(f"<p class=thought>{escape(step.reasoning)}</p>")
    if step.reply:
        parts.append(f"<p>replied: {escape(step.reply)}</p>")
    action = (f"NONE [{step.note}]" if step.action_name is None
              else f"{step.action_name}({step.action_arguments})")
    parts.append(f"<pre>action: {escape(action)}\nobservation: {escape(step.observation)}</pre>")
    return f"<li value={number}>{''.join(parts)}</li>"


def _provenance(report: Report) -> str:
    p = report.provenance
    items = [("journal", report.journal), ("code version", p.code_version),
             ("report's code version", p.report_code_version), ("config hash", p.config_hash),
             ("dataset", p.dataset_path), ("dataset fingerprint", p.dataset_fingerprint),
             *((f"{name} served as", ", ".join(model["served_as"])) for name, model in p.models.items()
               if model.get("served_as")),
             *((f"method {name}", line) for name, line in method_lines(p.methods, p.method_changes)),
             ("scores sealed (sha256)", scores_seal(report)["sha256"]),
             *(("merged sweep", line.strip()) for line in sweep_lines(report))]
    return f"{facts(items)}<p><b>config</b></p><pre>{escape(json_text(p.config))}</pre>"


def _journal_flag(report: Report) -> str:
    """The `--journal` the page's commands need to read the run's journal (none for the default)."""
    return journal_flag(report.journal) if report.journal else ""
