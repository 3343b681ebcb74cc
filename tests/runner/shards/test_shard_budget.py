"""A sweep's budget across shards against a real loopback provider: per-shard caps by projected cost,
printed before the first call; no shard passes its own cap; the merge reports the total against the
sweep's cap; the same command with a higher budget finishes each shard."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from bench.mock_provider import serve_mock
from runner.report import build_report, render_text
from runner.shards.merge import merge_shards
from runner.shards.spec import ShardSpec
from runner.shards.start import start_shard
from tests.runner.test_paid_sweep import KEY, PricedReplies, config_for
from tests.support import quiet

COUNT = 2


@pytest.fixture(autouse=True)
def api_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_COMPATIBLE_API_KEY", KEY)


async def test_each_shard_keeps_its_share_of_the_sweep_budget(built_suite: Path, tmp_path: Path) -> None:
    replies = PricedReplies(output_tokens=400)
    async with serve_mock(replies) as mock:
        config = dataclasses.replace(config_for(mock.base_url, built_suite, budget=0.05, concurrency=2),
                                     max_tokens=400)
        said: list[tuple[int, str]] = []
        paths = [tmp_path / f"shard-{i}.sqlite" for i in range(COUNT)]
        outcomes = []
        for index, path in enumerate(paths):
            outcomes.append(await start_shard(config, ShardSpec(index, COUNT), path, "none",
                                              lambda text: said.append((len(replies.sent), text))))
        splits = [(sent, text) for sent, text in said if "split by projected cost" in text]
        assert len(splits) == COUNT
        calls_before = [sent for sent, _ in splits]
        assert calls_before[0] == 0  # the first shard's split and caps: before its first call (the probe)
        caps = []
        for index, outcome in enumerate(outcomes):
            report = await build_report(paths[index], outcome.run_id)
            assert report.budget_usd is not None and report.budget_usd < 0.05
            assert report.cost_usd.total <= report.budget_usd
            caps.append(report.budget_usd)
        assert {o.status for o in outcomes} == {"budget_exhausted"}
        assert sum(caps) <= 0.05
        partial = await merge_shards(tmp_path / "partial.sqlite", paths, allow_partial=True, say=quiet)
        assert partial.sweep.spent_usd <= 0.05 and partial.sweep.budget_usd == 0.05
        text = render_text(await build_report(tmp_path / "partial.sqlite", partial.sweep.sweep_id))
        assert "of the sweep's cap $0.05" in text and "budget_exhausted" in text

        bigger = dataclasses.replace(config, budget=100.0)
        finished = [await start_shard(bigger, ShardSpec(i, COUNT), path, "none", quiet)
                    for i, path in enumerate(paths)]
        assert [o.status for o in finished] == ["completed"] * COUNT
        merged = await merge_shards(tmp_path / "merged.sqlite", paths, say=quiet)
        assert not merged.sweep.partial and merged.sweep.budget_usd == 100.0
        report = await build_report(tmp_path / "merged.sqlite", merged.sweep.sweep_id)
        assert report.budget_usd == 100.0
        assert report.cost_usd.total == pytest.approx(merged.sweep.spent_usd)
        print(f"\ncaps at $0.05: {[round(c, 6) for c in caps]}; partial spend ${partial.sweep.spent_usd:.4f}; "
              f"finished under $100: ${merged.sweep.spent_usd:.4f} in all")
