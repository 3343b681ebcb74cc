"""The report of one run, read from the journal: scores per setting, Avg H / Avg F, tokens, spend, latency.

Scores follow FORMAT.md "Scores and costs": a setting's score is mean reward x 100 over one scenario's
test episodes of one category, and Avg H / Avg F weigh every setting once whatever its size. A report
stream is (model, method) over all its scenarios, one leaderboard row; it stays marked partial until
every planned test unit of every setting is done, so nobody quotes a half-run number as final.

Spend by purpose is the journal's `Spend`: `model_calls`, with the episodes' own agent cost standing in
when a run journaled no agent calls, so older or scripted runs still show what the agent spent.
"""

from __future__ import annotations

import csv
import io
import math
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

import orjson

from runner.audits.rates import Rate, StreamAudits, audit_rates
from runner.cache_savings import CacheFigures, cache_by_stream, cache_total, run_price_table
from runner.evidence.bootstrap import DEFAULT_SPEC, stream_draws
from runner.evidence.outcomes import Outcome, task_values
from runner.evidence.provenance import (
    machine_meta_key,
    provenance_extras,
    served_model_from_key,
    served_models_prefix,
)
from runner.evidence.repeats import RepeatSummary, repeat_summary
from runner.evidence.seal import seal
from runner.evidence.slices import SliceRow, slices
from runner.journal import (
    CacheUsage,
    CallUsage,
    EpisodeCost,
    EpisodeEnd,
    PlannedSetting,
    Reader,
    ReplicaCalls,
    RunRow,
    Spend,
    TestOutcome,
    TestScore,
    read_only,
)
from runner.runs import ReplicaUse
from runner.tables import text_table
from simulators.errors import ShiftbenchInputError

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
    "render_window_csv",
    "render_json",
    "render_markdown",
    "render_text",
    "scenario_sort_key",
    "text_table",
]

PURPOSES = ("agent", "judge", "method")
SPECIFIED_DOMAINS = ("retail", "banking")
"""Avg F covers these domains only: pitch tasks are always hidden-dependent (FORMAT.md)."""
DOMAIN_ORDER = ("retail", "banking", "pitch")


Pair = list[float] | None
"""An interval [lo, hi]; None when there is nothing to resample."""


@dataclass(frozen=True)
class WindowScore:
    window: int
    hidden: float | None
    fully_specified: float | None
    n: int
    hidden_ci: Pair = None
    fully_specified_ci: Pair = None


@dataclass(frozen=True)
class Setting:
    """One scenario of a stream. Scores are None when no test task of that category is finished."""

    hidden: float | None
    fully_specified: float | None
    n: int
    planned: int
    complete: bool
    windows: list[WindowScore]
    hidden_ci: Pair = None
    fully_specified_ci: Pair = None


@dataclass(frozen=True)
class Costs:
    agent: float = 0.0
    judge: float = 0.0
    method: float = 0.0
    total: float = 0.0

    @classmethod
    def of(cls, by_purpose: Mapping[str, float]) -> Costs:
        # The total keeps any purpose a newer engine may add, so money never goes unreported.
        return cls(agent=by_purpose.get("agent", 0.0), judge=by_purpose.get("judge", 0.0),
                   method=by_purpose.get("method", 0.0), total=sum(by_purpose.values(), 0.0))

    def per(self, tasks: int) -> Costs | None:
        if tasks <= 0:
            return None
        return Costs(self.agent / tasks, self.judge / tasks, self.method / tasks, self.total / tasks)


