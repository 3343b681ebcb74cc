"""What a user's method may take: time per call, and size (memory, output, state, context).

Each limit has a flag and a sweep key (`--method-memory`, `method_memory`, ...); a call past one is that
stream's `method_error`, its line naming the limit and the flag that raises it. Sizes are in MB
(10^6 bytes). Time is judged by the runner (a worker past its time is killed); memory by the kernel
(the worker's address space, RLIMIT_AS: an allocation past it is a MemoryError in the method); output
by the fork server that writes the worker's output.log; state and context by the runner when they
arrive, before anything is journaled.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["MB", "MethodLimits", "over_size"]

MB = 1_000_000


@dataclass(frozen=True)
class MethodLimits:
    """Seconds a call may take (`context` per task, `learn` per block, and build, state, load, copy),
    and the sizes a worker may reach."""

    context_s: float = 60.0
    learn_s: float = 900.0
    memory_mb: float = 4096.0
    """A worker's address space (its code and libraries count too: Python itself takes about 100 MB)."""
    output_mb: float = 16.0
    """What a worker may print (stdout and stderr, into its output.log) over its life."""
    state_mb: float = 64.0
    """One `state()` as JSON: it is journaled at every checkpoint."""
    context_mb: float = 4.0
    """One `context` text: it goes into the prompt of every turn of the task."""

    @property
    def memory_bytes(self) -> int:
        return int(self.memory_mb * MB)

    @property
    def output_bytes(self) -> int:
        return int(self.output_mb * MB)


_FLAGS = {"state": "--method-state-size", "context": "--method-context-size"}


def over_size(what: str, size: int, limit_mb: float) -> str | None:
    """The error when `size` bytes of a `what` ("state", "context") pass `limit_mb`; None within it."""
    if size <= limit_mb * MB:
        return None
    return (f"its {what} is {size / MB:,.1f} MB, past the limit of {limit_mb:g} MB ({_FLAGS[what]} raises it, "
            f"or method_{what}_size in a sweep file)")
