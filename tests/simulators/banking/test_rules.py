"""The policy model: tolerant parsing, checking order, overlay by rule id."""

from __future__ import annotations

from simulators.domains.banking.rules import APPROVE, Request, Verdict, first_verdict, parse_rules
from simulators.domains.banking.timeline import TIERS, active_policy, category_limit, daily_cap, off
from simulators.policy_block import merged_policy, render_policy_block
from simulators.protocol import JSON


def charge(amount: float, category: str = "electronics", today: float = 0.0) -> Request:
    return Request("card_transaction", amount, merchant={"category": category, "region": "domestic"},
                   today_total=today)


def test_first_matching_rule_by_order_decides() -> None:
    rules = parse_rules({"b_limit": category_limit("electronics", 40, 500.0), "a_daily": daily_cap(1000.0)})
    assert [r.rule_id for r in rules] == ["a_daily", "b_limit"]
    assert first_verdict(rules, charge(600.0, today=600.0)) == Verdict("escalate", "daily_cap")
    assert first_verdict(rules, charge(600.0)) == Verdict("escalate", "over_limit")
    assert first_verdict(rules, charge(400.0)) == APPROVE
    assert first_verdict(rules, charge(900.0, category="travel")) == APPROVE


def test_malformed_disabled_and_unknown_rules_are_skipped() -> None:
    policy: dict[str, JSON] = {
        "off": off(category_limit("electronics", 1, 10.0)),
        "not_a_rule": "escalate everything",
        "bad_action": {**category_limit("electronics", 1, 10.0), "action": "refund"},
        "unknown_condition": {**category_limit("electronics", 1, 10.0), "when": {"moon_phase_in": ["full"]}},
        "bad_order": {**category_limit("electronics", 1, 10.0), "order": "first"},
        "good": category_limit("electronics", 40, 500.0),
    }
    assert [r.rule_id for r in parse_rules(policy)] == ["good"]


def test_a_bulletin_block_overrides_the_documents_rule_by_rule() -> None:
    tier = TIERS[2]
    documents = "manual\n" + render_policy_block(dict(tier.documented))
    bulletin = "today\n" + render_policy_block(active_policy(tier, 0))
    merged = merged_policy(documents, bulletin)
    assert merged == active_policy(tier, 0)
    assert first_verdict(parse_rules(merged), charge(600.0)) == APPROVE  # 700 in force, 500 documented
    assert first_verdict(parse_rules(tier.documented), charge(600.0)) == Verdict("escalate", "over_limit")


def test_every_window_policy_covers_every_documented_rule() -> None:
    for tier in TIERS.values():
        for window in range(tier.windows):
            assert set(tier.documented) <= set(active_policy(tier, window))
