"""Shared fixtures: the built-in banking scenarios, generated once per test session."""

from __future__ import annotations

from functools import cache

import pytest

from simulators.domains.banking import DOMAIN
from simulators.protocol import Scenario

SCENARIOS = ("banking_l1", "banking_l2", "banking_l3")


@cache
def built(name: str, seed: int = 0) -> Scenario:
    return DOMAIN.generate(name, seed)


@pytest.fixture(params=SCENARIOS)
def scenario(request: pytest.FixtureRequest) -> Scenario:
    return built(request.param)
