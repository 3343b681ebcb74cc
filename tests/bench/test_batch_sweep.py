"""bench/batch_sweep.py end to end at a tiny size: on each mock batch API the batched run earns every
episode's live reward, sends its test calls through batches and costs less. No timing is asserted."""

from __future__ import annotations

from pathlib import Path

import pytest

from bench.batch_sweep import measure_dialect


@pytest.mark.parametrize("dialect", ["openai", "anthropic"])
async def test_the_batched_sweep_matches_the_live_one_for_less(
        built_suite: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, dialect: str) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-loopback-test-key")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-loopback-test-key")
    row = await measure_dialect(built_suite, tmp_path, dialect, ["blind", "tabular"], ["banking_l1"], 1, 0.05)
    assert row.episodes > 0 and row.same_rewards == row.episodes
    assert row.batch_calls > 0 and row.rounds >= 1 and row.items["succeeded"] == row.batch_calls
    assert 0 < row.batched_usd < row.live_usd and row.saved_usd > 0
    # `saved` prices the batched run's own tokens at the live rates; a batch may read the prompt cache less
    # than live calls do, so it need not equal the live run's cost minus the batched run's.
