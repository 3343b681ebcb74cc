"""The report as text for a terminal and as Markdown: a heading (status, spend, cache, provenance), then
the sections of `runner.report.sections`. Every renderer returns text without a final newline."""

from __future__ import annotations

from collections.abc import Sequence

from runner.common.money import usd
from runner.common.tables import text_table, wrap_prose
from runner.config.method_provenance import method_lines
from runner.cost.cache_savings import CacheFigures
from runner.report.batch_tables import batch_lines, batch_sections
from runner.report.model import Report
from runner.report.noise_tables import noise_lines, noise_sections
from runner.report.scores import scores_seal
from runner.report.sections import (
    WINDOWS_ALIGN,
    WINDOWS_TITLE,
    Table,
    format_score,
    percent,
    report_sections,
    window_table,
)

__all__ = ["cache_summary", "cut_table", "render_markdown", "render_text", "render_windows_markdown",
           "render_windows_text", "sweep_lines"]


def render_text(report: Report, with_slices: bool = False, width: int | None = None, limit: int | None = None
                ) -> str:
    """The whole report. `width`: the terminal's, every line laid out to fit it (None: natural widths, for
    pipes and files); `limit`: at most this many rows per table, each cut table saying how many it left
    out and the flags that print them (None: every row). `report --windows` prints the per-window table
    alone, uncut (`render_windows_text`)."""
    parts = [wrap_prose(_heading(report), width), ""]
    sections = [*report_sections(report), *batch_sections(report), *noise_sections(report)]
    if any(s.repeats for s in report.streams):
        sections.append(("Repeats (Avg H / Avg F of each repeat; spread = largest - smallest; pass^k = share of "
                         "tasks solved in all of their first k tries)", _repeat_table(report), "llrllrr"))
    if with_slices:
        sections.append(("Slices (descriptive only: chosen after looking, they decide nothing)",
                         _slice_table(report), "llllrr"))
    for title, table, align in sections:
        windows = title == WINDOWS_TITLE  # a window's row is named by its window too, in every panel
        parts += [wrap_prose(title, width), *cut_table(table, align, width, limit, WINDOWS_MORE if windows else "",
                                                       4 if windows else None), ""]
    return "\n".join(parts).rstrip()


WINDOWS_MORE = "--windows or --all prints every one, --limit N the first N"


def render_windows_text(report: Report, width: int | None = None, limit: int | None = None) -> str:
    """`report --windows`: the per-window table alone, every row unless `limit` (a --limit given), laid
    out as in the whole report (its title, the same panels at a width)."""
    table = window_table(report)
    lines = cut_table(table, WINDOWS_ALIGN, width, limit, keys=4)
    return "\n".join([wrap_prose(WINDOWS_TITLE, width), *lines])


def render_windows_markdown(report: Report) -> str:
    """`report --windows --md`: the per-window table alone, as the whole report's Markdown shows it."""
    return "\n".join([f"## {WINDOWS_TITLE}", "", _markdown_table(*window_table(report))])


def cut_table(table: Table, align: str, width: int | None, limit: int | None, more: str = "",
              keys: int | None = None) -> list[str]:
    """The table laid out to `width`, at most `limit` rows (None: all), then a line saying how many rows
    it left out and how to see them (`more`: the flags that do; default --limit and --all). `keys`: the
    leading columns that name a row, repeated in each panel of a table too wide for `width`."""
    headers, rows = table
    shown = rows if limit is None else rows[:limit]
    lines = [text_table(headers, shown, align, width, keys)]
    if len(shown) < len(rows):
        how = more or "--limit N prints the first N, --all every one"
        lines.append(wrap_prose(f"... {len(rows) - len(shown)} more rows of {len(rows)}; {how}", width))
    return lines


def _repeat_table(report: Report) -> Table:
    headers = ["model", "method", "repeats", "Avg H by repeat", "Avg F by repeat", "H spread", "pass^k (k=1..K)"]
    rows = []
    for s in report.streams:
        if s.repeats is None:
            continue
        r = s.repeats
        rows.append([s.model, s.method, str(r.repeats), " ".join(format_score(v) for v in r.avg_h_by_repeat),
                     " ".join(format_score(v) for v in r.avg_f_by_repeat), format_score(r.avg_h_spread),
                     " ".join("-" if v is None else f"{v:.3f}" for v in r.pass_k.values())])
    return headers, rows


def _slice_table(report: Report) -> Table:
    headers = ["model", "method", "by", "slice", "n", "score"]
    rows = [[s.model, s.method, dimension, row.bucket, str(row.n), format_score(row.score)]
            for s in report.streams for dimension, found in s.slices.items() for row in found]
    return headers, rows