@dataclass(frozen=True)
class StreamReport:
    model: str
    method: str
    complete: bool
    avg_h: float | None
    avg_f: float | None
    settings: dict[str, Setting]
    test_done: int
    test_planned: int
    episodes: int
    """Finished episodes, serving included: the denominator of every per-task figure."""
    input_tokens: int
    output_tokens: int
    """Of finished episodes (and of the method's own calls): what the per-task figures divide."""
    input_tokens_per_task: float | None
    output_tokens_per_task: float | None
    cost_usd: Costs
    """Everything the stream spent, unfinished attempts included."""
    cost_per_task_usd: Costs | None
    """The spend of finished episodes per finished episode."""
    latency_p50_s: float | None
    latency_p95_s: float | None
    avg_h_ci: Pair = None
    avg_f_ci: Pair = None
    repeats: RepeatSummary | None = None
    """With `--repeats K`: Avg H / Avg F per repeat, their spread, pass^k (scores above average the repeats)."""
    slices: dict[str, list[SliceRow]] = field(default_factory=dict)
    """Descriptive only (`runner.evidence.slices`): by tool calls, turns, family, window, category."""
    unfinished_input_tokens: int = 0
    unfinished_output_tokens: int = 0
    unfinished_cost_usd: float = 0.0
    """Failed calls, and calls of episodes that failed or were interrupted: spent, shown apart, never
    divided by the finished episodes."""
    estimated_calls: int = 0
    """Calls whose tokens are an estimate (the provider sent no usage)."""
    end_reasons: dict[str, int] = field(default_factory=dict)
    """Finished episodes by how they ended: finished, turn_limit, context_length (the model's own
    limit, scored as the agent's), ..."""
    audits: StreamAudits | None = None
    """State audits and unsafe writes over the stream's retail and banking episodes (None: none audited)."""
    cache: CacheFigures = field(default_factory=CacheFigures)
    """Prompt caching over every call the stream sent: hit rate, writes, spend saved (`runner.cache_savings`)."""


@dataclass(frozen=True)
class Provenance:
    """Where a run's numbers come from: enough to reproduce it or to tell two runs apart."""

    config: dict[str, Any]
    config_hash: str
    dataset_path: str
    dataset_fingerprint: str
    code_version: str
    models: dict[str, Any] = field(default_factory=dict)
    """Each model with the prices its calls were charged (`runner.evidence.provenance`)."""
    machine: dict[str, Any] | None = None
    """The machine the run started on (None for runs journaled before it was recorded)."""
    plan: dict[str, Any] | None = None
    """The locked plan the run followed (`run --plan`): its hashes and amendments."""


@dataclass(frozen=True)
class Report:
    run_id: str
    status: str
    stop_reason: str
    journal: str
    created_at: float
    budget_usd: float | None
    cost_usd: Costs
    """Run-wide, including calls no unit or stream claims."""
    streams: list[StreamReport]
    provenance: Provenance
    bootstrap: dict[str, Any] = field(default_factory=dict)
    """How the intervals were drawn (draws, seed, level, what is resampled)."""
    replicas: list[ReplicaUse] = field(default_factory=list)
    """Calls per replica of each endpoint pool (none when no model is served by a pool)."""
    cache: CacheFigures = field(default_factory=CacheFigures)
    """Prompt caching over every call the run sent, probes included."""


# ---------------------------------------------------------------- reading the journal

StreamKey = tuple[str, str]


@dataclass
class _Mean:
    n: int = 0
    total: float = 0.0

    def add(self, n: int, total: float) -> None:
        self.n += n
        self.total += total

    def score(self) -> float | None:
        return 100 * self.total / self.n if self.n else None


@dataclass
class _Usage:
    input_tokens: int = 0
    output_tokens: int = 0
    finished_cost: dict[str, float] = field(default_factory=dict)
    cost: dict[str, float] = field(default_factory=dict)
    """All spend by purpose, unfinished included."""
    unfinished_input_tokens: int = 0
    unfinished_output_tokens: int = 0
    unfinished_cost: float = 0.0
    estimated_calls: int = 0

    def add(self, purpose: str, input_tokens: int, output_tokens: int, cost: float, finished: bool = True) -> None:
        self.cost[purpose] = self.cost.get(purpose, 0.0) + cost
        if finished:
            self.input_tokens += input_tokens
            self.output_tokens += output_tokens
            self.finished_cost[purpose] = self.finished_cost.get(purpose, 0.0) + cost
        else:
            self.unfinished_input_tokens += input_tokens
            self.unfinished_output_tokens += output_tokens
            self.unfinished_cost += cost


@dataclass
class _Rows:
    run: RunRow
    planned: list[PlannedSetting]
    scores: list[TestScore]
    episodes: list[EpisodeCost]
    calls: list[CallUsage]
    spend: Spend
    outcomes: list[TestOutcome]
    machine: str | None
    ends: list[EpisodeEnd]
    cache: list[CacheUsage] = field(default_factory=list)
    audits: dict[StreamKey, StreamAudits] = field(default_factory=dict)
    replicas: list[ReplicaCalls] = field(default_factory=list)
    served: list[tuple[str, str]] = field(default_factory=list)
    """(model, the version its provider said served it), each pair once."""


