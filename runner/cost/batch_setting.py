"""Which models a sweep sends its test calls through a provider's batch API, for the money side
(projections, `estimate`, the pilot): `run --batch tests` or the sweep file's `batch = "tests"` for every
model, an endpoint's own `batch` overriding it for the model of that endpoint
(`runner.config.batch_settings.endpoint_batch_mode`, the rule the run itself follows).

The setting is read with `getattr` ("off" when absent), so a config object without it reads as a live run.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from runner.config.batch_settings import BATCH_MODES, endpoint_batch_mode

__all__ = ["batched_models"]


def batched_models(config: Any, override: str | None = None) -> Callable[[str], bool] | None:
    """A predicate: does this model send its test calls through a batch API? None when no model does.
    `override`: the sweep-wide setting to use instead of the config's (`estimate --batch`)."""
    top = override if override in BATCH_MODES else str(getattr(config, "batch", "off"))
    endpoints: Mapping[str, Any] = getattr(config, "endpoints", None) or {}

    def batched(model: str) -> bool:
        table = endpoints.get(model)
        return endpoint_batch_mode(top, table if isinstance(table, Mapping) else None) == "tests"

    if top != "tests" and not any(batched(name) for name in endpoints):
        return None
    return batched
