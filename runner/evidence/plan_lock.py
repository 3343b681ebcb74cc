"""Locking a plan (`shiftbench lock PLAN`) and following it (`run --plan PLAN`): plans meet the dataset and
the code they run on (the command's lines are `runner.cli.evidence`'s).

Locking records the fingerprint of the dataset the plan's sweep resolves to and the code version.
An amendment records exactly what differs between the plan as it stands and the sweep the flags
describe (config keys, and the dataset fingerprint or code version when those moved), so nothing
changes silently. `follow_plan` returns the sweep a planned run may start, or refuses with one line.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

from runner.common.files import output_file
from runner.common.version import code_version
from runner.config.settings import SweepConfig, load_config_file
from runner.evidence.plans import PLAN_TABLES, LockedPlan, amend_plan, differences, lock_plan, read_plan
from runner.schedule.sweep import resolve_dataset
from simulators.errors import ShiftbenchInputError

__all__ = ["amend", "follow_plan", "lock"]

Say = Callable[[str], None]


def lock(path: Path, say: Say) -> str:
    """Lock the plan under its hash, with the fingerprint of the dataset its sweep resolves to; the hash."""
    output_file(path, "lock")  # it is rewritten: a regular file only (a FIFO would hang the read, too)
    read_plan(path)  # the whole plan checked before the dataset is resolved (maybe built)
    config = load_config_file(path, PLAN_TABLES)
    return lock_plan(path, resolve_dataset(config, say).fingerprint, code_version())


def amend(path: Path, overrides: Mapping[str, Any], reason: str, say: Say) -> tuple[dict[str, Any], str]:
    """Append an amendment covering `overrides` (and a moved dataset or code); (what it changes, the hash)."""
    output_file(path, "lock")
    locked = _locked(path)
    config = replace(locked.effective()[0], **overrides).validate("flags")
    changes = differences(locked, config, resolve_dataset(config, say).fingerprint, code_version())
    return changes, amend_plan(path, reason, changes)


def follow_plan(path: Path, overrides: Mapping[str, Any], say: Say) -> SweepConfig:
    """The locked sweep with its amendments and the given flags, carrying the plan's hashes; refused
    when the flags, the dataset or the code differ from the plan without an amendment."""
    locked = _locked(path)
    config = replace(locked.effective()[0], **overrides).validate("flags")
    changes = differences(locked, config, resolve_dataset(config, say).fingerprint, code_version())
    if changes:
        detail = "; ".join(f"{key} -> {_shown(value)}" for key, value in changes.items())
        raise ShiftbenchInputError(
            f"{path}: this run differs from the locked plan ({detail}); amend the plan first: "
            f"shiftbench lock {path} --amend REASON with the same flags")
    return replace(config, plan=locked.summary())


def _locked(path: Path) -> LockedPlan:
    _, locked = read_plan(path)
    if locked is None:
        raise ShiftbenchInputError(f"{path}: the plan is not locked; `shiftbench lock {path}` first")
    return locked


def _shown(value: Any) -> str:
    if isinstance(value, (tuple, list)):
        return ",".join(str(item) for item in value)
    return str(value)
