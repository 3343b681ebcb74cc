"""The boundary a worker puts around itself before it imports the method's code.

Only the process for now: the method runs in a process of its own, so nothing of the runner's memory
is in reach, but it may still read and write what the user may.
"""

from __future__ import annotations

from collections.abc import Sequence

__all__ = ["PROCESS_ONLY", "restrict"]

PROCESS_ONLY = "process only"


def restrict(scratch: str, reads: Sequence[str]) -> str:
    """Restrict this process; the boundary's name."""
    return PROCESS_ONLY
