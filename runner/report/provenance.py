"""Where a run's numbers come from, beyond the run row (code, dataset, config): models and prices,
machine, plan.

A sealed report carries this so a reader can tell two reports of different code or data apart and
reproduce either. The machine is recorded when the run starts (`machine_info`); prices are the
shipped table with the run's own overrides, as the run priced its calls.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import asdict, replace
from typing import Any

import orjson

from runner.common.version import code_version
from runner.config.prices import Price
from runner.config.settings import SweepConfig, config_from_json
from runner.cost.batch_setting import batched_models
from runner.cost.pricing import price_of, with_overrides
from runner.journal import RunRow
from simulators.errors import ShiftbenchInputError

__all__ = ["provenance_extras"]


def provenance_extras(run: RunRow, machine: str | None, served: Iterable[tuple[str, str]] = (),
                      methods: str | None = None, method_changes: str | None = None) -> dict[str, Any]:
    """What a report's provenance adds to the run row: models with their prices and the versions the
    providers said served them (`served_as`: more than one when a provider changed the model under a
    running sweep), machine, plan, the methods as journaled (`runner.config.method_provenance`) with any
    source change a resume accepted, and the code that computes the report (the run's own stays as stored)."""
    config = _config(run)
    models = _models(config)
    for model, version in sorted(set(served)):
        models.setdefault(model, {}).setdefault("served_as", []).append(version)
    return {
        "report_code_version": code_version(),
        "models": models,
        "machine": orjson.loads(machine) if machine else None,
        "plan": dict(config.plan) if config is not None and config.plan else None,
        "methods": orjson.loads(methods) if methods else {},
        "method_changes": orjson.loads(method_changes) if method_changes else [],
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
    batched = batched_models(config)
    models: dict[str, Any] = {}
    for name in config.models:
        price = price_of(name, table) if table is not None else None
        if price is not None and (batched is None or not batched(name)):
            price = replace(price, batch=None)  # a tier the run never charged is no price of its calls
        models[name] = {"price_per_million_tokens": None if price is None else _rates(price)}
    return models


def _rates(price: Price) -> dict[str, Any]:
    """A price's rates, its batch tier nested only when the run batched the model (a live run's provenance
    reads as it did before batch tiers existed)."""
    rates = asdict(price)
    if price.batch is None:
        del rates["batch"]
    return rates
