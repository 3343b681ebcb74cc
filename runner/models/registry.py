"""Model clients built from the names a user gives (`scripted`, `scripted:docs`, ...)."""

from __future__ import annotations

from dataclasses import dataclass

from runner.models.scripted import ScriptedModel
from simulators.errors import ShiftbenchInputError
from simulators.model_api import ModelClient

__all__ = ["ModelEntry", "build_model"]


@dataclass(frozen=True)
class ModelEntry:
    name: str
    client: ModelClient
    offline: bool
    """In-process and free: its calls are neither cached nor journaled one by one."""


def build_model(name: str) -> ModelEntry:
    kind, _, rest = name.partition(":")
    if kind == "scripted":
        try:
            return ModelEntry(name, ScriptedModel(rest or "oracle"), offline=True)
        except ValueError as exc:
            raise ShiftbenchInputError(f"--models: {exc}") from exc
    raise ShiftbenchInputError(
        f"--models: unknown model kind '{kind}' in '{name}'; available here: scripted, scripted:docs"
    )
