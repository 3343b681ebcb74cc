"""The journal: one SQLite file (WAL) that is the single source of truth of every run, and the only
place in shiftbench that holds SQL (a test fails on SQL anywhere else in the source or `bench/`).

    async with open_journal(path) as journal:                      # writer task + its own reader
        await journal.commit(Batch(urgent=True).episode(row).unit_done(run_id, unit_id))
        await journal.enqueue(Batch().model_call(call))           # not awaited: durable before any
                                                                   # batch committed after it
        handed = await journal.hand_over(block_batch)              # go on; `await handed.durable()`
                                                                   # before anything that needs it
        done = await journal.read.done_units(run_id, stream_id)    # committed rows only
    async with read_only(path) as reader:                          # reports, `runs`: no writer
        spend = await reader.spend(run_id)

Modules: `schema` (tables, SCHEMA_VERSION, opening connections; another version is refused with one
line), `media` (where a journal lies: readers that leave no file beside it and work on read-only media,
writers refused there with a line that says so, a damaged journal's line and what to try), `rows`
(typed rows written, `CheckpointKey`), `read_rows` (typed rows the queries return, one per concept read:
an episode with its unit is `EpisodeDetail` for the views, `verify` and export alike; `EpisodeFilter`,
`Spend`), `batch` (`Batch` and its typed writers), `reader` (`Reader` and its named queries, with the
views' in `view_queries`, those over model calls in `call_queries` and the retries' in `retry_queries`,
the notebook API's in `analysis_queries`; each a `query_group.QueryGroup` over Reader's `_rows`),
`writer` (`Journal`: one writer task, group commit, urgent batches first, a shielded commit, a bad batch
fails only its caller), `merge` (`write_merged`, `unit_results`: shard journals of one sweep copied into
one new journal, `shiftbench journal merge`), `housekeeping` (`runs rm` and `journal vacuum`),
`call_tallies` (a run's calls per stream and per endpoint replica, as reports and `runs` show them),
`batch_journal` (the provider batches of `--batch tests`: `provider_batches`, `open_batches`,
`batch_items`, `unused_answers`, `failed_tries`), `meta_keys` and `sweep_record` (what a run's meta rows
say: its machine, the model versions that served it, the sweep and shard it belongs to), `lease` (which
host and process write a run now).

Writers (`Batch` methods, chainable): `new_run(NewRun, units)`, `run_started`, `run_stopping`, `run_ended`,
`run_config`,
`episode(EpisodeRow)`, `unit_done`, `checkpoint(run_id, stream_id, CheckpointKey, position, state)`,
`model_call(ModelCallRow)`, `cached_answer`, `set_meta`; batches: `provider_batch`, `batch_created`,
`batch_status`, `batch_item_result`; `lease_swap`, `delete_run` (`runs rm`); audits:
`episode_audit(EpisodeAuditRow)` (with its episode), `audit(AuditRow)`, `audit_case(AuditCaseRow)`,
`audit_status`. `vacuum(path)` gives a deleted run's pages back to the disk.

Named queries (`Reader` methods; `journal.read` or `read_only(path)`):
- the runner: `run`, `done_units`, `checkpoint`, `serving_records_after`, `finished_episodes`,
  `episode_count`, `model_call_count`, `spend`, `finished_spend`;
- the response cache: `cached_units` (at run start), `cached_answers` (once per unit when its episode
  asks its first question; a unit without cached rows never reads);
- `runs`: `runs`, `unit_progress`, `stream_names`, `spend_by_run`;
- reports: `planned_settings`, `test_scores`, `episode_costs`, `episode_ends`, `stream_episodes`;
- model calls (`call_queries`): `call_usage`, `replica_calls` (an endpoint pool's calls per replica),
  `cache_usage`, `stream_calls`, `episode_calls` and `method_calls` (what projections measure);
- evidence (intervals, compare, gate): `test_outcomes`, `meta`; `verify`: `recorded_episodes`;
- audits: `episode_audits` (state audits with their stream), `audit`, `audit_cases` (a resume skips them);
- transcripts, state and export (`runner/views/`): `episode_details` / `episode_matches` (an
  `EpisodeFilter`), `failed_per_setting`, `failed_counts`, `streams_of_run`, `checkpoint_keys`;
- the notebook API (`runner.analysis`, `analysis_queries`): `episode_figures`, `model_calls`.
"Spent" has one definition: `Spend` (calls by purpose; the episodes' agent cost when a run journaled
no agent calls), returned by `spend` and `spend_by_run`.

Adding one: a writer is a `Batch` method that appends `self._add("kind", SQL, params)` with its SQL as
a module constant in `batch.py` (a row with many columns gets a NamedTuple in `rows.py` whose fields
are the columns in order, so the row is its own parameters); a query is a `Reader` method over
`self._rows(SQL, params)` returning a NamedTuple of `read_rows.py` (or a set/dict/int), its SQL a module
constant beside it (`reader.py` or the mixin of its concern). A schema change bumps SCHEMA_VERSION.
`Batch.add` and `Journal.fetchall` / `fetchone` take raw SQL for tests only (planting rows or faults,
ad-hoc assertions).

Meters (bench/): `journal.commits`, `journal.batches`, `journal.writer_s` (time inside transactions),
and `journal.observe(JournalObserver)` for every commit's wait, hand-over and read.

Arrows: journal -> common.
"""

