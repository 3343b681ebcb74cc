"""The report as CSV: one row per stream (a leaderboard to paste into a sheet), or one per window."""

from __future__ import annotations

import csv
import io
from collections.abc import Sequence

from runner.cost.batch_savings import BatchSpend
from runner.cost.cache_savings import CacheFigures
from runner.report.model import PURPOSES, Pair, Report, StreamReport, scenario_sort_key

__all__ = ["render_csv", "render_window_csv"]


def render_csv(report: Report) -> str:
    """One row per stream, one column group per setting: a leaderboard to paste into a sheet."""
    scenarios = sorted({name for stream in report.streams for name in stream.settings}, key=scenario_sort_key)
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    batched = report.batch is not None
    writer.writerow(_csv_header(scenarios) + (list(BATCH_COLUMNS) if batched else []))
    for stream in report.streams:
        writer.writerow(_csv_row(report, stream, scenarios) + (_batch_cells(report, stream) if batched else []))
    return buffer.getvalue().rstrip("\n")


BATCH_COLUMNS = ("live_usd", "batch_usd", "batch_saved_usd", "batch_calls")
"""Only in a run that batched anything (`--batch tests`): the stream's spend live and through batch APIs, and
what batching saved (the batch calls' tokens at the live price minus what they cost)."""


def _batch_cells(report: Report, stream: StreamReport) -> list[str]:
    assert report.batch is not None
    found = next((s.spend for s in report.batch.streams if (s.model, s.method) == (stream.model, stream.method)),
                 BatchSpend())
    return [_raw(found.live_usd), _raw(found.batch_usd), _raw(found.saved_usd), str(found.batch_calls)]


