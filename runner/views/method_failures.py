"""The streams a run's methods stopped, as `show` prints them: each failure's one line, the method's
own traceback frames and the last lines it printed (journaled with the failure, bounded)."""

from __future__ import annotations

import textwrap
from pathlib import Path

from runner.journal import read_only
from runner.journal.stream_failures import StreamFailure, journaled_failures

__all__ = ["load_method_failures", "render_method_failures"]


async def load_method_failures(journal: Path, run_id: str, stream: str | None = None) -> list[StreamFailure]:
    """The run's unresolved method failures (of `stream`, a `model|method` prefix, when given)."""
    async with read_only(journal) as reader:
        found = await journaled_failures(reader, run_id)
    return [f for _, f in sorted(found.items()) if not f.resolved and (stream is None or
                                                                         f.stream_id.startswith(stream + "|"))]


def render_method_failures(failures: list[StreamFailure], width: int = 80) -> str:
    """A block per failure; "" when there is none."""
    blocks = []
    for failure in failures:
        lines = [failure.line()]
        if failure.traceback.strip():
            lines += ["  the method's frames:", *(f"    {t}" for t in failure.traceback.rstrip().splitlines()[-12:])]
        if failure.output.strip():
            lines += ["  its last output:", *(f"    {o}" for o in failure.output.rstrip().splitlines())]
        blocks.append("\n".join(wrapped for line in lines for wrapped in _fit(line, width)))
    return "\n\n".join(blocks)


def _fit(line: str, width: int) -> list[str]:
    """`line` wrapped to `width`, its continuation indented as deep as the line and two more."""
    if len(line) <= width:
        return [line]
    indent = " " * (len(line) - len(line.lstrip()) + 2)
    return textwrap.wrap(line, width, subsequent_indent=indent, break_long_words=True, break_on_hyphens=False)
