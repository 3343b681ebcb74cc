"""bench/cache_hits.py keeps working: one small pilot sweep per dialect, no timing asserted."""

from __future__ import annotations

from pathlib import Path

import pytest

from bench.cache_hits import measure


@pytest.mark.parametrize("dialect", ["anthropic", "openai"])
async def test_cache_hits_measures_a_pilot_sweep(dialect: str, built_suite: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-loopback-mock")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-loopback-mock")
    hits = await measure(built_suite, dialect, "oracle", pilot=1, turns=4)
    assert hits.calls > 0 and 0.5 < hits.later <= 1.0
    assert 0 < hits.cost_usd < hits.uncached_usd
    assert (hits.write > 0) == (dialect == "anthropic")  # OpenAI has no cache writes to bill
