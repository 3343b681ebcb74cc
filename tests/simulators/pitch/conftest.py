"""Built pitch scenarios, generated once per session (generation is deterministic)."""

from __future__ import annotations

import pytest

from simulators.domains.pitch import DOMAIN
from simulators.protocol import Scenario

PITCH_SCENARIOS = ("pitch_l1", "pitch_l2", "pitch_l3")


@pytest.fixture(scope="session")
def pitch_scenarios() -> dict[str, Scenario]:
    return {name: DOMAIN.generate(name, 0) for name in PITCH_SCENARIOS}
