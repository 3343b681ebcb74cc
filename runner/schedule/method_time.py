"""The time a stream's method took, kept in the journal beside the stream.

Each stream's `context` and `learn` seconds and the boundary its method ran under
(`runner.workers.handle.MethodTimes`) are journaled when the
stream ends in this process, in the meta table under `method_time|RUN|STREAM`, appended to what an
earlier process of the same run journaled, so a resumed run's figures cover all of it (a process
killed outright loses only its own part). The report shows their p50 and p95 beside model latency.
"""

from __future__ import annotations

import anyio
import orjson

from runner.journal import Batch, Journal, Reader
from runner.workers.handle import MethodTimes

__all__ = ["journaled_times", "save_times"]

_PREFIX = "method_time|"


def _key(run_id: str, stream_id: str) -> str:
    return f"{_PREFIX}{run_id}|{stream_id}"


def _parsed(value: str | None) -> MethodTimes:
    try:
        raw = orjson.loads(value) if value else {}
        return MethodTimes([float(s) for s in raw.get("context_s", ())], [float(s) for s in raw.get("learn_s", ())],
                           str(raw.get("boundary", "")))
    except (orjson.JSONDecodeError, AttributeError, TypeError, ValueError):
        return MethodTimes()  # an entry this version cannot read: start again from this process's


async def save_times(journal: Journal, run_id: str, stream_id: str, times: MethodTimes | None) -> None:
    """Append this process's seconds of the stream to the journal's, whatever is cancelling."""
    if times is None or not (times.context_s or times.learn_s or times.boundary):
        return
    with anyio.CancelScope(shield=True):
        stored = _parsed(await journal.read.meta(_key(run_id, stream_id)))
        merged = {"context_s": [round(s, 6) for s in stored.context_s + times.context_s],
                  "learn_s": [round(s, 6) for s in stored.learn_s + times.learn_s],
                  "boundary": times.boundary or stored.boundary}
        await journal.commit(Batch().set_meta(_key(run_id, stream_id), orjson.dumps(merged).decode()))


async def journaled_times(reader: Reader, run_id: str) -> dict[str, MethodTimes]:
    """Each stream's method seconds as the journal holds them, by stream id."""
    prefix = f"{_PREFIX}{run_id}|"
    return {key.removeprefix(prefix): _parsed(value) for key, value in await reader.meta_prefixed(prefix)}
