"""Every branch of every official banking tool: the observation and the state the public reference
produces, on a hand-written world in the export's schema (it carries `_episode_view`).

Reference files (Infini-AI-Lab/ServeLearnBench, servelearnbench/): `domains/banking/tools.py`
(`_find_case`, `Get*Details.invoke`, `_decide`, `DenyCase.invoke`), `domains/banking/l2/tools.py`
(`GetCaseDetailsL2`, `ApproveCaseL2`, `DenyCaseL2`, `EscalateCaseL2`, `_normalise`, `ExecuteLegL2`,
`DecideBatchL2`; l3/tools.py is the same with L3 names), `domains/banking/l1|l2|l3/rules.py`
(`REASONS`), `engine/env.py` (`apply_episode_view`, `Env.step`: errors become `Error: ...`).
Observations are taken through `ToolSession`, as an agent gets them.
"""

from __future__ import annotations

import json
from collections.abc import Mapping

import pytest

from simulators.canonical import canonical_hash
from simulators.domains.banking import DOMAIN
from simulators.protocol import JSON, Evaluator, ScenarioEnvironment, Task, ToolCall, Window
from simulators.session import ToolSession

ACCOUNT = {"account_id": "ACC-100001", "holder": "Zoë Ávila", "verification": "basic", "standing": "good",
           "tenure_years": 4, "credit_limit": 3000, "today_total": 120.5}
WORLD: dict[str, JSON] = {
    "accounts": {"ACC-100001": ACCOUNT,
                 "ACC-100002": {"account_id": "ACC-100002", "verification": "verified", "standing": "good"}},
    "merchants": {"MER-401": {"merchant_id": "MER-401", "name": "Garnet Loft", "category": "jewelry",
                              "region": "overseas"}},
    "payees": {"PAY-405": {"payee_id": "PAY-405", "name": "Harrowgate", "added_days_ago": 11},
               "PAY-433": {"payee_id": "PAY-433", "name": "Lindenmoor", "added_days_ago": 512}},
    "transactions": {
        "TXN-500001": {"case_id": "TXN-500001", "kind": "card_transaction", "account_id": "ACC-100001",
                       "merchant_id": "MER-401", "amount": 244.9, "status": "pending", "reason": None},
        "TXN-500002": {"case_id": "TXN-500002", "kind": "card_transaction", "account_id": "ACC-100002",
                       "merchant_id": "MER-401", "legs": [{"leg": 1, "amount": 900.0}, {"leg": 2, "amount": 300.0}],
                       "status": "pending", "reason": None, "_accept": ["over_limit", "daily_cap"]},
    },
    "limit_requests": {},
    "transfers": {
        "TRF-600001": {"case_id": "TRF-600001", "kind": "payment_batch", "account_id": "ACC-100001",
                       "lines": [{"line": 1, "payee_id": "PAY-405", "amount": 7015.85, "status": "pending",
                                  "reason": None},
                                 {"line": 2, "payee_id": "PAY-433", "amount": 2210.4, "status": "pending",
                                  "reason": None}],
                       "status": "pending"},
    },
    "_episode_view": {"kind": "banking"},
}


def _tool(name: str) -> dict[str, JSON]:
    return {"type": "function", "function": {"name": name, "parameters": {"type": "object", "properties": {
        "case_id": {"type": "string"}, "leg": {"type": "integer"}}, "required": ["case_id"]}}}


TOOLS = tuple(_tool(name) for name in (
    "get_case_details", "get_account_details", "get_merchant_details", "get_payee_details", "approve_case",
    "deny_case", "escalate_case", "execute_leg", "decide_batch", "finish"))


class Episode:
    def __init__(self, case_id: str, tier: str = "L2", world: Mapping[str, JSON] = WORLD) -> None:
        environment = ScenarioEnvironment("", TOOLS, {}, world, (Window(0, 1, ""),))
        task = Task("t", f"banking_{tier.lower()}", "banking", tier, "test", 0, 1, "hidden",
                    f"Current timestamp: 1\n\nCase {case_id}.", Evaluator("adapt", "f", (), None, {"case_id": case_id}))
        self.world = DOMAIN.new_world(environment, task)
        self.session = ToolSession(environment, self.world)

    def __call__(self, name: str, **arguments: JSON) -> str:
        return self.session.execute(ToolCall("c", name, json.dumps(arguments))).observation

    def case(self, case_id: str) -> dict[str, JSON]:
        snapshot = self.world.snapshot()
        assert isinstance(snapshot, dict)
        case: dict[str, JSON] = snapshot["cases"][case_id]
        return case


