"""Which models a sweep sends its test calls through a provider's batch API: the `batch` setting read as
the contract of issue 32 names it, for the money side (projections, `estimate`, the pilot).

`shiftbench run --batch tests` or a sweep file's top-level `batch = "tests"` batches every model's test
calls; `[endpoints."<name>"] batch = "tests" | "off"` overrides it for the model of that endpoint. The
setting is read defensively (`getattr`, with "off" when absent), so a config of a version without it, or
a stored run config from before it, reads as a live run.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

__all__ = ["BATCH_CHOICES", "batch_of", "batched_models"]

BATCH_CHOICES = ("off", "tests")


def batch_of(config: Any) -> str:
    """The sweep-wide setting of a `SweepConfig` (or anything with its attributes): 'tests' or 'off'."""
    value = getattr(config, "batch", "off")
    return value if value in BATCH_CHOICES else "off"


def batched_models(config: Any, override: str | None = None) -> Callable[[str], bool] | None:
    """A predicate: does this model send its test calls through a batch API? None when no model does.
    `override`: the sweep-wide setting to use instead of the config's (`estimate --batch`)."""
    top = override if override in BATCH_CHOICES else batch_of(config)
    endpoints: Mapping[str, Any] = getattr(config, "endpoints", None) or {}
    own: dict[str, str] = {str(name): str(table["batch"]) for name, table in endpoints.items()
                           if isinstance(table, Mapping) and table.get("batch") in BATCH_CHOICES}
    if top != "tests" and "tests" not in own.values():
        return None

    def batched(model: str) -> bool:
        return own.get(model, top) == "tests"

    return batched
