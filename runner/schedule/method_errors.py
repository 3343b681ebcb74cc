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

from collections.abc import Awaitable
from dataclasses import asdict, dataclass, replace
from typing import TypeVar

import orjson

from runner.display.progress import StreamProgress
from runner.journal import Batch, Reader
from runner.workers.failure import MethodFailure

__all__ = ["END_REASON", "WAITING", "StreamFailure", "journaled_failures", "located", "meta_key"]

T = TypeVar("T")

END_REASON = "method_error"
WAITING = "waiting on its method"
_PREFIX = "method_error|"


def meta_key(run_id: str, stream_id: str) -> str:
    return f"{_PREFIX}{run_id}|{stream_id}"


@dataclass(frozen=True)
class StreamFailure:
    stream_id: str
    method: str
    spec: str
    where: str
    """The unit, or the block's first and last unit, or the step (`restore`, `test set of window 3`)."""
    call: str
    error: str
    frame: str = ""
    traceback: str = ""
    resolved: bool = False
    output: str = ""
    """The last lines the method printed before it failed (bounded), for `show` to print."""

    @classmethod
    def of(cls, stream_id: str, method: str, spec: str, where: str, failure: MethodFailure) -> StreamFailure:
        return cls(stream_id, method, spec, where, failure.call, failure.error, failure.frame, failure.traceback,
                   output=failure.output)

    def line(self) -> str:
        """One line: the stream, the method and its spec, where, the call, the method's own frame, the error."""
        shown = self.method if self.spec in ("", self.method) else f"{self.method} = {self.spec}"
        at = f" at {self.frame}" if self.frame else ""
        return f"{END_REASON}: {self.stream_id} ({shown}), {self.where}: {self.call}{at}: {self.error}"

    def journal_into(self, batch: Batch, run_id: str) -> Batch:
        return batch.set_meta(meta_key(run_id, self.stream_id), orjson.dumps(asdict(self)).decode())


async def journaled_failures(reader: Reader, run_id: str) -> dict[str, StreamFailure]:
    """The run's streams that stopped with `method_error` (resolved ones too), by stream id."""
    found: dict[str, StreamFailure] = {}
    for _key, value in await reader.meta_prefixed(f"{_PREFIX}{run_id}|"):
        try:
            failure = StreamFailure(**orjson.loads(value))
        except (orjson.JSONDecodeError, TypeError):
            continue  # an entry this version cannot read tells nothing it could act on
        found[failure.stream_id] = failure
    return found


async def located(call: Awaitable[T], where: str, live: StreamProgress | None = None) -> T:
    """`call`'s value; its `MethodFailure` told with where in the stream it happened. `live`: the
    stream's dashboard row, which says `WAITING` while the call runs (the stream waits on its method)."""
    phase = live.phase if live is not None else ""
    if live is not None:
        live.phase = WAITING
    try:
        return await call
    except MethodFailure as failure:
        raise (failure if failure.where else replace(failure, where=where)) from None
    finally:
        if live is not None and live.phase == WAITING:
            live.phase = phase
