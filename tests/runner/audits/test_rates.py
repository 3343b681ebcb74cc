"""A scripted sweep journals a state audit per retail and banking episode; the report shows the rates
with exact intervals, and a gate rule can read them."""

from __future__ import annotations

from pathlib import Path

import pytest

from runner.config.settings import SweepConfig
from runner.evidence.gate_run import gate_run
from runner.evidence.gates import GateFile, Rule, Verdict
from runner.journal import read_only
from runner.report import build_report, render_text
from runner.schedule.sweep import start_sweep
from runner.stats.outcomes import RunEvidence
from tests.support import quiet


async def test_sweep_journals_state_audits_and_the_report_and_gates_read_them(built_suite: Path,
                                                                              tmp_path: Path) -> None:
    config = SweepConfig(models=("scripted",), methods=("blind",), scenarios=("retail_l1", "pitch_l1"),
                         dataset=str(built_suite), pilot=2)
    journal = tmp_path / "j.sqlite"
    outcome = await start_sweep(config, journal, "none", quiet)
    assert outcome.status == "completed"
    async with read_only(journal) as reader:
        audited = await reader.episode_audits(outcome.run_id)
    assert audited and {row.scenario for row in audited} == {"retail_l1"}  # pitch has no world to audit
    assert all(row.state_unchanged is True for row in audited)
    # blind acts on the stale documents: where the hidden policy refuses, its write is not the gold's
    assert any(row.writes_executed and row.state_match is False for row in audited)

    report = await build_report(journal, outcome.run_id)
    audits = report.streams[0].audits
    assert audits is not None and audits.episodes == len(audited)
    assert audits.state_unchanged.passed == audits.state_unchanged.total == len(audited)
    # n of n: the exact interval is [0.025^(1/n), 1]
    assert audits.state_unchanged.ci == (pytest.approx(0.025 ** (1 / len(audited))), 1.0)
    assert "State audits" in render_text(report)

    evidence = RunEvidence(outcome.run_id, "", "", "", {("scripted", "blind"): []})
    rules = GateFile((Rule("audit.state_unchanged", "scripted/blind", 50.0, "min"),
                      Rule("audit.safe_writes", "scripted/blind", 99.9, "min")), None)
    gated = gate_run(evidence, {"scripted/blind": report.streams[0]}, rules, 0.0)
    safe = audits.safe_writes
    assert gated.results[0].verdict == Verdict.PASS
    assert gated.results[1].value.estimate == pytest.approx(100 * safe.passed / safe.total)
    assert gated.results[1].verdict == Verdict.FAIL  # the whole interval is under 99.9
