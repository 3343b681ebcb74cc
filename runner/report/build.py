"""Build a run's report from the journal: read every row it needs once, then assemble the model.

Scores follow FORMAT.md "Scores and costs": a setting's score is mean reward x 100 over one scenario's
test episodes of one category, and Avg H / Avg F weigh every setting once whatever its size. A report
stream stays marked partial until every planned test unit of every setting is done, so nobody quotes a
half-run number as final.

Spend by purpose is the journal's `Spend`: `model_calls`, with the episodes' own agent cost standing in
when a run journaled no agent calls, so older or scripted runs still show what the agent spent.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path

import orjson

from runner.audits.rates import StreamAudits, audit_rates
from runner.config.method_provenance import accepted_meta_key, method_meta_key
from runner.cost.cache_savings import CacheFigures, cache_by_stream, cache_total, run_price_table
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
    StreamRetries,
    TestOutcome,
    TestScore,
    read_only,
)
from runner.journal.meta_keys import machine_meta_key, served_model_from_key, served_models_prefix
from runner.journal.sweep_record import SweepRecord, sweep_meta_key
from runner.report.batch_figures import batch_figures
from runner.report.method_streams import method_streams
from runner.report.model import (
    SPECIFIED_DOMAINS,
    Costs,
    Pair,
    Provenance,
    ReplicaUse,
    Report,
    RetryCounts,
    Setting,
    StreamKey,
    StreamReport,
    WindowScore,
    percentile,
    scenario_domain,
    scenario_sort_key,
)
from runner.report.provenance import provenance_extras
from runner.report.scores import task_rewards_digest
from runner.stats.bootstrap import DEFAULT_SPEC, Interval, stream_draws
from runner.stats.noise import NOT_MEASURED, noise_floor, replica_count
from runner.stats.outcomes import Outcome, task_values
from runner.stats.repeats import repeat_summary
from runner.stats.replicated import REPLICA_UNIT, stream_intervals
from runner.stats.slices import slices
from simulators.errors import ShiftbenchInputError

__all__ = ["build_report"]


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
    retries: list[StreamRetries] = field(default_factory=list)
    served: list[tuple[str, str]] = field(default_factory=list)
    """(model, the version its provider said served it), each pair once."""
    sweep: str | None = None
    """The sweep record of a merged journal's run (JSON), None for any other run."""
    methods: str | None = None
    method_changes: str | None = None
    """The run's method provenance and accepted changes, as journaled (JSON; None for older runs)."""


async def build_report(journal_path: Path | str, run_id: str) -> Report:
    """Read one run from the journal; raise ShiftbenchInputError when the run is not there."""
    async with read_only(journal_path) as reader:
        rows = await _fetch(reader, Path(journal_path), run_id)
        guests = await method_streams(reader, run_id)
        batched = await batch_figures(reader, run_id, run_price_table(rows.run.config))
    return replace(_assemble(rows, str(journal_path)), method_streams=guests, batch=batched)


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
                 retries=await reader.stream_retries(run_id),
                 served=[pair for key, _ in await reader.meta_prefixed(served_models_prefix(run_id))
                         if (pair := served_model_from_key(run_id, key)) is not None],
                 sweep=await reader.meta(sweep_meta_key(run_id)), methods=await reader.meta(method_meta_key(run_id)),
                 method_changes=await reader.meta(accepted_meta_key(run_id)))


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
                  cost_usd=Costs.of(run_costs), streams=streams, provenance=_provenance(run, rows),
                  bootstrap=_bootstrap_record(streams),
                  replicas=[ReplicaUse(r.model, r.replica, r.answered, r.failed) for r in rows.replicas],
                  retries=RetryCounts.of(rows.retries),
                  cache=cache_total(rows.cache, prices), task_rewards_sha256=task_rewards_digest(rows.outcomes),
                  sweep=None if rows.sweep is None else SweepRecord.from_json(rows.sweep))


def _bootstrap_record(streams: list[StreamReport]) -> dict[str, object]:
    """How the intervals were drawn; with replicas, also how the replicated streams' were."""
    record: dict[str, object] = asdict(DEFAULT_SPEC)
    if any(s.stream_replicas > 1 for s in streams):
        record["replicated_unit"] = REPLICA_UNIT
    return record


def _provenance(run: RunRow, rows: _Rows) -> Provenance:
    try:
        config = orjson.loads(run.config)
    except orjson.JSONDecodeError:
        config = None
    return Provenance(config=config if isinstance(config, dict) else {}, config_hash=run.config_hash,
                      dataset_path=run.dataset_path, dataset_fingerprint=run.dataset_fingerprint,
                      code_version=run.code_version, **provenance_extras(run, rows.machine, rows.served, rows.methods,
                                           rows.method_changes))


def _outcomes(rows: list[TestOutcome]) -> dict[StreamKey, list[Outcome]]:
    outcomes: dict[StreamKey, list[Outcome]] = defaultdict(list)
    for row in rows:
        outcomes[(row.model, row.method)].append(Outcome(*row))
    return outcomes


def _with_evidence(stream: StreamReport, outcomes: list[Outcome]) -> StreamReport:
    """The stream with its bootstrap intervals (families, `runner.stats.bootstrap`; with replicas, replicas
    then families, `runner.stats.replicated`), its noise floor across replicas, and slices."""
    if not outcomes:
        return stream
    families = stream_draws(task_values(outcomes), DEFAULT_SPEC)
    draws = stream_intervals(outcomes, DEFAULT_SPEC, families)

    def ci(setting: str, category: str, window: int | None = None) -> Pair:
        return _pair(families.decided(setting, (category, window)), draws.setting_interval(setting, (category, window)))

    def avg_ci(found: Interval | None, category: str) -> Pair:
        return _pair(families.decided_avg(category), found)

    settings = {name: replace(setting, hidden_ci=ci(name, "hidden"), fully_specified_ci=ci(name, "fully_specified"),
                              windows=[replace(w, hidden_ci=ci(name, "hidden", w.window),
                                               fully_specified_ci=ci(name, "fully_specified", w.window))
                                       for w in setting.windows])
                for name, setting in stream.settings.items()}
    avg_h, avg_f = draws.avg_h_interval(), draws.avg_f_interval()
    noise = noise_floor(outcomes)
    return replace(stream, settings=settings, avg_h_ci=avg_ci(avg_h, "hidden"),
                   avg_f_ci=avg_ci(avg_f, "fully_specified"), repeats=repeat_summary(outcomes),
                   slices=slices(outcomes), stream_replicas=replica_count(outcomes), noise=noise,
                   noise_note="" if noise is not None else NOT_MEASURED)


def _pair(decided: Interval | str | None, bootstrap: Interval | None) -> Pair:
    """Too few families or every task agreeing decide the interval (`StreamDraws.decided`); else the bootstrap's."""
    if isinstance(decided, str):
        return decided
    found = decided or bootstrap
    return None if found is None else found.as_list()


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
        avg_f=_mean(s.fully_specified for name, s in settings.items() if scenario_domain(name) in SPECIFIED_DOMAINS),
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
