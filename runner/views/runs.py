"""`shiftbench runs`: one line per run in a journal, newest first, so a user can pick what to resume or report."""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path

import orjson

from runner.common.tables import text_table, wrap_prose
from runner.cost.cache_savings import CacheFigures, cache_total, run_price_table
from runner.journal import (
    STOPPING,
    CacheUsage,
    ReplicaCalls,
    RunRow,
    Spend,
    StreamNames,
    UnitProgress,
    read_only,
)
from runner.journal.call_tallies import ReplicaUse, RetryCounts
from runner.journal.lease import LEASE_PREFIX, lease_meta_key, live_writer

__all__ = ["RunSummary", "list_runs", "render_runs_json", "render_runs_text"]


@dataclass(frozen=True)
class RunSummary:
    run_id: str
    created_at: float
    status: str
    stop_reason: str
    done: int
    total: int
    """Planned units (serving and test) of every stream."""
    spend_usd: float
    budget_usd: float | None
    models: list[str]
    methods: list[str]
    scenarios: list[str]
    labels: list[str]
    """`run --label TEXT`: what the run was for, in the user's words."""
    cache: CacheFigures = field(default_factory=CacheFigures)
    """Prompt caching over every call the run sent: hit rate, writes, spend saved."""
    replicas: list[ReplicaUse] = field(default_factory=list)
    """Calls per replica of each endpoint pool the run used (empty when none)."""
    retries: list[RetryCounts] = field(default_factory=list)
    """Per stream that sent calls: how many were retried and why (empty for an offline run)."""


def shown_status(status: str, pid: int, lease: str | None, now: float) -> str:
    """A run journaled as running (or stopping) that nobody writes any more (its process killed, crashed, its
    machine rebooted) is shown as such: it is resumable, not running. Its lease decides (`lease`, the meta
    row; a shard's live lease on another host is running, a lapsed one is not); a run journaled before
    leases by its PID on this host."""
    if (status == "running" or status.startswith(STOPPING)) and live_writer(True, pid, "", lease, now) is None:
        return "stopped (process gone; resume it)"
    return status


async def list_runs(journal_path: Path | str) -> list[RunSummary]:
    async with read_only(journal_path) as reader:
        runs = await reader.runs()
        progress = await reader.unit_progress()
        names = _names_by_run(await reader.stream_names())
        spend = await reader.spend_by_run()
        cache = await reader.cache_usage_by_run()
        replicas = await reader.replica_calls_by_run()
        retries = await reader.stream_retries_by_run()
        leases = dict(await reader.meta_prefixed(LEASE_PREFIX))
    now = time.time()
    return [replace(_summary(run, progress.get(run.run_id), names.get(run.run_id),
                             spend.get(run.run_id, Spend()).total, cache.get(run.run_id, []),
                             replicas.get(run.run_id, [])),
                    status=shown_status(run.status, run.pid, leases.get(lease_meta_key(run.run_id)), now),
                    retries=RetryCounts.of(retries.get(run.run_id, [])))
            for run in runs]


def _names_by_run(rows: list[StreamNames]) -> dict[str, tuple[list[str], list[str]]]:
    """Models and methods in planning order, from the units' own columns (names may contain '/')."""
    names: dict[str, tuple[list[str], list[str]]] = {}
    for row in rows:
        models, methods = names.setdefault(row.run_id, ([], []))
        if row.model not in models:
            models.append(row.model)
        if row.method not in methods:
            methods.append(row.method)
    return names


def _summary(run: RunRow, units: UnitProgress | None, names: tuple[list[str], list[str]] | None,
             spend: float, cache: list[CacheUsage], replicas: list[ReplicaCalls]) -> RunSummary:
    # A run that stopped before planning its units still names its models through the config.
    config = _config(run.config)
    models, methods = names if names is not None else (_strings(config.get("models")),
                                                       _strings(config.get("methods")))
    return RunSummary(run_id=run.run_id, created_at=run.created_at, status=run.status,
                      stop_reason=run.stop_reason, done=units.done if units else 0,
                      total=units.total if units else 0, spend_usd=spend, budget_usd=run.budget_usd,
                      models=models, methods=methods, scenarios=_strings(config.get("scenarios")),
                      labels=_strings(config.get("labels")),
                      cache=cache_total(cache, run_price_table(run.config)),
                      replicas=[ReplicaUse(r.model, r.replica, r.answered, r.failed) for r in replicas])