def render_markdown(report: Report) -> str:
    parts = [f"# Run {report.run_id}", "", _heading(report).replace("\n", "  \n"), ""]
    for title, table, _ in [*report_sections(report), *batch_sections(report), *noise_sections(report)]:
        parts += [f"## {title}", "", _markdown_table(*table), ""]
    return "\n".join(parts).rstrip()


def _heading(report: Report) -> str:
    status = report.status + (f" ({report.stop_reason})" if report.stop_reason else "")
    cost = report.cost_usd
    spend = (f"spend ${cost.total:.4f} (agent ${cost.agent:.4f}, judge ${cost.judge:.4f}, "
             f"method ${cost.method:.4f})")
    if report.budget_usd is not None:
        spend += f" of cap {usd(report.budget_usd)}"
    return "\n".join([f"run {report.run_id}: {status}", f"journal {report.journal}", spend, *batch_lines(report),
                      *sweep_lines(report),
                      f"prompt cache: {cache_summary(report.cache)}", *_evidence_lines(report)])


def sweep_lines(report: Report) -> list[str]:
    """A merged journal's run: its shards, the sweep's total spend against its cap, what is missing."""
    sweep = report.sweep
    if sweep is None:
        return []
    cap = ", with no cap" if sweep.budget_usd is None else f" of the sweep's cap ${sweep.budget_usd:.2f}"
    lines = [f"sweep {sweep.sweep_id}: merged {len(sweep.shards)} of {sweep.count} shards, "
             f"${sweep.spent_usd:.4f} spent in all{cap}"]
    lines += [f"  shard {s.index}/{sweep.count}: {s.status}, {s.units_done}/{s.units_planned} units, "
              f"${s.spent_usd:.4f}" + ("" if s.cap_usd is None else f" of its cap ${s.cap_usd:.4f}")
              for s in sweep.shards]
    lines += [f"  shard {m.index}/{sweep.count}: MISSING ({len(m.streams)} streams: {', '.join(m.streams[:3])}"
              + (" ..." if len(m.streams) > 3 else "") + ")" for m in sweep.missing]
    return lines


def cache_summary(cache: CacheFigures) -> str:
    """One line: hit rate, tokens written, spend saved (the heading, the HTML page, the pilot)."""
    return (f"hit rate {percent(cache.hit_rate)} ({cache.cached_input_tokens:,} of {cache.input_tokens:,} input "
            f"tokens read from cache), {cache.cache_write_tokens:,} written, ${cache.saved_usd:.4f} saved "
            "against uncached prices")


def _evidence_lines(report: Report) -> list[str]:
    """How sure the numbers are and where they come from: the bootstrap, the provenance, the plan."""
    lines = []
    if report.bootstrap:
        b = report.bootstrap
        lines.append(f"intervals: {b['level']:.0%} bootstrap, {b['unit']} resampled, {b['draws']} draws, "
                     f"seed {b['seed']}")
        if "replicated_unit" in b:
            lines.append(f"  streams with replicas: {b['replicated_unit']} (same draws and seed)")
    lines += noise_lines(report)
    p = report.provenance
    by = "" if p.report_code_version in ("", p.code_version) else f" (this report: {p.report_code_version})"
    lines.append(f"provenance: code {p.code_version}{by}, dataset {p.dataset_fingerprint[:12]}, "
                 f"config {p.config_hash[:12]}")
    lines.append(f"scores sealed: sha256 {scores_seal(report)['sha256'][:16]} (the same for the same results in "
                 "any run; `--json` has it whole)")
    lines += [f"served: {name} as {', '.join(model['served_as'])}" for name, model in p.models.items()
              if model.get("served_as")]
    lines += [f"method {name}: {line}" for name, line in method_lines(p.methods, p.method_changes)]
    plan = p.plan
    if plan:
        lines.append(f"plan: {plan['file']} sha256 {plan['hash'][:12]}, now {plan['head'][:12]} "
                     f"({len(plan['amendments'])} amendments)")
        lines += [f"  amendment {a['hash'][:12]} {a['at']}: {a['reason']} "
                  f"(sets {', '.join(f'{k}={v}' for k, v in a['sets'].items())})" for a in plan["amendments"]]
    return lines


def _markdown_table(headers: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    def line(cells: Sequence[str]) -> str:
        return "| " + " | ".join(cell.replace("|", "\\|") for cell in cells) + " |"

    return "\n".join([line(headers), line(["---"] * len(headers)), *(line(row) for row in rows)])
