"""The report's noise floor across stream replicas (`--replicas K`) as tables: per stream (each replica's
Avg H / Avg F, their SD and range, the MDE at 80% power, flip rates), per setting, and the least stable
tasks. Shared by the text, Markdown and HTML renderers; a run without replicas gets one heading line
instead (`noise_lines`), saying that the noise across serving streams is not measured."""

from __future__ import annotations

from runner.report.model import Report
from runner.report.sections import Table, format_score, percent
from runner.stats.noise import Spread

__all__ = ["noise_lines", "noise_sections"]


def noise_sections(report: Report) -> list[tuple[str, Table, str]]:
    if not any(s.noise for s in report.streams):
        return []
    return [
        ("Noise across replicas (each replica its own serving stream; SD over replicas, range min-max; MDE = the "
         "smallest difference between two streams of this size that a comparison detects at 80% power; flips = "
         "share of replica pairs whose rewards differ on a task)", _stream_table(report), "llrlrrrlrrrrr"),
        ("Noise per setting (score of each replica; SD and range)", _setting_table(report), "lllllrl"),
        ("Least stable tasks (reward per replica, flip rate)", _task_table(report), "llllllr"),
    ]


def noise_lines(report: Report) -> list[str]:
    """For the heading: the not-measured notice of single-replica streams, and small-K cautions."""
    lines = sorted({s.noise_note for s in report.streams if s.noise_note})
    lines += sorted({f"noise: {note}" for s in report.streams if s.noise for note in s.noise.notes})
    return [line if line.startswith("noise") else f"noise across serving streams: {line}" for line in lines]


def _by_replica(spread: Spread) -> str:
    return " ".join(format_score(v) for v in spread.by_replica)


def _range(spread: Spread) -> str:
    return "-" if spread.min is None or spread.max is None else f"{spread.min:.1f}-{spread.max:.1f}"


def _stream_table(report: Report) -> Table:
    headers = ["model", "method", "K", "Avg H by replica", "H SD", "H range", "MDE H", "Avg F by replica", "F SD",
               "F range", "MDE F", "flip rate", "tasks flipping"]
    rows = []
    for s in report.streams:
        n = s.noise
        if n is None:
            rows.append([s.model, s.method, str(s.stream_replicas), "not measured", *["-"] * 9])
            continue
        rows.append([s.model, s.method, str(n.replicas), _by_replica(n.avg_h), format_score(n.avg_h.sd),
                     _range(n.avg_h), format_score(n.mde_avg_h), _by_replica(n.avg_f), format_score(n.avg_f.sd),
                     _range(n.avg_f), format_score(n.mde_avg_f), percent(n.flip_rate), percent(n.tasks_flipping)])
    return headers, rows


def _setting_table(report: Report) -> Table:
    headers = ["model", "method", "setting", "category", "by replica", "SD", "range"]
    rows = [[s.model, s.method, name, "H" if label == "h" else "F", _by_replica(spread), format_score(spread.sd),
             _range(spread)]
            for s in report.streams if s.noise for name, figures in s.noise.settings.items()
            for label, spread in figures.items()]
    return headers, rows


def _task_table(report: Report) -> Table:
    headers = ["model", "method", "setting", "task", "category", "reward by replica", "flip rate"]
    rows = [[s.model, s.method, t.scenario, t.task_id, t.category, " ".join(f"{r:.2f}" for r in t.rewards),
             percent(t.flip_rate)]
            for s in report.streams if s.noise for t in s.noise.least_stable]
    return headers, rows
