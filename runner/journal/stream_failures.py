"""A stream stopped by its method, as the journal keeps it: one meta row `method_error|RUN|STREAM`.

Here, beside the journal, so `show` reads a run's failures without loading the scheduler; the
scheduler (`runner.schedule.method_errors`) writes them.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

import orjson

from runner.journal.batch import Batch
from runner.journal.reader import Reader

__all__ = ["END_REASON", "StreamFailure", "journaled_failures", "meta_key"]

END_REASON = "method_error"
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