from runner.journal.batch import STOPPING, Batch, Statement
from runner.journal.media import JournalError, JournalFull, recover_hint, refuse_read_only_journal
from runner.journal.read_rows import (
    CacheUsage,
    CallUsage,
    EpisodeCalls,
    EpisodeCost,
    EpisodeDetail,
    EpisodeEnd,
    EpisodeFilter,
    FinishedEpisode,
    FinishedSpend,
    MethodCalls,
    PlannedSetting,
    ReplicaCalls,
    RunRow,
    Spend,
    StoredCheckpoint,
    StoredEpisodeAudit,
    StreamCalls,
    StreamEpisodes,
    StreamNames,
    StreamOfRun,
    StreamRetries,
    TestOutcome,
    TestScore,
    UnitOfRun,
    UnitProgress,
)
from runner.journal.reader import Reader, round_trip_us
from runner.journal.rows import (
    AuditCaseRow,
    AuditRow,
    CheckpointKey,
    EpisodeAuditRow,
    EpisodeRow,
    ModelCallRow,
    NewRun,
    UnitRow,
)
from runner.journal.schema import SCHEMA_VERSION, connect_sync, refuse_foreign_database, vacuum
from runner.journal.writer import Handed, Journal, JournalObserver, open_journal, read_only

__all__ = [
    "AuditCaseRow",
    "AuditRow",
    "EpisodeAuditRow",
    "StoredEpisodeAudit",
    "SCHEMA_VERSION",
    "STOPPING",
    "Batch",
    "CacheUsage",
    "StreamCalls",
    "CallUsage",
    "CheckpointKey",
    "EpisodeCost",
    "EpisodeDetail",
    "EpisodeFilter",
    "EpisodeCalls",
    "EpisodeEnd",
    "EpisodeRow",
    "FinishedEpisode",
    "MethodCalls",
    "FinishedSpend",
    "Handed",
    "Journal",
    "JournalError",
    "JournalFull",
    "JournalObserver",
    "ModelCallRow",
    "NewRun",
    "PlannedSetting",
    "Reader",
    "ReplicaCalls",
    "RunRow",
    "Spend",
    "Statement",
    "StoredCheckpoint",
    "StreamEpisodes",
    "StreamNames",
    "StreamRetries",
    "TestOutcome",
    "StreamOfRun",
    "TestScore",
    "UnitOfRun",
    "UnitProgress",
    "UnitRow",
    "connect_sync",
    "open_journal",
    "read_only",
    "round_trip_us",
    "refuse_foreign_database",
    "recover_hint",
    "refuse_read_only_journal",
    "vacuum",
]
