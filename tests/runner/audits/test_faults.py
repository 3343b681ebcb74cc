"""Fault audits on scripted runs: every verdict reachable offline, and a control that does not
reproduce the recording makes the case missing."""

from __future__ import annotations

from pathlib import Path

import orjson

from runner.audits.faults import FaultSpec, run_fault_audit
from runner.config.settings import SweepConfig
from runner.journal import Batch, open_journal
from runner.schedule.sweep import start_sweep
from tests.support import quiet


async def sweep(suite: Path, journal: Path, models: tuple[str, ...], scenario: str) -> str:
    config = SweepConfig(models=models, methods=("blind",), scenarios=(scenario,), dataset=str(suite), pilot=2)
    outcome = await start_sweep(config, journal, "none", quiet)
    assert outcome.status == "completed"
    return outcome.run_id


def by_model(cases: list[dict[str, object]]) -> dict[str, set[str]]:
    found: dict[str, set[str]] = {}
    for case in cases:
        if case["verdict"] != "not_applicable":
            found.setdefault(str(case["case"]).split("|")[0], set()).add(str(case["verdict"]))
    return found


async def test_recovering_recovers_reckless_acts_wrongly_on_a_failed_write(built_suite: Path, tmp_path: Path) -> None:
    journal = tmp_path / "j.sqlite"
    run_id = await sweep(built_suite, journal, ("scripted:recovering", "scripted:reckless"), "retail_l1")
    report = await run_fault_audit(journal, run_id, FaultSpec("modify_pending_order_items", "error"))
    assert report.status == "completed"
    assert by_model(report.cases) == {"scripted:recovering": {"recovered"}, "scripted:reckless": {"acted_wrongly"}}
    counts = report.verdicts
    assert set(counts) == {"recovered", "escalated", "acted_wrongly", "failed", "missing", "not_applicable"}
    assert counts["recovered"] == counts["acted_wrongly"] > 0


async def test_a_failed_decision_is_escalated_and_a_diverging_control_is_missing(built_suite: Path,
                                                                                  tmp_path: Path) -> None:
    journal = tmp_path / "j.sqlite"
    run_id = await sweep(built_suite, journal, ("scripted:recovering",), "banking_l1")
    spec = FaultSpec("approve_case", "timeout")
    first = await run_fault_audit(journal, run_id, spec)
    assert first.verdicts["escalated"] > 0 and first.verdicts["missing"] == 0
    assert {c["verdict"] for c in first.cases} <= {"escalated", "not_applicable"}

    # Tamper with one recorded approval: the replay's control no longer reproduces it.
    victim = next(c for c in first.cases if c["verdict"] == "escalated")
    async with open_journal(journal, create=False) as db:
        row = await db.read.fetchone("SELECT record FROM episodes WHERE run_id = ? AND unit_id = ?",
                                     (run_id, victim["case"]))
        assert row is not None
        record = orjson.loads(row[0])
        step = next(s for s in record["steps"] if s["action_name"] == "approve_case")
        step["action_arguments"] = '{"case_id": "CASE-OTHER"}'
        await db.commit(Batch().add("UPDATE episodes SET record = ? WHERE run_id = ? AND unit_id = ?",
                                    (orjson.dumps(record), run_id, victim["case"])))
    again = await run_fault_audit(journal, run_id, FaultSpec("approve_case", "timeout", nth=1))
    # Same audit id (run, spec, code version): finished cases are kept, nothing is replayed twice.
    assert again.audit_id == first.audit_id and again.verdicts == first.verdicts
    other = await run_fault_audit(journal, run_id, FaultSpec("approve_case", "error"))
    assert other.audit_id != first.audit_id
    missing = [c for c in other.cases if c["verdict"] == "missing"]
    assert [c["case"] for c in missing] == [victim["case"]]
