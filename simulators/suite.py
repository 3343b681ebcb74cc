"""The built-in suite: nine generated scenarios in the dataset layout, and `data check` summaries."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from simulators.dataset import Dataset, write_dataset
from simulators.protocol import SCENARIOS, Scenario
from simulators.registry import get_domain

__all__ = ["ScenarioSummary", "build_suite", "generate_scenarios", "summarize"]


def generate_scenarios(seed: int, names: Iterable[str] = SCENARIOS) -> list[Scenario]:
    return [get_domain(name.split("_")[0]).generate(name, seed) for name in names]


def build_suite(out: Path | str, seed: int = 0) -> str:
    """Generate and write the whole suite; returns the dataset fingerprint."""
    return write_dataset(out, generate_scenarios(seed))


@dataclass(frozen=True)
class ScenarioSummary:
    windows: int
    serving: int
    test: int
    test_hidden: int
    test_fully_specified: int


def summarize(dataset: Dataset) -> dict[str, ScenarioSummary]:
    summaries = {}
    for name, scenario in dataset.scenarios.items():
        hidden = sum(1 for t in scenario.test if t.category == "hidden")
        summaries[name] = ScenarioSummary(
            windows=len(scenario.environment.windows), serving=len(scenario.serving), test=len(scenario.test),
            test_hidden=hidden, test_fully_specified=len(scenario.test) - hidden,
        )
    return summaries
