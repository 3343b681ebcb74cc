"""A `Batch`: rows committed together, atomically, built with one typed writer per kind of row.

Every statement the runner writes is here, named by what it records. A statement carries its `kind`
(the writer's name), so a meter can tell a serving block's checkpoint from a model call without
reading SQL.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple

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

__all__ = ["STOPPING", "Batch", "Statement"]


def _insert(table: str, columns: Sequence[str], constants: str = "") -> str:
    """An INSERT of a row type's fields, in order (so the row is the parameters), plus fixed values."""
    names = ", ".join(columns) + (f", {constants.split('=')[0]}" if constants else "")
    values = ", ".join("?" * len(columns)) + (f", {constants.split('=')[1]}" if constants else "")
    return f"INSERT INTO {table} ({names}) VALUES ({values})"


_NEW_RUN = _insert("runs", NewRun._fields, constants="status='running'")
_UNIT = _insert("units", UnitRow._fields)
_EPISODE = _insert("episodes", EpisodeRow._fields)
_MODEL_CALL = _insert("model_calls", ModelCallRow._fields)
# OR REPLACE: an episode run again (its unit re-queued) carries the audit of the run that counts
_EPISODE_AUDIT = _insert("episode_audits", EpisodeAuditRow._fields).replace("INSERT", "INSERT OR REPLACE", 1)
_AUDIT = _insert("audits", AuditRow._fields).replace("INSERT", "INSERT OR IGNORE", 1)
_AUDIT_CASE = _insert("audit_cases", AuditCaseRow._fields).replace("INSERT", "INSERT OR REPLACE", 1)
_AUDIT_STATUS = "UPDATE audits SET status = ? WHERE audit_id = ?"
_UNIT_DONE = "UPDATE units SET status = 'done', attempts = attempts + 1 WHERE run_id = ? AND unit_id = ?"
_CHECKPOINT = ("INSERT OR REPLACE INTO checkpoints (run_id, stream_id, label, position, state) "
               "VALUES (?, ?, ?, ?, ?)")
_CACHED_ANSWER = ("INSERT OR REPLACE INTO response_cache (request_hash, run_id, unit_id, model, response, "
                  "created_at) VALUES (?, ?, ?, ?, ?, ?)")
_RUN_STARTED = "UPDATE runs SET status = 'running', pid = ? WHERE run_id = ?"
_RUN_ENDED = "UPDATE runs SET status = ?, stop_reason = ?, updated_at = ? WHERE run_id = ?"
_PROVIDER_BATCH = ("INSERT INTO provider_batches (run_id, label, api, endpoint, model, status, items, round, "
                   "resubmission, submitted_at) VALUES (?, ?, ?, ?, ?, 'submitting', ?, ?, ?, ?)")
_BATCH_ITEM = "INSERT INTO batch_items (run_id, label, custom_id, unit_id) VALUES (?, ?, ?, ?)"
_BATCH_CREATED = ("UPDATE provider_batches SET batch_id = ?, status = 'submitted', provider_status = ? "
                  "WHERE run_id = ? AND label = ?")
_BATCH_STATUS = ("UPDATE provider_batches SET status = ?, provider_status = ?, ended_at = ? "
                 "WHERE run_id = ? AND label = ?")
_BATCH_ITEM_RESULT = ("UPDATE batch_items SET status = ?, answer = ?, error = ? "
                      "WHERE run_id = ? AND label = ? AND custom_id = ?")
