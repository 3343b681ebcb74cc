"""The report's tables, as (headers, rows) of plain strings, shared by the text and Markdown renderers.

Each section is a title, a table and its column alignment; numbers are formatted once, here.
"""

from __future__ import annotations

from runner.audits.rates import Rate
from runner.cost.cache_savings import CacheFigures
from runner.report.method_streams import METHOD_TITLE, method_table
from runner.report.model import Costs, Pair, Report, StreamReport

__all__ = ["AUDITS_TITLE", "COSTS_TITLE", "END_REASONS_TITLE", "POOLS_TITLE", "RETRIES_TITLE", "SCORES_ALIGN",
           "SCORES_TITLE", "WINDOWS_ALIGN", "WINDOWS_TITLE", "Table", "audit_table", "cost_table", "end_reason_table",
           "format_score", "percent", "pool_table", "report_sections", "retry_table", "score_table", "window_table"]

Table = tuple[list[str], list[list[str]]]
END_REASONS_TITLE = "End reasons (finished episodes; context_length is the model's own limit, scored as the agent's)"
RETRIES_TITLE = ("Retries (calls sent to the provider; retries = attempts after a call's first; timeouts = failed "
                 "attempts that got no byte for the stall time or ran past their time)")
POOLS_TITLE = "Endpoint pools (model calls per replica: answered, and failed on it last)"
WINDOWS_TITLE = "Windows"
WINDOWS_ALIGN = "lllrrrrrr"
COSTS_TITLE = ("Tokens, cost and latency (per task = per finished episode, serving included; failed and "
               "interrupted attempts apart; est. = calls whose tokens were estimated, the provider sent no usage)")
SCORES_TITLE = "Scores (mean reward x 100 over test tasks; H hidden, F fully specified; 95% intervals)"
AUDITS_TITLE = ("State audits (retail and banking episodes; % with exact 95% interval; unsafe writes: proposed / "
                "executed / state-changing)")


def report_sections(report: Report) -> list[tuple[str, Table, str]]:
    return [
        (SCORES_TITLE, score_table(report), SCORES_ALIGN),
        (COSTS_TITLE, cost_table(report), "llrrrrrrrrrrrrr"),
        ("Prompt cache (every call sent; hit rate = cached / all input tokens; saved = the same tokens at "
         "the plain input price minus what they cost, at the run's prices)", _cache_table(report), "llrrrrr"),
        (END_REASONS_TITLE, end_reason_table(report), "lll"),
        ("Settings", _setting_table(report), "lllrrrrr"),
        (WINDOWS_TITLE, window_table(report), WINDOWS_ALIGN),
        *([(AUDITS_TITLE, audit_table(report), "llrllllr")]
          if any(s.audits for s in report.streams) else []),
        *([(RETRIES_TITLE, retry_table(report), "llrrrrr")] if report.retries else []),
        *([(POOLS_TITLE, pool_table(report), "llrr")] if report.replicas else []),
        *([(METHOD_TITLE, method_table(report.method_streams), "llrlrlrrrl")] if report.method_streams else []),
    ]


def retry_table(report: Report) -> Table:
    rows = [[r.model, r.method, str(r.calls), str(r.retried_calls), str(r.retries), str(r.timeouts),
             str(r.failed_calls)] for r in report.retries]
    return ["model", "method", "calls", "retried", "retries", "timeouts", "failed"], rows


def pool_table(report: Report) -> Table:
    rows = [[r.model, r.replica, str(r.answered), str(r.failed)] for r in report.replicas]
    return ["model", "replica", "answered", "failed"], rows


def _cache_table(report: Report) -> Table:
    headers = ["model", "method", "input tok", "cached tok", "hit rate", "cache writes", "saved $"]

    def row(model: str, method: str, c: CacheFigures) -> list[str]:
        return [model, method, f"{c.input_tokens:,}", f"{c.cached_input_tokens:,}", percent(c.hit_rate),
                f"{c.cache_write_tokens:,}", f"{c.saved_usd:.4f}"]

    rows = [row(s.model, s.method, s.cache) for s in report.streams]
    return headers, [*rows, row("(run)", "all calls", report.cache)]


