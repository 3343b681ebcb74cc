"""`shiftbench export RUN_ID --format jsonl --out DIR`: every finished episode of a run, one JSON line each.

Read one stream at a time, so a full sweep (tens of thousands of episodes) never sits in memory at
once, and written through `runner.common.files.output_folder`: staged, renamed into place at the end, so an
interrupted or failed export (a full disk, a damaged journal) leaves no half file and no folder it made.
The Inspect format lives in `runner.views.inspect_export` (the `inspect` extra).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import orjson

from runner.common.files import output_folder
from runner.journal import EpisodeFilter, Reader, StreamOfRun, read_only
from runner.views.episodes import require_run
from runner.views.filters import check_names
from runner.views.transcript import Transcript, transcript_data

__all__ = ["export_jsonl", "selected_streams", "stream_transcripts"]

EVERY_STREAM = EpisodeFilter()


async def stream_transcripts(reader: Reader, run_id: str,
                             stream: StreamOfRun) -> list[Transcript]:
    where = EpisodeFilter(model=stream.model, method=stream.method, scenario=stream.scenario, replica=stream.replica)
    return [Transcript.of(run_id, row) for row in await reader.episode_details(run_id, where)]


async def selected_streams(reader: Reader, run_id: str, where: EpisodeFilter) -> list[StreamOfRun]:
    """The run's streams that `where` (its model, method, scenario and replica) selects; a name the run
    does not have is refused naming what it has, before anything is written."""
    if where != EVERY_STREAM:
        check_names(run_id, where, await reader.units_of_run(run_id), True)
    return [stream for stream in await reader.streams_of_run(run_id)
            if (where.model is None or (stream.model, stream.method) == (where.model, where.method))
            and where.scenario in (None, stream.scenario) and where.replica in (None, stream.replica)]


async def _by_stream(path: Path, run_id: str,
                     where: EpisodeFilter) -> AsyncIterator[tuple[StreamOfRun, list[Transcript]]]:
    async with read_only(path) as reader:
        await require_run(reader, path, run_id)
        for stream in await selected_streams(reader, run_id, where):
            yield stream, await stream_transcripts(reader, run_id, stream)


async def export_jsonl(path: Path, run_id: str, out: Path, flag: str = "--out",
                       where: EpisodeFilter = EVERY_STREAM) -> tuple[Path, int]:
    """Write OUT/RUN_ID.jsonl (OUT made if absent) with the episodes of the streams `where` selects
    (default every one); returns the file and the number of episodes in it."""
    count = 0
    with output_folder(out, flag) as folder:
        name = f"{run_id}.jsonl"
        with folder.file(name).open("wb") as file:
            async for _, transcripts in _by_stream(path, run_id, where):
                for transcript in transcripts:
                    file.write(orjson.dumps(transcript_data(transcript)) + b"\n")
                    count += 1
    return out / name, count