# ------------------------------------------------------------------------------------------ lookups

def test_lookups_show_every_shared_record_in_json_dumps_form() -> None:
    """tools.py `GetAccountDetails` etc.: `json.dumps(record)`, no scope on accounts, merchants, payees."""
    run = Episode("TXN-500001")
    assert run("get_account_details", account_id="ACC-100001") == json.dumps(ACCOUNT)
    assert '"holder": "Zo\\u00eb \\u00c1vila"' in run("get_account_details", account_id="ACC-100001")
    assert run("get_account_details", account_id="ACC-100002").startswith('{"account_id": "ACC-100002", ')
    assert run("get_merchant_details", merchant_id="MER-401") == json.dumps(WORLD["merchants"]["MER-401"])
    assert run("get_payee_details", payee_id="PAY-433") == json.dumps(WORLD["payees"]["PAY-433"])


def test_lookup_misses_name_the_record_kind() -> None:
    run = Episode("TXN-500001")
    assert run("get_account_details", account_id="ACC-999999") == "Error: account not found"
    assert run("get_merchant_details", merchant_id="MER-999") == "Error: merchant not found"
    assert run("get_payee_details", payee_id=42) == "Error: payee not found"
    assert run("get_payee_details", payee_id=["PAY-405"]) == "Error: unhashable type: 'list'"


def test_case_details_show_only_the_episode_case_without_private_keys() -> None:
    """env.py `apply_episode_view`; l2/tools.py `GetCaseDetailsL2` strips `_` keys."""
    run = Episode("TXN-500002")
    shown = json.loads(run("get_case_details", case_id="TXN-500002"))
    assert "_accept" not in shown and shown["legs"][1] == {"leg": 2, "amount": 300.0}
    assert run("get_case_details", case_id="TXN-500001") == "Error: case not found"
    assert run("get_case_details", case_id={"id": 1}) == "Error: unhashable type: 'dict'"


# ------------------------------------------------------------------------------------------ single decisions

def test_approve_deny_escalate_write_status_and_reason() -> None:
    """tools.py `_decide`: `Case <id> <status>` plus ` (<reason>)` when there is one."""
    assert Episode("TXN-500001")("approve_case", case_id="TXN-500001") == "Case TXN-500001 approved"
    deny = Episode("TXN-500001")
    assert deny("deny_case", case_id="TXN-500001", reason="corridor_blocked") == \
        "Case TXN-500001 denied (corridor_blocked)"
    assert deny.case("TXN-500001") | {} == {**WORLD["transactions"]["TXN-500001"], "status": "denied",
                                           "reason": "corridor_blocked"}
    escalate = Episode("TXN-500001")
    assert escalate("escalate_case", case_id="TXN-500001", reason="daily_cap") == \
        "Case TXN-500001 escalated (daily_cap)"


def test_decisions_are_final_and_a_refusal_changes_nothing() -> None:
    run = Episode("TXN-500001")
    run("approve_case", case_id="TXN-500001")
    before = canonical_hash(run.world.snapshot())
    assert run("approve_case", case_id="TXN-500001") == "Error: case already approved — decisions are final"
    assert run("escalate_case", case_id="TXN-500001", reason="over_limit") == \
        "Error: case already approved — decisions are final"
    assert canonical_hash(run.world.snapshot()) == before


def test_reason_code_is_checked_before_the_case() -> None:
    """`DenyCaseL2.invoke` checks `reason not in REASONS` first: even a decided or foreign case answers it."""
    run = Episode("TXN-500001")
    run("approve_case", case_id="TXN-500001")
    assert run("deny_case", case_id="TXN-500001", reason="fraud") == "Error: invalid reason code"
    assert run("deny_case", case_id="TXN-999999", reason="fraud") == "Error: invalid reason code"