def render_window_csv(report: Report) -> str:
    """One row per (stream, setting, window): the learning curves as numbers, with their intervals and,
    with replicas, the range of the replicas' own scores."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(["run_id", "model", "method", "setting", "window", "h", "h_ci_lo", "h_ci_hi", "f", "f_ci_lo",
                     "f_ci_hi", "n", "h_replica_min", "h_replica_max", "f_replica_min", "f_replica_max"])
    for stream in report.streams:
        spreads = {} if stream.noise is None else stream.noise.windows
        for name, setting in stream.settings.items():
            ranges = {w.window: w for w in spreads.get(name, [])}
            for w in setting.windows:
                found = ranges.get(w.window)
                band = ["", "", "", ""] if found is None else [
                    _raw(found.hidden.min), _raw(found.hidden.max), _raw(found.fully_specified.min),
                    _raw(found.fully_specified.max)]
                writer.writerow([report.run_id, stream.model, stream.method, name, str(w.window), _raw(w.hidden),
                                 *_raw_pair(w.hidden_ci), _raw(w.fully_specified), *_raw_pair(w.fully_specified_ci),
                                 str(w.n), *band])
    return buffer.getvalue().rstrip("\n")


def _csv_header(scenarios: Sequence[str]) -> list[str]:
    per_setting = [f"{name}_{part}" for name in scenarios for part in ("h", "f", "n")]
    return ["run_id", "model", "method", "complete", "avg_h", "avg_f", *per_setting, "episodes",
            "input_tokens_per_task", "output_tokens_per_task", *(f"{p}_usd_per_task" for p in PURPOSES),
            "total_usd_per_task", *(f"{p}_usd" for p in PURPOSES), "total_usd", "unfinished_input_tokens",
            "unfinished_output_tokens", "unfinished_usd", "estimated_calls", "latency_p50_s", "latency_p95_s",
            "avg_h_ci_lo", "avg_h_ci_hi", "avg_f_ci_lo", "avg_f_ci_hi",
            *(f"{name}_{part}_ci_{end}" for name in scenarios for part in ("h", "f") for end in ("lo", "hi")),
            "cache_input_tokens", "cached_input_tokens", "cache_hit_rate", "cache_write_tokens", "cache_saved_usd",
            *NOISE_COLUMNS, *METHOD_COLUMNS]


def _csv_row(report: Report, stream: StreamReport, scenarios: Sequence[str]) -> list[str]:
    per_setting: list[str] = []
    for name in scenarios:
        setting = stream.settings.get(name)
        per_setting += ["", "", ""] if setting is None else [
            _raw(setting.hidden), _raw(setting.fully_specified), str(setting.n)]
    setting_cis: list[str] = []
    for name in scenarios:
        found = stream.settings.get(name)
        setting_cis += [""] * 4 if found is None else [*_raw_pair(found.hidden_ci),
                                                       *_raw_pair(found.fully_specified_ci)]
    per, cost = stream.cost_per_task_usd, stream.cost_usd
    per_task = ["", "", "", ""] if per is None else [_raw(per.agent), _raw(per.judge), _raw(per.method),
                                                     _raw(per.total)]
    return [report.run_id, stream.model, stream.method, str(stream.complete).lower(), _raw(stream.avg_h),
            _raw(stream.avg_f), *per_setting, str(stream.episodes), _raw(stream.input_tokens_per_task),
            _raw(stream.output_tokens_per_task), *per_task, _raw(cost.agent), _raw(cost.judge),
            _raw(cost.method), _raw(cost.total), str(stream.unfinished_input_tokens),
            str(stream.unfinished_output_tokens), _raw(stream.unfinished_cost_usd), str(stream.estimated_calls),
            _raw(stream.latency_p50_s), _raw(stream.latency_p95_s),
            *_raw_pair(stream.avg_h_ci), *_raw_pair(stream.avg_f_ci), *setting_cis, *_cache_cells(stream.cache),
            *_noise_cells(stream), *_method_cells(report, stream.method)]


NOISE_COLUMNS = ("replicas", "avg_h_replica_sd", "avg_h_replica_min", "avg_h_replica_max", "avg_f_replica_sd",
                 "avg_f_replica_min", "avg_f_replica_max", "mde_avg_h", "mde_avg_f", "flip_rate", "tasks_flipping")
"""The noise floor across stream replicas (`--replicas K`); empty but `replicas` with one replica."""


def _noise_cells(stream: StreamReport) -> list[str]:
    n = stream.noise
    if n is None:
        return [str(stream.stream_replicas), *[""] * (len(NOISE_COLUMNS) - 1)]
    return [str(n.replicas), _raw(n.avg_h.sd), _raw(n.avg_h.min), _raw(n.avg_h.max), _raw(n.avg_f.sd),
            _raw(n.avg_f.min), _raw(n.avg_f.max), _raw(n.mde_avg_h), _raw(n.mde_avg_f), _raw(n.flip_rate),
            _raw(n.tasks_flipping)]


METHOD_COLUMNS = ("method_source_sha256", "method_source_changes")
"""The source the stream's method ran with last (after any `--accept-method-change`), and how many accepted
changes led there: a row whose method changed mid-run says so in a sheet too."""


def _method_cells(report: Report, method: str) -> list[str]:
    began = report.provenance.methods.get(method)
    changes = [c for c in report.provenance.method_changes if c.get("method") == method]
    if began is None:
        return ["", ""]
    source = str(changes[-1]["after"]) if changes else str(began.get("source_sha256", ""))
    return [source, str(len(changes))]


def _cache_cells(cache: CacheFigures) -> list[str]:
    return [str(cache.input_tokens), str(cache.cached_input_tokens), _raw(cache.hit_rate),
            str(cache.cache_write_tokens), _raw(cache.saved_usd)]


def _raw_pair(pair: Pair) -> list[str]:
    if pair is None or isinstance(pair, str):  # no interval (1 family) goes in both cells, read either way
        return [pair or "", pair or ""]
    return [_raw(pair[0]), _raw(pair[1])]


def _raw(value: float | None) -> str:
    # Rounded so float noise (0.21999999999999997) does not land in a spreadsheet.
    return "" if value is None else repr(round(value, 6))