STOPPING = "stopping: "
"""The status prefix of a run that is stopping: its process still runs (as with 'running')."""
_RUN_CONFIG = "UPDATE runs SET config = ?, budget_usd = ? WHERE run_id = ?"
_META = "INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)"
_META_IF_ABSENT = "INSERT OR IGNORE INTO meta (key, value) VALUES (?, ?)"
_META_IF_UNCHANGED = "UPDATE meta SET value = ? WHERE key = ? AND value = ?"
_OF_AUDITS = "(SELECT audit_id FROM audits WHERE run_id = ?)"
_HOLD = "INSERT INTO budget_holds (run_id, hold_id, request_hash, amount_usd, created_at) VALUES (?, ?, ?, ?, ?)"
_HOLD_LOST = "UPDATE budget_holds SET status = 'lost' WHERE run_id = ? AND hold_id = ?"
_HOLDS_SETTLED = "DELETE FROM budget_holds WHERE run_id = ? AND status = 'open'"
_DELETE_RUN = (
    # the run's audits first: their cases, and the calls and answers journaled under their ids
    f"DELETE FROM audit_cases WHERE audit_id IN {_OF_AUDITS}",
    f"DELETE FROM model_calls WHERE run_id IN {_OF_AUDITS}",
    f"DELETE FROM response_cache WHERE run_id IN {_OF_AUDITS}",
    *(f"DELETE FROM {table} WHERE run_id = ?"
      for table in ("audits", "episode_audits", "response_cache", "checkpoints", "model_calls", "batch_items",
                    "provider_batches", "budget_holds", "episodes", "units", "runs")),
)


class Statement(NamedTuple):
    kind: str
    """The typed writer that made it ('episode', 'checkpoint', 'model_call', ...; 'sql' for `add`)."""
    sql: str
    params: Sequence[Any]