async def build_report(journal_path: Path | str, run_id: str) -> Report:
    """Read one run from the journal; raise ShiftbenchInputError when the run is not there."""
    async with read_only(journal_path) as reader:
        rows = await _fetch(reader, Path(journal_path), run_id)
    return _assemble(rows, str(journal_path))


async def _fetch(reader: Reader, path: Path, run_id: str) -> _Rows:
    run = await reader.run(run_id)
    if run is None:
        raise ShiftbenchInputError(f"{path}: no run '{run_id}' in this journal; "
                                   f"`shiftbench runs --journal {path}` lists the runs it holds")
    return _Rows(run=run, planned=await reader.planned_settings(run_id), scores=await reader.test_scores(run_id),
                 episodes=await reader.episode_costs(run_id), calls=await reader.call_usage(run_id),
                 spend=await reader.spend(run_id), outcomes=await reader.test_outcomes(run_id),
                 machine=await reader.meta(machine_meta_key(run_id)), ends=await reader.episode_ends(run_id),
                 audits=audit_rates(await reader.episode_audits(run_id)),
                 replicas=await reader.replica_calls(run_id), cache=await reader.cache_usage(run_id),
                 served=[pair for key, _ in await reader.meta_prefixed(served_models_prefix(run_id))
                         if (pair := served_model_from_key(run_id, key)) is not None])


# ---------------------------------------------------------------- assembling

def _assemble(rows: _Rows, journal: str) -> Report:
    usage, run_costs = _usage(rows)
    latencies: dict[StreamKey, list[float]] = defaultdict(list)
    for episode in rows.episodes:
        latencies[(episode.model, episode.method)].append(episode.latency_s)
    settings = _settings(rows.planned, rows.scores)
    outcomes = _outcomes(rows.outcomes)
    ends: dict[StreamKey, Counter[str]] = defaultdict(Counter)
    for end in rows.ends:
        ends[(end.model, end.method)][end.end_reason] += 1
    streams = [_with_evidence(_stream(key, scenario_settings, usage.get(key, _Usage()), latencies.get(key, []),
                                      rows.audits.get(key)),
                              outcomes.get(key, []))
               for key, scenario_settings in settings.items()]
    run = rows.run
    prices = run_price_table(run.config)
    cache = cache_by_stream(rows.cache, prices)
    streams = [replace(s, end_reasons=dict(ends[(s.model, s.method)].most_common()),
                       cache=cache.get((s.model, s.method), CacheFigures())) for s in streams]
    return Report(run_id=run.run_id, status=run.status, stop_reason=run.stop_reason,
                  journal=journal, created_at=run.created_at, budget_usd=run.budget_usd,
                  cost_usd=Costs.of(run_costs), streams=streams, provenance=_provenance(run, rows.machine, rows.served),
                  bootstrap=asdict(DEFAULT_SPEC),
                  replicas=[ReplicaUse(r.model, r.replica, r.answered, r.failed) for r in rows.replicas],
                  cache=cache_total(rows.cache, prices))


def _provenance(run: RunRow, machine: str | None, served: list[tuple[str, str]]) -> Provenance:
    try:
        config = orjson.loads(run.config)
    except orjson.JSONDecodeError:
        config = None
    return Provenance(config=config if isinstance(config, dict) else {}, config_hash=run.config_hash,
                      dataset_path=run.dataset_path, dataset_fingerprint=run.dataset_fingerprint,
                      code_version=run.code_version, **provenance_extras(run, machine, served))


def _outcomes(rows: list[TestOutcome]) -> dict[StreamKey, list[Outcome]]:
    outcomes: dict[StreamKey, list[Outcome]] = defaultdict(list)
    for row in rows:
        outcomes[(row.model, row.method)].append(Outcome(*row))
    return outcomes


