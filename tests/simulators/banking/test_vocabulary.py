"""The banking vocabulary: one reader of rules and one text form of a decision, shared by every reader."""

from __future__ import annotations

import pytest

from methods.tabular import banking_units as tabular
from simulators.domains.banking import rules
from simulators.domains.banking.vocabulary import APPROVE, CONDITIONS, Verdict, holds, read_rule


@pytest.mark.parametrize("label", ["approve", "deny:corridor_blocked", "escalate:daily_cap"])
def test_a_decision_label_round_trips(label: str) -> None:
    assert Verdict.from_label(label).label == label


def test_the_label_and_the_reference_key() -> None:
    assert APPROVE.label == "approve" and APPROVE.key == "approve:None"
    assert Verdict("deny", "over_limit").key == Verdict("deny", "over_limit").label == "deny:over_limit"


def test_read_rule_keeps_what_it_cannot_evaluate_visible() -> None:
    text = read_rule("r", {"applies_to": "outbound_transfer", "action": "deny", "reason": "restricted_payee",
                           "when": {"payee_id_in": ["PAY-1"], "moon_phase_in": ["full"]}, "enabled": False})
    assert text is not None and text.unknown_conditions == ("moon_phase_in",) and not text.enabled
    assert read_rule("r", {"applies_to": "card_transaction", "action": "approve", "reason": "x"}) is None
    assert read_rule("r", {"applies_to": "card_transaction", "action": "deny", "reason": "x", "order": True}) is None


def test_holds_by_shape() -> None:
    assert holds(CONDITIONS["payee_flag_in"], ["watchlist", "sanctions"], ["sanctions"])
    assert not holds(CONDITIONS["region_in"], "domestic", "domestic")  # a bound must be a list
    assert holds(CONDITIONS["amount_over"], 500.01, 500) and not holds(CONDITIONS["amount_over"], 500, 500)
    assert holds(CONDITIONS["tenure_years_under"], 1, 2) and not holds(CONDITIONS["tenure_years_under"], None, 2)


def test_the_engine_and_the_tabular_adapter_read_one_schema() -> None:
    assert set(rules.CONDITIONS) == set(CONDITIONS)
    assert set(tabular.FEATURE) == set(CONDITIONS) - {"payee_id_in"}
    assert tabular.REASONS == rules.REASON_CODES and tabular.KINDS["TRF"] == "outbound_transfer"