def _config(text: str) -> dict[str, object]:
    try:
        parsed = orjson.loads(text)
    except orjson.JSONDecodeError:
        return {}
    return parsed if isinstance(parsed, dict) else {}


def _strings(value: object) -> list[str]:
    if not isinstance(value, list):
        return []
    return [_name(item) for item in value]


def _name(item: object) -> str:
    if isinstance(item, dict) and "name" in item:
        return str(item["name"])
    return str(item)


def render_runs_json(runs: list[RunSummary]) -> str:
    return orjson.dumps([asdict(run) for run in runs], option=orjson.OPT_INDENT_2).decode()


def render_runs_text(runs: list[RunSummary], width: int | None = None, limit: int | None = None) -> str:
    """The newest `limit` runs (None: all) as a table laid out to `width` (None: natural), and how many
    older ones it left out."""
    if not runs:
        return "no runs in this journal"
    shown = runs if limit is None else runs[:limit]
    table = _runs_table(shown, width)
    if len(shown) == len(runs):
        return table
    return table + "\n" + wrap_prose(f"... {len(runs) - len(shown)} older runs of {len(runs)}; --limit N lists the "
                                     "newest N, --all every one", width)


def _runs_table(runs: list[RunSummary], width: int | None) -> str:
    headers = ["run", "created", "status", "stop reason", "done", "spend", "cache hit / saved", "models",
               "methods", "scenarios", "labels"]
    rows = [[run.run_id, _when(run.created_at), run.status, run.stop_reason or "-", _progress(run), _spend(run),
             _cache(run.cache), ", ".join(run.models), ", ".join(run.methods), _scenarios(run.scenarios),
             ", ".join(run.labels)]
            for run in runs]
    aligns = "llllrrrllll"
    if any(r.retries or r.failed_calls for run in runs for r in run.retries):  # only where a call was retried
        headers.append("retries (timeouts) per stream")
        rows = [[*row, _retries(run.retries)] for row, run in zip(rows, runs, strict=True)]
        aligns += "l"
    if any(run.replicas for run in runs):  # a column only for journals where a pool was used
        headers.append("replicas answered (failed)")
        rows = [[*row, _replicas(run.replicas)] for row, run in zip(rows, runs, strict=True)]
        aligns += "l"
    return text_table(headers, rows, aligns, width, keys=1)


def _retries(retries: list[RetryCounts]) -> str:
    """Per stream, e.g. `smol/blind 34 (34)`; `-` for a run whose streams sent no calls."""
    return ", ".join(f"{r.model}/{r.method} {r.retries} ({r.timeouts})" for r in retries) or "-"


def _replicas(replicas: list[ReplicaUse]) -> str:
    """Counts in the order of the replicas' labels, e.g. `126/51/123 (2)`; the labels are in --json and the
    report."""
    if not replicas:
        return "-"
    failed = sum(r.failed for r in replicas)
    counts = "/".join(str(r.answered) for r in replicas)
    return f"{counts} ({failed})" if failed else counts


def _cache(cache: CacheFigures) -> str:
    if cache.hit_rate is None:
        return "-"
    return f"{100 * cache.hit_rate:.0f}% / ${cache.saved_usd:.2f}"


def _scenarios(names: list[str]) -> str:
    # Nine scenarios would push every other column off the screen: a count stands in for a full sweep.
    return ", ".join(names) if len(names) <= 3 else f"{len(names)} ({names[0]}, ... {names[-1]})"


def _when(timestamp: float) -> str:
    return time.strftime("%Y-%m-%d %H:%M", time.localtime(timestamp))


def _progress(run: RunSummary) -> str:
    percent = 100 * run.done / run.total if run.total else 0.0
    return f"{run.done}/{run.total} ({percent:.0f}%)"


def _spend(run: RunSummary) -> str:
    if run.budget_usd is None:
        return f"${run.spend_usd:.2f}"
    return f"${run.spend_usd:.2f} of ${run.budget_usd:.2f}"
