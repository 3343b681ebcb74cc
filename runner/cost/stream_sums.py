"""Per-call figures summed per (model, method) stream and over the whole run: the one loop behind the
prompt cache's figures (`cache_savings`) and batching's (`batch_savings`)."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Protocol, TypeVar

__all__ = ["StreamKey", "sum_by_stream", "sum_total"]

StreamKey = tuple[str, str]


class _Summable(Protocol):
    def __add__(self: S, other: S, /) -> S: ...


class _StreamCall(Protocol):
    @property
    def stream_model(self) -> str | None: ...

    @property
    def method(self) -> str | None: ...


S = TypeVar("S", bound=_Summable)
R = TypeVar("R", bound=_StreamCall)


def sum_by_stream(rows: Iterable[R], figures: Callable[[R], S], zero: S) -> dict[StreamKey, S]:
    """Each stream's calls (a call no stream claims, such as a probe, is left out)."""
    found: dict[StreamKey, S] = {}
    for row in rows:
        if row.stream_model is not None and row.method is not None:
            key = (row.stream_model, row.method)
            found[key] = found.get(key, zero) + figures(row)
    return found


def sum_total(rows: Iterable[R], figures: Callable[[R], S], zero: S) -> S:
    """The whole run, probes and calls no stream claims included."""
    total = zero
    for row in rows:
        total = total + figures(row)
    return total
