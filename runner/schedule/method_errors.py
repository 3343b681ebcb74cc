"""A stream stopped by its method: what is journaled, and the one line its author reads.

When a method's call fails (`runner.workers.failure.MethodFailure`: an exception, a state that is not
JSON, its worker gone, a time limit passed) only its stream stops, with the end reason `method_error`;
the others run on. The failure is journaled in the meta table under `method_error|RUN|STREAM` (the
method, its spec, where in the stream, the call, the method's own frame, the error and the traceback of
the method's frames), so `runs`, `show` and the report can say why, and a resume can say once that the
stream failed there before. A resume that gets the stream past its failure leaves the entry marked
`resolved`.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import replace
from typing import TypeVar

from runner.display.progress import StreamProgress
from runner.journal.stream_failures import END_REASON, StreamFailure, journaled_failures, meta_key
from runner.workers.failure import MethodFailure

__all__ = ["END_REASON", "WAITING", "StreamFailure", "journaled_failures", "located", "meta_key",
           "stream_failure"]

T = TypeVar("T")

WAITING = "waiting on its method"


def stream_failure(stream_id: str, method: str, spec: str, where: str, failure: MethodFailure) -> StreamFailure:
    """The journal's row for `failure`, which stopped the stream `stream_id` at `where`."""
    return StreamFailure(stream_id, method, spec, where, failure.call, failure.error, failure.frame, failure.traceback,
                         output=failure.output)


async def located(call: Awaitable[T], where: str | Callable[[MethodFailure], str],
                  live: StreamProgress | None = None) -> T:
    """`call`'s value; its `MethodFailure` told with where in the stream it happened (`where` of the
    failure, when one request made several calls). `live`: the stream's dashboard row, which says
    `WAITING` while the call runs (the stream waits on its method)."""
    phase = live.phase if live is not None else ""
    if live is not None:
        live.phase = WAITING
    try:
        return await call
    except MethodFailure as failure:
        if failure.where:
            raise failure from None
        raise replace(failure, where=where if isinstance(where, str) else where(failure)) from None
    finally:
        if live is not None and live.phase == WAITING:
            live.phase = phase
