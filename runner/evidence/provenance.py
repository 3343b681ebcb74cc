"""Where a run's numbers come from, beyond the run row (code, dataset, config): models and prices,
machine, plan.

A sealed report carries this so a reader can tell two reports of different code or data apart and
reproduce either. The machine is recorded when the run starts (`machine_info`); prices are the
shipped table with the run's own overrides, as the run priced its calls.
"""

from __future__ import annotations

import os
import platform
from dataclasses import asdict
from typing import Any

import orjson

from runner.config import SweepConfig, config_from_json
from runner.journal import RunRow
from runner.pricing import price_of, with_overrides
from simulators.errors import ShiftbenchInputError

__all__ = ["machine_info", "machine_meta_key", "provenance_extras"]


def machine_meta_key(run_id: str) -> str:
    return f"run:{run_id}:machine"


def machine_info() -> str:
    """The machine a run starts on, as JSON text (no host name: reports get shared)."""
    return orjson.dumps({"platform": platform.platform(), "python": platform.python_version(),
                         "implementation": platform.python_implementation(), "cpus": os.cpu_count()}).decode()


def provenance_extras(run: RunRow, machine: str | None) -> dict[str, Any]:
    """What a report's provenance adds to the run row: models and their prices, machine, plan."""
    config = _config(run)
    return {
        "models": _models(config),
        "machine": orjson.loads(machine) if machine else None,
        "plan": dict(config.plan) if config is not None and config.plan else None,
    }


def _config(run: RunRow) -> SweepConfig | None:
    try:
        return config_from_json(run.config)
    except (TypeError, ValueError, orjson.JSONDecodeError):
        return None  # a journal written by another version: the rest of the provenance still stands


def _models(config: SweepConfig | None) -> dict[str, Any]:
    if config is None:
        return {}
    try:
        table = with_overrides(config.prices, "the run's [prices]")
    except ShiftbenchInputError:
        table = None
    models: dict[str, Any] = {}
    for name in config.models:
        price = price_of(name, table) if table is not None else None
        models[name] = {"price_per_million_tokens": None if price is None else asdict(price)}
    return models
