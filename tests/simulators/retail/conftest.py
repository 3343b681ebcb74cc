"""Built-in retail scenarios, generated once per test session (about a second for all three)."""

from __future__ import annotations

import pytest

from simulators.domains.retail import DOMAIN
from simulators.protocol import Scenario

SCENARIOS = ("retail_l1", "retail_l2", "retail_l3")


@pytest.fixture(scope="session")
def scenarios() -> dict[str, Scenario]:
    return {name: DOMAIN.generate(name, 0) for name in SCENARIOS}
