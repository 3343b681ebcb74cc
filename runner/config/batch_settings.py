"""How a sweep uses the providers' batch APIs for its test sets (`--batch tests`, the sweep file's `batch`
key, its `[batch]` table, an endpoint's own `batch`), checked where they enter.

    batch = "tests"            # or "off" (the default); an endpoint's `batch` overrides it for its models
    [batch]
    max_items = 1000           # a batch is submitted when this many requests wait ...
    wait_s = 30                # ... or when the oldest waiting request has waited this long
    poll_s = 5                 # first poll interval, doubling up to poll_max_s
    poll_max_s = 60
    on_item_failure = "resubmit"   # a failed item: once more in a batch, then live ("live": live at once)
    start = "after_serving"    # test sets wait for every serving stream ("window": as their window ends)
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from runner.common.toml_tables import refuse_unknown
from simulators.errors import ShiftbenchInputError

__all__ = ["BATCH_MODES", "BatchSettings", "batch_settings", "endpoint_batch_mode"]

BATCH_MODES = ("tests", "off")
ITEM_FAILURE_CHOICES = ("resubmit", "live")
START_CHOICES = ("window", "after_serving")


@dataclass(frozen=True)
class BatchSettings:
    max_items: int = 1000
    wait_s: float = 30.0
    poll_s: float = 5.0
    poll_max_s: float = 60.0
    on_item_failure: str = "resubmit"
    start: str = "after_serving"
    """Measured with bench/batch_rounds.py (a mock with a 3 s batch latency): waiting for serving to end
    took a third to a fifth of the batches at the same wall time (the last window's test set starts when
    serving ends either way) as starting each test set as its window ends."""


_COUNTS = {"max_items": (1, 100_000)}
_SECONDS = {"wait_s": (0.0, 86_400.0), "poll_s": (0.01, 86_400.0), "poll_max_s": (0.01, 86_400.0)}
_CHOICES = {"on_item_failure": ITEM_FAILURE_CHOICES, "start": START_CHOICES}


def batch_settings(table: Mapping[str, Any], where: str = "[batch]") -> BatchSettings:
    """The `[batch]` table as settings: unknown keys, wrong kinds and out-of-range values are refused with
    one line naming `where` (the file and table) and the key."""
    if not isinstance(table, Mapping):
        raise ShiftbenchInputError(f"{where}: batch settings must be a table ([batch]), got {table!r}")
    refuse_unknown(where, table, [*_COUNTS, *_SECONDS, *_CHOICES])
    values: dict[str, Any] = {}
    for key, (low, high) in _COUNTS.items():
        if key in table:
            value = table[key]
            if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
                raise ShiftbenchInputError(f"{where}: {key} must be a whole number from {low} to {high}, "
                                           f"got {value!r}")
            values[key] = value
    for key, (bottom, top) in _SECONDS.items():
        if key in table:
            number = table[key]
            if (isinstance(number, bool) or not isinstance(number, int | float) or not math.isfinite(number)
                    or not bottom <= number <= top):
                raise ShiftbenchInputError(f"{where}: {key} must be a number of seconds from {bottom:g} to "
                                           f"{top:g}, got {number!r}")
            values[key] = float(number)
    for key, choices in _CHOICES.items():
        if key in table:
            if table[key] not in choices:
                raise ShiftbenchInputError(f"{where}: {key} must be one of {', '.join(map(repr, choices))}, "
                                           f"got {table[key]!r}")
            values[key] = table[key]
    settings = BatchSettings(**values)
    if settings.poll_max_s < settings.poll_s:
        raise ShiftbenchInputError(f"{where}: poll_max_s ({settings.poll_max_s:g}) is below poll_s "
                                   f"({settings.poll_s:g}); make it at least as long")
    return settings


def check_batch_mode(where: str, key: str, value: object) -> str:
    if value not in BATCH_MODES:
        raise ShiftbenchInputError(f"{where}: {key} must be one of {', '.join(map(repr, BATCH_MODES))}, "
                                   f"got {value!r}")
    return str(value)


def endpoint_batch_mode(run_mode: str, endpoint_table: Mapping[str, Any] | None) -> str:
    """A model's batch mode: its endpoint's own `batch` when it has one, else the run's."""
    if endpoint_table is not None and "batch" in endpoint_table:
        return str(endpoint_table["batch"])
    return run_mode