@dataclass
class Batch:
    """Rows committed together, atomically. `many` rows go through executemany."""

    statements: list[Statement] = field(default_factory=list)
    many: list[tuple[str, list[Sequence[Any]]]] = field(default_factory=list)
    urgent: bool = False
    """On the critical path (a serving block): committed ahead of the other batches waiting with it."""

    # ---------------------------------------------------------------------------------- typed writers

    def new_run(self, run: NewRun, units: Iterable[UnitRow]) -> Batch:
        """A run (status 'running') and its planned units."""
        self._add("new_run", _NEW_RUN, run)
        self.many.append((_UNIT, list(units)))
        return self

    def run_started(self, run_id: str, pid: int) -> Batch:
        """The run is this process's now (a resume takes it over)."""
        return self._add("run_status", _RUN_STARTED, (pid, run_id))

    def run_ended(self, run_id: str, status: str, stop_reason: str, at: float) -> Batch:
        """How the run ended: completed, interrupted, budget_exhausted, failed (and why)."""
        return self._add("run_status", _RUN_ENDED, (status, stop_reason, at, run_id))

    def run_stopping(self, run_id: str, why: str, stop_reason: str, at: float) -> Batch:
        """The run is stopping (`stopping: <why>`): shown by `runs` at once, before in-flight work ends."""
        return self._add("run_status", _RUN_ENDED, (f"{STOPPING}{why}", stop_reason, at, run_id))

    def run_config(self, run_id: str, config_json: str, budget_usd: float | None) -> Batch:
        """A resume's new budget cap, in the stored config and its own column."""
        return self._add("run_config", _RUN_CONFIG, (config_json, budget_usd, run_id))

    def episode(self, row: EpisodeRow) -> Batch:
        return self._add("episode", _EPISODE, row)

    def episode_audit(self, row: EpisodeAuditRow) -> Batch:
        """An episode's state audits, committed with its episode."""
        return self._add("episode_audit", _EPISODE_AUDIT, row)

    def audit(self, row: AuditRow) -> Batch:
        """An audit replay (kept as first journaled when it resumes)."""
        return self._add("audit", _AUDIT, row)

    def audit_case(self, row: AuditCaseRow) -> Batch:
        """One audited case's verdict: a resumed audit skips the cases it holds."""
        return self._add("audit_case", _AUDIT_CASE, row)

    def audit_status(self, audit_id: str, status: str) -> Batch:
        return self._add("audit_status", _AUDIT_STATUS, (status, audit_id))

    def unit_done(self, run_id: str, unit_id: str) -> Batch:
        return self._add("unit_done", _UNIT_DONE, (run_id, unit_id))

    def checkpoint(self, run_id: str, stream_id: str, key: CheckpointKey, position: int, state: bytes) -> Batch:
        """A method state (replacing the stream's previous one under the same key)."""
        return self._add("checkpoint", _CHECKPOINT, (run_id, stream_id, key.label, position, state))

    def model_call(self, row: ModelCallRow) -> Batch:
        return self._add("model_call", _MODEL_CALL, row)

    def cached_answer(self, request_hash: str, run_id: str, unit_id: str, model: str, response: bytes,
                      created_at: float) -> Batch:
        """A paid answer, replayed when the same unit asks the same request again."""
        return self._add("cached_answer", _CACHED_ANSWER, (request_hash, run_id, unit_id, model, response,
                                                           created_at))

    def provider_batch(self, run_id: str, label: str, api: str, endpoint: str, model: str,
                       items: Sequence[tuple[str, str]], round_number: int, resubmission: int, at: float) -> Batch:
        """A provider batch about to be created ('submitting', no id yet) and its items ('pending'), as
        (custom_id, unit_id) pairs: on disk before the provider is asked, so a crash leaves its label to
        find. `resubmission`: 1 when its items are second tries of items that failed in an earlier batch (a
        batch holds first tries only or second tries only)."""
        self._add("provider_batch", _PROVIDER_BATCH, (run_id, label, api, endpoint, model, len(items), round_number,
                                                      resubmission, at))
        self.many.append((_BATCH_ITEM, [(run_id, label, custom_id, unit_id) for custom_id, unit_id in items]))
        return self

    def batch_created(self, run_id: str, label: str, batch_id: str, provider_status: str = "") -> Batch:
        """The provider's id of a batch ('submitted'): what a resume polls."""
        return self._add("batch_status", _BATCH_CREATED, (batch_id, provider_status, run_id, label))

    def batch_status(self, run_id: str, label: str, status: str, provider_status: str,
                     ended_at: float | None) -> Batch:
        """A batch 'ended', 'collected' (every result journaled) or 'cancelled'."""
        return self._add("batch_status", _BATCH_STATUS, (status, provider_status, ended_at, run_id, label))

    def batch_item_result(self, run_id: str, label: str, custom_id: str, status: str, answer: bytes | None,
                          error: str) -> Batch:
        """One item's result: 'succeeded' with the encoded answer, or 'errored' / 'expired' / 'canceled'."""
        return self._add("batch_item", _BATCH_ITEM_RESULT, (status, answer, error, run_id, label, custom_id))

    def delete_run(self, run_id: str) -> Batch:
        """Every row of one run, in every table (`runs rm`); other runs' rows are untouched."""
        for sql in _DELETE_RUN:
            self._add("delete_run", sql, (run_id,))
        return self

    def set_meta(self, key: str, value: str) -> Batch:
        return self._add("meta", _META, (key, value))

    def lease_swap(self, key: str, value: str, expected: str | None) -> Batch:
        """A run's lease (`runner.journal.lease`) written only if the row is still `expected` (None: absent):
        of two processes swapping at once, one changes nothing, and reading the row back tells which won."""
        if expected is None:
            return self._add("lease", _META_IF_ABSENT, (key, value))
        return self._add("lease", _META_IF_UNCHANGED, (value, key, expected))

    # ------------------------------------------------------------------------------------- raw SQL

    def budget_hold(self, run_id: str, hold_id: str, request_hash: str, amount_usd: float, at: float) -> Batch:
        """A call's reservation, before it is sent (`budget_holds`)."""
        return self._add("budget_hold", _HOLD, (run_id, hold_id, request_hash, amount_usd, at))

    def budget_holds_judged(self, run_id: str, lost: Iterable[str]) -> Batch:
        """An earlier process's holds: `lost` (no call row settles them) kept as spent, the rest deleted."""
        for hold_id in lost:  # statements run in order, before any `many`: marked, then the rest deleted
            self._add("budget_hold", _HOLD_LOST, (run_id, hold_id))
        return self._add("budget_hold", _HOLDS_SETTLED, (run_id,))

    def add(self, sql: str, params: Sequence[Any] = ()) -> Batch:
        """Raw SQL: for tests that plant rows or faults. Source code adds a typed writer above."""
        return self._add("sql", sql, params)

    def add_many(self, sql: str, rows: Iterable[Sequence[Any]]) -> Batch:
        """Raw SQL over many rows: for tests. Source code adds a typed writer above."""
        self.many.append((sql, list(rows)))
        return self

    def _add(self, kind: str, sql: str, params: Sequence[Any]) -> Batch:
        self.statements.append(Statement(kind, sql, params))
        return self
