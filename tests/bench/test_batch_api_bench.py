"""`bench/batch_api.py` runs end to end at a tiny size, and every batched turn matches the live one.
No timing is asserted."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest

from bench.batch_api import main


def test_the_batch_round_bench_matches_every_batched_turn_to_the_live_one(
        built_suite: Path, capsys: pytest.CaptureFixture[str]) -> None:
    main(["--items", "12", "--rounds", "1", "--concurrency", "4", "--suite", str(built_suite)])
    rows = [orjson.loads(line) for line in capsys.readouterr().out.splitlines() if line.startswith('{"round"')]
    assert [row["dialect"] for row in rows] == ["openai", "anthropic"]
    assert all(row["same_turn_as_live"] == row["items"] == 12 for row in rows)
    assert [row["polls"] for row in rows] == [2, 1]  # OpenAI shows `finalizing` once