def _with_evidence(stream: StreamReport, outcomes: list[Outcome]) -> StreamReport:
    """The stream with its family bootstrap intervals (`runner.evidence.bootstrap`) and slices."""
    if not outcomes:
        return stream
    draws = stream_draws(task_values(outcomes), DEFAULT_SPEC)

    def ci(setting: str, category: str, window: int | None = None) -> Pair:
        found = draws.setting_interval(setting, (category, window))
        return None if found is None else found.as_list()

    settings = {name: replace(setting, hidden_ci=ci(name, "hidden"), fully_specified_ci=ci(name, "fully_specified"),
                              windows=[replace(w, hidden_ci=ci(name, "hidden", w.window),
                                               fully_specified_ci=ci(name, "fully_specified", w.window))
                                       for w in setting.windows])
                for name, setting in stream.settings.items()}
    avg_h, avg_f = draws.avg_h_interval(), draws.avg_f_interval()
    return replace(stream, settings=settings, avg_h_ci=None if avg_h is None else avg_h.as_list(),
                   avg_f_ci=None if avg_f is None else avg_f.as_list(), repeats=repeat_summary(outcomes),
                   slices=slices(outcomes))


def _usage(rows: _Rows) -> tuple[dict[StreamKey, _Usage], dict[str, float]]:
    """Tokens and spend per stream (the same rule as the run's `Spend`), and spend per purpose for the run."""
    usage: dict[StreamKey, _Usage] = defaultdict(_Usage)
    for call in rows.calls:
        if call.model is not None and call.method is not None:
            stream = usage[(call.model, call.method)]
            stream.add(call.purpose, call.input_tokens, call.output_tokens, call.cost_usd, call.finished)
            stream.estimated_calls += call.estimated_calls
    if not rows.spend.agent_calls_journaled:
        for episode in rows.episodes:
            usage[(episode.model, episode.method)].add("agent", episode.input_tokens, episode.output_tokens,
                                                       episode.cost_usd)
    return usage, rows.spend.by_purpose


def _settings(planned: list[PlannedSetting], scores: list[TestScore]) -> dict[StreamKey, dict[str, Setting]]:
    windows: dict[tuple[str, str, str], dict[int, dict[str, _Mean]]] = defaultdict(
        lambda: defaultdict(lambda: defaultdict(_Mean)))
    for score in scores:
        windows[(score.model, score.method, score.scenario)][score.window][score.category].add(score.n, score.total)
    result: dict[StreamKey, dict[str, Setting]] = {}
    for row in planned:
        by_window = windows.get((row.model, row.method, row.scenario), {})
        result.setdefault((row.model, row.method), {})[row.scenario] = _setting(by_window, row.planned, row.done)
    return {key: dict(sorted(value.items(), key=lambda item: scenario_sort_key(item[0])))
            for key, value in result.items()}


def _setting(by_window: Mapping[int, Mapping[str, _Mean]], planned: int, done: int) -> Setting:
    hidden, specified = _Mean(), _Mean()
    window_scores = []
    for window, categories in sorted(by_window.items()):
        window_hidden = categories.get("hidden", _Mean())
        window_specified = categories.get("fully_specified", _Mean())
        hidden.add(window_hidden.n, window_hidden.total)
        specified.add(window_specified.n, window_specified.total)
        window_scores.append(WindowScore(window, window_hidden.score(), window_specified.score(),
                                         sum(mean.n for mean in categories.values())))
    return Setting(hidden=hidden.score(), fully_specified=specified.score(),
                   n=sum(score.n for score in window_scores), planned=planned, complete=done >= planned,
                   windows=window_scores)


def _stream(key: StreamKey, settings: dict[str, Setting], usage: _Usage, latencies: list[float],
            audits: StreamAudits | None) -> StreamReport:
    episodes = len(latencies)
    costs = Costs.of(usage.cost)
    return StreamReport(
        model=key[0], method=key[1], complete=all(s.complete for s in settings.values()),
        avg_h=_mean(s.hidden for s in settings.values()),
        avg_f=_mean(s.fully_specified for name, s in settings.items() if _domain(name) in SPECIFIED_DOMAINS),
        settings=settings,
        test_done=sum(s.n for s in settings.values()), test_planned=sum(s.planned for s in settings.values()),
        episodes=episodes, input_tokens=usage.input_tokens, output_tokens=usage.output_tokens,
        input_tokens_per_task=usage.input_tokens / episodes if episodes else None,
        output_tokens_per_task=usage.output_tokens / episodes if episodes else None,
        cost_usd=costs, cost_per_task_usd=Costs.of(usage.finished_cost).per(episodes),
        unfinished_input_tokens=usage.unfinished_input_tokens, unfinished_output_tokens=usage.unfinished_output_tokens,
        unfinished_cost_usd=usage.unfinished_cost, estimated_calls=usage.estimated_calls,
        latency_p50_s=percentile(latencies, 50), latency_p95_s=percentile(latencies, 95), audits=audits)


