"""The named queries of the views (`show`, `state`, `export`, the HTML report's failed episodes) and of
`verify`'s re-grading: which episodes match a filter, a run's streams and windows, a stream's checkpoints.

A mixin of `Reader` (runner.journal.reader), kept apart so that module stays one screenful per
concern; like every query of the journal, each is one statement and one round trip.
"""

from __future__ import annotations

from runner.journal.query_group import QueryGroup
from runner.journal.read_rows import EpisodeDetail, EpisodeFilter, StreamOfRun, UnitOfRun
from runner.journal.rows import CheckpointKey

__all__ = ["ViewQueries"]

_UNIT_COLUMNS = ("unit_id", "stream_id", "model", "method", "scenario", "phase", "window", "task_id", "replica")
_PAID_COLUMNS = ("input_tokens", "cached_input_tokens", "output_tokens", "cost_usd")
# An episode's tokens and cost from its journaled calls, every process's: a resumed episode's own row counts
# only what the resuming process paid (its earlier answers replay free). The offline model journals no
# calls: its episode row stands.
_PAID = ("coalesce((SELECT sum(c.{0}) FROM model_calls c WHERE c.run_id = e.run_id AND c.unit_id = e.unit_id "
         "AND c.from_cache = 0 AND c.status = 'ok'), e.{0}) AS {0}")


def _detail_column(name: str) -> str:
    if name in _UNIT_COLUMNS:
        return f"u.{name}"
    return _PAID.format(name) if name in _PAID_COLUMNS else f"e.{name}"


_EPISODE_DETAIL_COLUMNS = ", ".join(_detail_column(name) for name in EpisodeDetail._fields)
_EPISODE_WHERE = """
WHERE e.run_id = ? AND (? IS NULL OR u.unit_id = ?) AND (? IS NULL OR u.model = ?) AND (? IS NULL OR u.method = ?)
  AND (? IS NULL OR u.scenario = ?) AND (? IS NULL OR u.window = ?) AND (? IS NULL OR u.phase = ?)
  AND (? IS NULL OR u.replica = ?) AND (? = 0 OR e.reward < 1.0)
"""
_EPISODE_FROM = "FROM episodes e JOIN units u ON u.run_id = e.run_id AND u.unit_id = e.unit_id"
_EPISODE_DETAILS = (f"SELECT {_EPISODE_DETAIL_COLUMNS} {_EPISODE_FROM} {_EPISODE_WHERE} "
                    "ORDER BY u.rowid LIMIT ? OFFSET ?")
_EPISODE_MATCHES = f"SELECT count(*) {_EPISODE_FROM} {_EPISODE_WHERE}"
# Every episode of a run for re-grading, tokens and cost as the episode's own row holds them: `verify`
# reads neither, and summing each episode's calls would read the run's calls once per episode.
_RECORDED_EPISODES = (f"SELECT {', '.join(('u.' if n in _UNIT_COLUMNS else 'e.') + n for n in EpisodeDetail._fields)} "
                      f"{_EPISODE_FROM} WHERE e.run_id = ? ORDER BY u.rowid")
# The first `limit` failed test episodes of every setting (in planning order), and how many there are.
_FAILED_PER_SETTING = f"""
SELECT {", ".join(EpisodeDetail._fields)} FROM (
    SELECT {_EPISODE_DETAIL_COLUMNS}, row_number() OVER (PARTITION BY u.stream_id ORDER BY u.rowid) AS nth
    {_EPISODE_FROM} WHERE e.run_id = ? AND u.phase = 'test' AND e.reward < 1.0
) WHERE nth <= ?
"""
_FAILED_COUNTS = f"""
SELECT u.model, u.method, u.scenario, count(*) {_EPISODE_FROM}
WHERE e.run_id = ? AND u.phase = 'test' AND e.reward < 1.0 GROUP BY u.model, u.method, u.scenario
"""
_STREAMS_OF_RUN = ("SELECT stream_id, model, method, scenario, replica FROM units WHERE run_id = ? "
                   "GROUP BY stream_id ORDER BY min(rowid)")
_WINDOWS_OF_RUN = ("SELECT model, method, scenario, phase, window, count(*), replica FROM units WHERE run_id = ? "
                   "GROUP BY model, method, scenario, phase, window, replica ORDER BY min(rowid)")
_UNIT_OF_RUN = "SELECT unit_id FROM units WHERE run_id = ? AND unit_id = ?"
_CHECKPOINT_LABELS = "SELECT label FROM checkpoints WHERE run_id = ? AND stream_id = ?"


class ViewQueries(QueryGroup):
    """The views' queries; `Reader` supplies `_rows`."""

    async def episode_details(self, run_id: str, where: EpisodeFilter, limit: int = -1,
                              offset: int = 0) -> list[EpisodeDetail]:
        """Finished episodes matching `where`, in planning order (`limit` -1: all of them)."""
        rows = await self._rows(_EPISODE_DETAILS, (run_id, *where.params(), limit, offset))
        return [EpisodeDetail._make(row) for row in rows]

    async def recorded_episodes(self, run_id: str) -> list[EpisodeDetail]:
        """Every finished episode with its record and grade, in planning order, for re-grading without a
        model (tokens and cost as the episode row stored them: what its last process paid)."""
        return [EpisodeDetail._make(row) for row in await self._rows(_RECORDED_EPISODES, (run_id,))]

    async def episode_matches(self, run_id: str, where: EpisodeFilter) -> int:
        return int((await self._rows(_EPISODE_MATCHES, (run_id, *where.params())))[0][0])

    async def failed_per_setting(self, run_id: str, limit: int) -> list[EpisodeDetail]:
        """The first `limit` failed test episodes of every (model, method, scenario)."""
        return [EpisodeDetail._make(row) for row in await self._rows(_FAILED_PER_SETTING, (run_id, limit))]

    async def failed_counts(self, run_id: str) -> dict[tuple[str, str, str], int]:
        """(model, method, scenario) -> failed test episodes."""
        return {(row[0], row[1], row[2]): int(row[3]) for row in await self._rows(_FAILED_COUNTS, (run_id,))}

    async def streams_of_run(self, run_id: str) -> list[StreamOfRun]:
        """A run's streams in planning order."""
        return [StreamOfRun._make(row) for row in await self._rows(_STREAMS_OF_RUN, (run_id,))]

    async def units_of_run(self, run_id: str) -> list[UnitOfRun]:
        """What a run planned, grouped by stream, phase and window (planned or not yet run alike), in
        planning order: what a filter can name."""
        return [UnitOfRun(str(row[0]), str(row[1]), str(row[2]), str(row[3]), int(row[4]), int(row[5]),
                          int(row[6]))
                for row in await self._rows(_WINDOWS_OF_RUN, (run_id,))]

    async def has_unit(self, run_id: str, unit_id: str) -> bool:
        return bool(await self._rows(_UNIT_OF_RUN, (run_id, unit_id)))

    async def checkpoint_keys(self, run_id: str, stream_id: str) -> list[CheckpointKey]:
        return [CheckpointKey.from_label(row[0]) for row in await self._rows(_CHECKPOINT_LABELS, (run_id, stream_id))]