def end_reason_table(report: Report) -> Table:
    rows = [[s.model, s.method, ", ".join(f"{reason} {n}" for reason, n in s.end_reasons.items()) or "-"]
            for s in report.streams]
    return ["model", "method", "episodes by end reason"], rows


def format_score(value: float | None) -> str:
    return "-" if value is None else f"{value:.1f}"


def _state(stream: StreamReport) -> str:
    return "complete" if stream.complete else f"partial {stream.test_done}/{stream.test_planned}"


def _interval(pair: Pair) -> str:
    if pair is None or isinstance(pair, str):
        return pair or "-"
    return f"[{pair[0]:.1f}, {pair[1]:.1f}]"


SCORES_ALIGN = "llrrrrrl"


def score_table(report: Report) -> Table:
    headers = ["model", "method", "Avg H", "H interval", "Avg F", "F interval", "test", "state"]
    rows = [[s.model, s.method, format_score(s.avg_h), _interval(s.avg_h_ci), format_score(s.avg_f),
             _interval(s.avg_f_ci), str(s.test_done), _state(s)]
            for s in report.streams]
    return headers, rows


def cost_table(report: Report) -> Table:
    headers = ["model", "method", "tasks", "in tok/task", "out tok/task", "agent $/task", "judge $/task",
               "method $/task", "total $/task", "total $", "apart tok", "apart $", "est.", "p50 s", "p95 s"]
    rows = []
    for s in report.streams:
        per = s.cost_per_task_usd or Costs()
        apart = s.unfinished_input_tokens + s.unfinished_output_tokens
        rows.append([s.model, s.method, str(s.episodes), _number(s.input_tokens_per_task, 0),
                     _number(s.output_tokens_per_task, 0), f"{per.agent:.4f}", f"{per.judge:.4f}",
                     f"{per.method:.4f}", f"{per.total:.4f}", f"{s.cost_usd.total:.2f}", f"{apart:,}",
                     f"{s.unfinished_cost_usd:.4f}", str(s.estimated_calls),
                     _number(s.latency_p50_s, 1), _number(s.latency_p95_s, 1)])
    return headers, rows


def audit_table(report: Report) -> Table:
    headers = ["model", "method", "episodes", "state match", "state unchanged", "no unsafe write",
               "unsafe writes", "escalations"]
    rows = []
    for s in report.streams:
        if s.audits is None:
            continue
        a = s.audits
        rows.append([s.model, s.method, str(a.episodes), _rate(a.state_match), _rate(a.state_unchanged),
                     _rate(a.safe_writes), f"{a.writes_proposed} / {a.writes_executed} / {a.writes_changing}",
                     str(a.escalations)])
    return headers, rows


def _rate(rate: Rate) -> str:
    if rate.value is None:
        return "-"
    missing = f", {rate.missing} missing" if rate.missing else ""
    return f"{100 * rate.value:.1f} [{100 * rate.ci[0]:.1f}, {100 * rate.ci[1]:.1f}]{missing}"


def _number(value: float | None, digits: int) -> str:
    return "-" if value is None else f"{value:,.{digits}f}"


def _setting_table(report: Report) -> Table:
    headers = ["model", "method", "setting", "H", "H interval", "F", "F interval", "done"]
    rows = [[s.model, s.method, name, format_score(setting.hidden), _interval(setting.hidden_ci),
             format_score(setting.fully_specified), _interval(setting.fully_specified_ci),
             f"{setting.n}/{setting.planned}"]
            for s in report.streams for name, setting in s.settings.items()]
    return headers, rows


def window_table(report: Report) -> Table:
    headers = ["model", "method", "setting", "window", "H", "H interval", "F", "F interval", "n"]
    rows = [[s.model, s.method, name, str(w.window), format_score(w.hidden), _interval(w.hidden_ci),
             format_score(w.fully_specified), _interval(w.fully_specified_ci), str(w.n)]
            for s in report.streams for name, setting in s.settings.items() for w in setting.windows]
    return headers, rows


def percent(rate: float | None) -> str:
    return "-" if rate is None else f"{100 * rate:.1f}%"