def _mean(values: Iterable[float | None]) -> float | None:
    present = [value for value in values if value is not None]
    return sum(present) / len(present) if present else None


def _domain(scenario: str) -> str:
    return scenario.split("_")[0]


def scenario_sort_key(scenario: str) -> tuple[int, str]:
    """FORMAT.md's order: retail, banking, pitch, then any other domain by name."""
    domain = _domain(scenario)
    rank = DOMAIN_ORDER.index(domain) if domain in DOMAIN_ORDER else len(DOMAIN_ORDER)
    return rank, scenario


def percentile(values: Sequence[float], q: float) -> float | None:
    """Linear interpolation between closest ranks (numpy's default), None for no values."""
    if not values:
        return None
    ordered = sorted(values)
    rank = (len(ordered) - 1) * q / 100
    low = math.floor(rank)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (rank - low)


# ---------------------------------------------------------------- rendering
# Every renderer returns text without a final newline: callers print it.

Table = tuple[list[str], list[list[str]]]


def render_json(report: Report) -> str:
    """The report sealed: a `sha256` over its canonical content (`runner.evidence.seal`)."""
    return orjson.dumps(seal(asdict(report)), option=orjson.OPT_INDENT_2).decode()


def render_text(report: Report, with_slices: bool = False) -> str:
    parts = [_heading(report), ""]
    for title, (headers, rows), align in _sections(report):
        parts += [title, text_table(headers, rows, align), ""]
    if any(s.repeats for s in report.streams):
        parts += ["Repeats (Avg H / Avg F of each repeat; spread = largest - smallest; pass^k = share of tasks "
                  "solved in all of their first k tries)", text_table(*_repeat_table(report), "llrllrr"), ""]
    if with_slices:
        parts += ["Slices (descriptive only: chosen after looking, they decide nothing)",
                  text_table(*_slice_table(report), "llllrr"), ""]
    return "\n".join(parts).rstrip()


def _repeat_table(report: Report) -> Table:
    headers = ["model", "method", "repeats", "Avg H by repeat", "Avg F by repeat", "H spread", "pass^k (k=1..K)"]
    rows = []
    for s in report.streams:
        if s.repeats is None:
            continue
        r = s.repeats
        rows.append([s.model, s.method, str(r.repeats), " ".join(_score(v) for v in r.avg_h_by_repeat),
                     " ".join(_score(v) for v in r.avg_f_by_repeat), _score(r.avg_h_spread),
                     " ".join("-" if v is None else f"{v:.3f}" for v in r.pass_k.values())])
    return headers, rows


def _slice_table(report: Report) -> Table:
    headers = ["model", "method", "by", "slice", "n", "score"]
    rows = [[s.model, s.method, dimension, row.bucket, str(row.n), _score(row.score)]
            for s in report.streams for dimension, found in s.slices.items() for row in found]
    return headers, rows


def render_markdown(report: Report) -> str:
    parts = [f"# Run {report.run_id}", "", _heading(report).replace("\n", "  \n"), ""]
    for title, table, _ in _sections(report):
        parts += [f"## {title}", "", _markdown_table(*table), ""]
    return "\n".join(parts).rstrip()


def render_csv(report: Report) -> str:
    """One row per stream, one column group per setting: a leaderboard to paste into a sheet."""
    scenarios = sorted({name for stream in report.streams for name in stream.settings}, key=scenario_sort_key)
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(_csv_header(scenarios))
    for stream in report.streams:
        writer.writerow(_csv_row(report, stream, scenarios))
    return buffer.getvalue().rstrip("\n")


