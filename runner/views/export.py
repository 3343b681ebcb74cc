"""`shiftbench export RUN_ID --format jsonl --out DIR`: every finished episode of a run, one JSON line each.

Read one stream at a time, so a full sweep (tens of thousands of episodes) never sits in memory at
once, and written to a temporary file renamed into place at the end: an interrupted export leaves no
half file. The Inspect format lives in `runner.views.inspect_export` (the `inspect` extra).
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import AsyncIterator
from pathlib import Path

import orjson

from runner.files import shared_mode
from runner.journal import EpisodeFilter, Reader, StreamOfRun, read_only
from runner.views.episodes import require_run, transcript_of
from runner.views.transcript import Transcript, transcript_data

__all__ = ["export_jsonl", "stream_transcripts"]


async def stream_transcripts(reader: Reader, run_id: str,
                             stream: StreamOfRun) -> list[Transcript]:
    where = EpisodeFilter(model=stream.model, method=stream.method, scenario=stream.scenario, replica=stream.replica)
    return [transcript_of(run_id, row) for row in await reader.episode_details(run_id, where)]


async def _by_stream(path: Path, run_id: str) -> AsyncIterator[tuple[StreamOfRun, list[Transcript]]]:
    async with read_only(path) as reader:
        await require_run(reader, path, run_id)
        for stream in await reader.streams_of_run(run_id):
            yield stream, await stream_transcripts(reader, run_id, stream)


async def export_jsonl(path: Path, run_id: str, out: Path) -> tuple[Path, int]:
    """Write DIR/RUN_ID.jsonl; returns the file and the number of episodes in it."""
    target = out / f"{run_id}.jsonl"
    handle, temporary = tempfile.mkstemp(dir=out, prefix=f".{target.name}.", suffix=".tmp")
    count = 0
    try:
        with os.fdopen(handle, "wb") as file:
            async for _, transcripts in _by_stream(path, run_id):
                for transcript in transcripts:
                    file.write(orjson.dumps(transcript_data(transcript)) + b"\n")
                    count += 1
        os.chmod(temporary, shared_mode())
        os.replace(temporary, target)
    except BaseException:
        os.unlink(temporary)
        raise
    return target, count