@pytest.mark.parametrize(("tier", "code", "accepted"), [
    ("L2", "daily_cap", True), ("L2", "verification_required", False), ("L2", "restricted_payee", False),
    ("L3", "new_payee_review", True), ("L3", "restricted_payee", False),
    ("L1", "verification_required", True), ("L1", "restricted_payee", True), ("L1", "daily_cap", False),
])
def test_each_tier_accepts_its_own_seven_reason_codes(tier: str, code: str, accepted: bool) -> None:
    """l1/rules.py, l2/rules.py, l3/rules.py `REASONS`."""
    run = Episode("TXN-500001", tier)
    observation = run("deny_case", case_id="TXN-500001", reason=code)
    assert observation == (f"Case TXN-500001 denied ({code})" if accepted else "Error: invalid reason code")
    assert run.case("TXN-500001")["status"] == ("denied" if accepted else "pending")


def test_decisions_on_another_case_are_not_found_and_change_nothing() -> None:
    run = Episode("TXN-500001")
    assert run("approve_case", case_id="TXN-500002") == "Error: case not found"
    assert run("escalate_case", case_id="TRF-600001", reason="over_limit") == "Error: case not found"
    assert run("execute_leg", case_id="TXN-500002", leg=1) == "Error: case not found"
    assert run("decide_batch", case_id="TRF-600001", decisions=[]) == "Error: case not found"
    assert run.case("TXN-500001")["status"] == "pending"


# ------------------------------------------------------------------------------------------ ranked alternatives

def test_legs_refuse_approve_and_carry_out_one_leg() -> None:
    run = Episode("TXN-500002")
    assert run("approve_case", case_id="TXN-500002") == \
        "Error: this case lists ranked alternatives — carry one out with execute_leg(case_id, leg)"
    assert run("execute_leg", case_id="TXN-500002", leg=2) == "Case TXN-500002 approved on alternative 2"
    case = run.case("TXN-500002")
    assert (case["status"], case["chosen_leg"], case["reason"]) == ("approved", 2, None)
    assert run("execute_leg", case_id="TXN-500002", leg=1) == "Error: case already approved — decisions are final"


def test_leg_numbers_are_read_as_int_reads_them() -> None:
    """`ExecuteLegL2`: `int(leg)`; text and floats convert, other values are refused."""
    assert Episode("TXN-500002")("execute_leg", case_id="TXN-500002", leg="2") == \
        "Case TXN-500002 approved on alternative 2"
    assert Episode("TXN-500002")("execute_leg", case_id="TXN-500002", leg=1.9) == \
        "Case TXN-500002 approved on alternative 1"
    run = Episode("TXN-500002")
    assert run("execute_leg", case_id="TXN-500002", leg="second") == "Error: leg must be an integer"
    assert run("execute_leg", case_id="TXN-500002", leg=None) == "Error: leg must be an integer"
    assert run("execute_leg", case_id="TXN-500002", leg=3) == "Error: no such alternative (this case lists legs 1..2)"
    assert run.case("TXN-500002")["status"] == "pending"


def test_execute_leg_checks_form_then_finality_then_the_leg() -> None:
    single = Episode("TXN-500001")
    assert single("execute_leg", case_id="TXN-500001", leg="x") == \
        "Error: this case has no alternatives — decide it with approve_case / deny_case / escalate_case"
    run = Episode("TXN-500002")
    run("deny_case", case_id="TXN-500002", reason="corridor_blocked")
    assert run("execute_leg", case_id="TXN-500002", leg="x") == "Error: case already denied — decisions are final"


def test_a_refusal_on_legs_lands_admissible_codes_on_one_state() -> None:
    """l2/tools.py `_normalise`: a code in `_accept` is stored as the set's first code."""
    daily, limit = Episode("TXN-500002"), Episode("TXN-500002")
    assert daily("escalate_case", case_id="TXN-500002", reason="daily_cap") == \
        "Case TXN-500002 escalated (over_limit)"
    limit("escalate_case", case_id="TXN-500002", reason="over_limit")
    assert daily.world.snapshot() == limit.world.snapshot()
    other = Episode("TXN-500002")
    assert other("escalate_case", case_id="TXN-500002", reason="corridor_blocked") == \
        "Case TXN-500002 escalated (corridor_blocked)"


# ------------------------------------------------------------------------------------------ payment batches

