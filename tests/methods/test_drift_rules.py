"""drift_rules: evidence in stream order, rules suspected, retired and re-activated on the evidence."""

from __future__ import annotations

from methods.drift_rules import SUSPECT_NOTE, SYSTEM, DriftRulesMethod, Evidence, Thresholds, next_status
from methods.text import clip
from tests.methods.fakes import CannedModel, by_position, record, view

RULE = {"rule": "Refunds over 500 need a manager escalation", "alternative": "Refund directly as documented"}
AGAINST = {"evidence": [{"id": "r1", "verdict": "contradicts"}]}
FOR = {"evidence": [{"id": "r1", "verdict": "supports"}]}


def statuses(*verdicts: str, start: str = "active") -> list[str]:
    status, log, seen = start, [], []
    for i, verdict in enumerate(verdicts):
        log.append(Evidence(i, 0, verdict))
        status = next_status(status, log, Thresholds())
        seen.append(status)
    return seen


def test_status_follows_the_trailing_run_of_evidence() -> None:
    c, s = "contradicts", "supports"
    assert statuses(s, c, s, c) == ["active"] * 4  # single contradictions are noise
    assert statuses(c, c, c, c) == ["active", "suspect", "suspect", "retired"]
    assert statuses(c, c, s) == ["active", "suspect", "active"]
    assert statuses(s, c, s, s, start="retired") == ["retired", "retired", "retired", "active"]


async def test_a_rule_is_suspected_retired_and_re_activated_on_the_evidence() -> None:
    replies = {1: {"new_rules": [RULE]}, 2: AGAINST, 3: AGAINST, 4: AGAINST, 5: AGAINST, 6: FOR, 7: FOR}
    method = DriftRulesMethod(CannedModel(by_position(replies)), "retail")
    await method.learn([record(1)])
    assert method.context(view(2, "x")).endswith(
        "### Active rules\n- Refunds over 500 need a manager escalation (last confirmed at t=1)")
    await method.learn([record(2, reward=0.0), record(3, reward=0.0)])
    context = method.context(view(4, "x"))
    assert "### Active rules" not in context
    assert context.endswith(f"### Suspect rules\n{SUSPECT_NOTE}\n- Refunds over 500 need a manager escalation "
                            "(last confirmed at t=1; contradicted at t=2, t=3). "
                            "Alternative to test: Refund directly as documented")
    await method.learn([record(4, reward=0.0), record(5, reward=0.0)])
    assert [r.status for r in method.rules()] == ["retired"]
    assert method.context(view(6, "x")) == ""
    await method.learn([record(6)])
    assert [r.status for r in method.rules()] == ["retired"]
    await method.learn([record(7)])
    rule = method.rules()[0]
    assert (rule.status, rule.last_confirmed) == ("active", 7)
    assert [(e.position, e.score, e.verdict) for e in rule.evidence] == [
        (1, 100, "supports"), (2, 0, "contradicts"), (3, 0, "contradicts"), (4, 0, "contradicts"),
        (5, 0, "contradicts"), (6, 100, "supports"), (7, 100, "supports")]


async def test_re_proposing_a_retired_rule_counts_as_its_support() -> None:
    restated = {"new_rules": [{"rule": "refunds over 500 need a manager escalation.", "alternative": ""}]}
    replies = {1: {"new_rules": [RULE]}, 2: AGAINST, 3: AGAINST, 4: AGAINST, 5: AGAINST, 6: restated, 7: restated}
    method = DriftRulesMethod(CannedModel(by_position(replies)), "retail")
    await method.learn([record(1)])
    await method.learn([record(p) for p in range(2, 6)])
    assert [r.status for r in method.rules()] == ["retired"]
    await method.learn([record(6), record(7)])
    assert [(r.id, r.status) for r in method.rules()] == [(1, "active")]


async def test_the_extraction_call_sees_the_rules_and_the_record() -> None:
    model = CannedModel(by_position({1: {"new_rules": [RULE, {"rule": "Second", "alternative": ""},
                                                       {"rule": "Third is one too many"}]}}))
    method = DriftRulesMethod(model, "retail")
    await method.learn([record(1)])
    second = record(2, reward=0.0)
    await method.learn([second])
    request = model.requests[1]
    assert request.purpose == "method" and request.tools == () and request.system == SYSTEM
    assert request.messages[0].content == (
        "## Rules\nr1 [active] Refunds over 500 need a manager escalation | alternative: Refund directly as "
        "documented\nr2 [active] Second\n\n## Episode at stream position 2, score 0/100\n"
        f"{clip(second.render(), 60_000)}")
    assert model.users()[0].startswith("## Rules\n(none yet)\n\n")


async def test_malformed_replies_and_unknown_ids_change_nothing() -> None:
    replies = {1: {"new_rules": [RULE]}, 2: "no", 3: '{"evidence": [{"id": "r9", "verdict": "contradicts"}, '
               '{"id": "r1", "verdict": "maybe"}, {"id": "r1"}], "new_rules": [{"rule": ""}, 4]}', 4: "[1, 2"}
    method = DriftRulesMethod(CannedModel(by_position(replies)), "retail")
    await method.learn([record(1)])
    before = method.state()
    await method.learn([record(2), record(3), record(4)])
    assert method.state() == before


async def test_the_store_is_capped_evicting_retired_rules_first() -> None:
    replies = {1: {"new_rules": [RULE]}, 2: AGAINST, 3: AGAINST, 4: AGAINST, 5: AGAINST,
               6: {"new_rules": [{"rule": "Exchanges need a receipt"}, {"rule": "Wires abroad are held"}]}}
    method = DriftRulesMethod(CannedModel(by_position(replies)), "retail", cap=2)
    await method.learn([record(1)])
    await method.learn([record(p) for p in range(2, 7)])
    assert [(r.id, r.status) for r in method.rules()] == [(2, "active"), (3, "active")]


async def test_evidence_may_name_only_rules_the_model_was_shown() -> None:
    # Episode 1 creates r1; episode 2 of the same block was shown no rules, so its "r1" is invented.
    replies = {1: {"new_rules": [RULE]}, 2: AGAINST, 3: AGAINST}
    method = DriftRulesMethod(CannedModel(by_position(replies)), "retail")
    await method.learn([record(1), record(2), record(3)])
    assert [len(r.evidence) for r in method.rules()] == [1]
