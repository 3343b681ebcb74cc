"""Standard output and error that never drop what was printed.

With `PYTHONUNBUFFERED=1` (set by many CI systems, containers and job schedulers) Python writes text
straight to the file descriptor, and a write the kernel takes only in part (a pipe whose reader is
slow: `shiftbench report RUN --json | jq` on a loaded machine) loses the rest without an error: 64 KiB
of a 120 KB report, exit code 0. A buffered writer finishes every write; line buffering keeps the
output as prompt as unbuffered output is, a line at a time.
"""

from __future__ import annotations

import io
import sys

__all__ = ["whole_writes"]


def whole_writes() -> None:
    """Re-wrap stdout and stderr in a buffered writer where they write unbuffered (idempotent)."""
    for name in ("stdout", "stderr"):
        stream = getattr(sys, name)
        raw = getattr(stream, "buffer", None)
        if not isinstance(stream, io.TextIOWrapper) or not isinstance(raw, io.FileIO):
            continue  # already buffered, or not a file (a test's capture)
        # closefd=False: the descriptor stays the interpreter's, closed with its own stream at exit.
        writer = io.BufferedWriter(io.FileIO(raw.fileno(), "w", closefd=False))
        setattr(sys, name, io.TextIOWrapper(writer, encoding=stream.encoding, errors=stream.errors,
                                            line_buffering=True))
