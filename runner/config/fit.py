"""How a sweep's config meets its dataset, checked before anything runs.

- A dataset holding only some scenarios runs those it has when the config names none of its own
  (the default list is every scenario of the benchmark); scenarios named explicitly are still
  required to exist.
- The offline scripted oracle (`scripted`, `scripted:oracle`) reads the active window's policy
  only from machine-readable policy blocks. Where a scenario's bulletins are prose (the public
  export's), running the `oracle` method on it would report blind's scores under oracle's name, so
  it is refused with one line naming the scenario and what to do.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from runner.config.settings import SweepConfig
from simulators.dataset import Dataset, scenario_names
from simulators.errors import ShiftbenchInputError
from simulators.policy_block import parse_policy_blocks
from simulators.protocol import SCENARIOS

__all__ = ["check_oracle_readable", "scenarios_present"]

_BLOCK_READERS = ("scripted", "scripted:oracle")


def scenarios_present(config: SweepConfig) -> SweepConfig:
    """The config narrowed to the dataset's scenarios when it asks for the default (all of them)."""
    if not config.dataset or config.scenarios != SCENARIOS:
        return config
    present = scenario_names(Path(config.dataset))
    ordered = [name for name in SCENARIOS if name in present] + [n for n in present if n not in SCENARIOS]
    return replace(config, scenarios=tuple(ordered))


def check_oracle_readable(config: SweepConfig, dataset: Dataset) -> None:
    if "oracle" not in config.methods:
        return
    readers = [model for model in config.models if model in _BLOCK_READERS]
    if not readers:
        return
    for name in config.scenarios:
        windows = dataset.scenarios[name].environment.windows
        if not all(parse_policy_blocks(window.oracle_bulletin) for window in windows):
            raise ShiftbenchInputError(
                f"method oracle with model {readers[0]}: the bulletins of {name} in {dataset.root} carry no "
                "machine-readable policy block, so the scripted model cannot read them and would score as "
                "blind; run oracle with a language model, or leave oracle out of --methods")
