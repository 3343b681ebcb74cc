"""The scripted agent through the real agent loop: the bulletin makes it right everywhere, the documents
alone make it right exactly on fully specified tasks."""

from __future__ import annotations

import pytest

from simulators.domains.retail import DOMAIN
from simulators.protocol import Scenario
from tests.support import category_scores

from .conftest import SCENARIOS


@pytest.mark.parametrize("name", SCENARIOS)
async def test_oracle_is_right_on_every_setting(scenarios: dict[str, Scenario], name: str) -> None:
    scores = await category_scores(scenarios[name], DOMAIN, "oracle", with_bulletin=True)
    assert set(scores) == {"hidden", "fully_specified"}
    assert min(scores.values()) >= 99, scores


@pytest.mark.parametrize("name", SCENARIOS)
async def test_documents_alone_fail_hidden_tasks_only(scenarios: dict[str, Scenario], name: str) -> None:
    scores = await category_scores(scenarios[name], DOMAIN, "docs", with_bulletin=False)
    assert scores["fully_specified"] >= 95, scores
    assert scores["hidden"] <= 35, scores