def test_batch_refuses_single_decisions() -> None:
    run = Episode("TRF-600001")
    hint = "Error: this case is a payment batch — settle it with decide_batch(case_id, decisions)"
    assert run("approve_case", case_id="TRF-600001") == hint
    assert run("deny_case", case_id="TRF-600001", reason="reportable_amount") == hint
    assert run("escalate_case", case_id="TRF-600001", reason="reportable_amount") == hint
    assert Episode("TXN-500001")("decide_batch", case_id="TXN-500001", decisions=[]) == \
        "Error: this case is not a payment batch — decide it with approve_case / deny_case / escalate_case"


def test_batch_settles_every_line_and_keeps_the_last_entry_of_a_line() -> None:
    run = Episode("TRF-600001")
    decisions = [{"line": "1", "action": "approve"}, {"line": 2, "action": " Escalate ", "reason": "reportable_amount"},
                 {"line": 1.0, "action": "escalate", "reason": "new_payee_review"}]
    assert run("decide_batch", case_id="TRF-600001", decisions=decisions) == "Batch TRF-600001 settled (2 lines)"
    case = run.case("TRF-600001")
    assert case["status"] == "settled" and "reason" not in case
    assert [(line["status"], line["reason"]) for line in case["lines"]] == [
        ("escalated", "new_payee_review"), ("escalated", "reportable_amount")]
    assert run("decide_batch", case_id="TRF-600001", decisions="x") == \
        "Error: case already settled — decisions are final"


@pytest.mark.parametrize(("decisions", "error"), [
    ("all approve", "decisions must be a list of per-line objects"),
    (["approve"], "each decision must be an object"),
    ([{"line": "first", "action": "approve"}], "each decision needs an integer `line`"),
    ([{"action": "approve"}], "each decision needs an integer `line`"),
    ([{"line": 1, "action": "hold"}], "each decision needs action = approve | escalate | deny"),
    ([{"line": 1, "action": True}], "each decision needs action = approve | escalate | deny"),
    ([{"line": 1, "action": "deny"}], "invalid reason code"),
    ([{"line": 1, "action": "deny", "reason": "restricted_payee"}], "invalid reason code"),
    ([{"line": 1, "action": "approve"}], "decide every line exactly once (this batch has lines [1, 2])"),
    ([{"line": 1, "action": "approve"}, {"line": 2, "action": "approve"}, {"line": 3, "action": "approve"}],
     "decide every line exactly once (this batch has lines [1, 2])"),
])
def test_a_bad_batch_is_refused_whole(decisions: JSON, error: str) -> None:
    run = Episode("TRF-600001")
    assert run("decide_batch", case_id="TRF-600001", decisions=decisions) == f"Error: {error}"
    assert run.case("TRF-600001") == WORLD["transfers"]["TRF-600001"]


def test_an_approved_line_drops_any_reason_given() -> None:
    run = Episode("TRF-600001")
    run("decide_batch", case_id="TRF-600001", decisions=[
        {"line": 1, "action": "approve", "reason": "nonsense"}, {"line": 2, "action": "approve"}])
    assert [line["reason"] for line in run.case("TRF-600001")["lines"]] == [None, None]


# ------------------------------------------------------------------------------------------ arguments

@pytest.mark.parametrize(("tier", "call", "arguments", "error"), [
    ("L2", "deny_case", {"case_id": "TXN-500001"},
     "DenyCaseL2.invoke() missing 1 required positional argument: 'reason'"),
    ("L3", "deny_case", {}, "DenyCaseL3.invoke() missing 2 required positional arguments: 'case_id' and 'reason'"),
    ("L1", "approve_case", {"case_id": "TXN-500001", "note": "x"},
     "ApproveCase.invoke() got an unexpected keyword argument 'note'"),
    ("L2", "get_account_details", {}, "GetAccountDetails.invoke() missing 1 required positional argument: "
                                      "'account_id'"),
    ("L2", "execute_leg", {"case_id": "TXN-500002", "data": {}},
     "ExecuteLegL2.invoke() got multiple values for keyword argument 'data'"),
])
def test_bad_arguments_answer_with_pythons_text_for_the_reference_class(
        tier: str, call: str, arguments: dict[str, JSON], error: str) -> None:
    """Env.step calls `invoke(data=..., **kwargs)`; no schema is checked first (agent.py `run_turns`)."""
    run = Episode("TXN-500001", tier)
    assert run(call, **arguments) == f"Error: {error}"