def render_window_csv(report: Report) -> str:
    """One row per (stream, setting, window): the learning curves as numbers, with their intervals."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(["run_id", "model", "method", "setting", "window", "h", "h_ci_lo", "h_ci_hi", "f", "f_ci_lo",
                     "f_ci_hi", "n"])
    for stream in report.streams:
        for name, setting in stream.settings.items():
            for w in setting.windows:
                writer.writerow([report.run_id, stream.model, stream.method, name, str(w.window), _raw(w.hidden),
                                 *_raw_pair(w.hidden_ci), _raw(w.fully_specified), *_raw_pair(w.fully_specified_ci),
                                 str(w.n)])
    return buffer.getvalue().rstrip("\n")


def _heading(report: Report) -> str:
    status = report.status + (f" ({report.stop_reason})" if report.stop_reason else "")
    cost = report.cost_usd
    spend = (f"spend ${cost.total:.4f} (agent ${cost.agent:.4f}, judge ${cost.judge:.4f}, "
             f"method ${cost.method:.4f})")
    if report.budget_usd is not None:
        spend += f" of cap ${report.budget_usd:.2f}"
    return "\n".join([f"run {report.run_id}: {status}", f"journal {report.journal}", spend,
                      f"prompt cache: {cache_summary(report.cache)}", *_evidence_lines(report)])


def cache_summary(cache: CacheFigures) -> str:
    """One line: hit rate, tokens written, spend saved (the heading, the HTML page, the pilot)."""
    return (f"hit rate {_percent(cache.hit_rate)} ({cache.cached_input_tokens:,} of {cache.input_tokens:,} input "
            f"tokens read from cache), {cache.cache_write_tokens:,} written, ${cache.saved_usd:.4f} saved "
            "against uncached prices")


def _percent(rate: float | None) -> str:
    return "-" if rate is None else f"{100 * rate:.1f}%"


def _evidence_lines(report: Report) -> list[str]:
    """How sure the numbers are and where they come from: the bootstrap, the provenance, the plan."""
    lines = []
    if report.bootstrap:
        b = report.bootstrap
        lines.append(f"intervals: {b['level']:.0%} bootstrap, {b['unit']} resampled, {b['draws']} draws, "
                     f"seed {b['seed']}")
    p = report.provenance
    lines.append(f"provenance: code {p.code_version}, dataset {p.dataset_fingerprint[:12]}, "
                 f"config {p.config_hash[:12]}")
    lines += [f"served: {name} as {', '.join(model['served_as'])}" for name, model in p.models.items()
              if model.get("served_as")]
    plan = p.plan
    if plan:
        lines.append(f"plan: {plan['file']} sha256 {plan['hash'][:12]}, now {plan['head'][:12]} "
                     f"({len(plan['amendments'])} amendments)")
        lines += [f"  amendment {a['hash'][:12]} {a['at']}: {a['reason']} "
                  f"(sets {', '.join(f'{k}={v}' for k, v in a['sets'].items())})" for a in plan["amendments"]]
    return lines


def _sections(report: Report) -> list[tuple[str, Table, str]]:
    return [
        ("Scores (mean reward x 100 over test tasks; H hidden, F fully specified; 95% intervals)",
         _score_table(report), "llrrrrrl"),
        ("Tokens, cost and latency (per task = per finished episode, serving included; failed and "
         "interrupted attempts apart; est. = calls whose tokens were estimated, the provider sent no usage)",
         _cost_table(report), "llrrrrrrrrrrrrr"),
        ("Prompt cache (every call sent; hit rate = cached / all input tokens; saved = the same tokens at "
         "the plain input price minus what they cost, at the run's prices)", _cache_table(report), "llrrrrr"),
        ("End reasons (finished episodes; context_length is the model's own limit, scored as the agent's)",
         _end_table(report), "lll"),
        ("Settings", _setting_table(report), "lllrrrrr"),
        ("Windows", _window_table(report), "lllrrrrrr"),
        *([("State audits (retail and banking episodes; % with exact 95% interval; unsafe writes: "
            "proposed / executed / state-changing)", _audit_table(report), "llrllllr")]
          if any(s.audits for s in report.streams) else []),
        *([("Endpoint pools (model calls per replica: answered, and failed on it last)", _replica_table(report),
            "llrr")] if report.replicas else []),
    ]


def _replica_table(report: Report) -> Table:
    rows = [[r.model, r.replica, str(r.answered), str(r.failed)] for r in report.replicas]
    return ["model", "replica", "answered", "failed"], rows


def _cache_table(report: Report) -> Table:
    headers = ["model", "method", "input tok", "cached tok", "hit rate", "cache writes", "saved $"]

    def row(model: str, method: str, c: CacheFigures) -> list[str]:
        return [model, method, f"{c.input_tokens:,}", f"{c.cached_input_tokens:,}", _percent(c.hit_rate),
                f"{c.cache_write_tokens:,}", f"{c.saved_usd:.4f}"]

    rows = [row(s.model, s.method, s.cache) for s in report.streams]
    return headers, [*rows, row("(run)", "all calls", report.cache)]


def _end_table(report: Report) -> Table:
    rows = [[s.model, s.method, ", ".join(f"{reason} {n}" for reason, n in s.end_reasons.items()) or "-"]
            for s in report.streams]
    return ["model", "method", "episodes by end reason"], rows


def _score(value: float | None) -> str:
    return "-" if value is None else f"{value:.1f}"


def _state(stream: StreamReport) -> str:
    return "complete" if stream.complete else f"partial {stream.test_done}/{stream.test_planned}"


def _interval(pair: Pair) -> str:
    return "-" if pair is None else f"[{pair[0]:.1f}, {pair[1]:.1f}]"


def _score_table(report: Report) -> Table:
    headers = ["model", "method", "Avg H", "H interval", "Avg F", "F interval", "test", "state"]
    rows = [[s.model, s.method, _score(s.avg_h), _interval(s.avg_h_ci), _score(s.avg_f), _interval(s.avg_f_ci),
             str(s.test_done), _state(s)]
            for s in report.streams]
    return headers, rows


def _cost_table(report: Report) -> Table:
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


def _audit_table(report: Report) -> Table:
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
    rows = [[s.model, s.method, name, _score(setting.hidden), _interval(setting.hidden_ci),
             _score(setting.fully_specified), _interval(setting.fully_specified_ci), f"{setting.n}/{setting.planned}"]
            for s in report.streams for name, setting in s.settings.items()]
    return headers, rows


def _window_table(report: Report) -> Table:
    headers = ["model", "method", "setting", "window", "H", "H interval", "F", "F interval", "n"]
    rows = [[s.model, s.method, name, str(w.window), _score(w.hidden), _interval(w.hidden_ci),
             _score(w.fully_specified), _interval(w.fully_specified_ci), str(w.n)]
            for s in report.streams for name, setting in s.settings.items() for w in setting.windows]
    return headers, rows


def _markdown_table(headers: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    def line(cells: Sequence[str]) -> str:
        return "| " + " | ".join(cell.replace("|", "\\|") for cell in cells) + " |"

    return "\n".join([line(headers), line(["---"] * len(headers)), *(line(row) for row in rows)])


def _csv_header(scenarios: Sequence[str]) -> list[str]:
    per_setting = [f"{name}_{part}" for name in scenarios for part in ("h", "f", "n")]
    return ["run_id", "model", "method", "complete", "avg_h", "avg_f", *per_setting, "episodes",
            "input_tokens_per_task", "output_tokens_per_task", *(f"{p}_usd_per_task" for p in PURPOSES),
            "total_usd_per_task", *(f"{p}_usd" for p in PURPOSES), "total_usd", "unfinished_input_tokens",
            "unfinished_output_tokens", "unfinished_usd", "estimated_calls", "latency_p50_s", "latency_p95_s",
            "avg_h_ci_lo", "avg_h_ci_hi", "avg_f_ci_lo", "avg_f_ci_hi",
            *(f"{name}_{part}_ci_{end}" for name in scenarios for part in ("h", "f") for end in ("lo", "hi")),
            "cache_input_tokens", "cached_input_tokens", "cache_hit_rate", "cache_write_tokens", "cache_saved_usd"]


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
            *_raw_pair(stream.avg_h_ci), *_raw_pair(stream.avg_f_ci), *setting_cis, *_cache_cells(stream.cache)]


def _cache_cells(cache: CacheFigures) -> list[str]:
    return [str(cache.input_tokens), str(cache.cached_input_tokens), _raw(cache.hit_rate),
            str(cache.cache_write_tokens), _raw(cache.saved_usd)]


def _raw_pair(pair: Pair) -> list[str]:
    return ["", ""] if pair is None else [_raw(pair[0]), _raw(pair[1])]


def _raw(value: float | None) -> str:
    # Rounded so float noise (0.21999999999999997) does not land in a spreadsheet.
    return "" if value is None else repr(round(value, 6))
