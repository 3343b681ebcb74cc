"""One episode's banking world: its own case, the records that case refers to, and the tools.

Scope: an episode sees one case (named in its instruction) plus the account, merchant and payees
that case refers to; every other id is "not found". Only the case can change, so only the case is
copied; the other records are read from the environment's world, never written.

Decisions are final, as in the public export: a case that has left `pending` refuses another
decision. Every decision call that targets a case is also written to a `decision_log`, accepted or
refused, because a second decision or a decision on another case must cost the episode its
reward even though it changes no case record.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

import orjson

from simulators.domains.banking.records import (
    ENTITY_TABLES,
    case_form,
    case_ids_in,
    find_case,
    public_view,
    referenced_payees,
)
from simulators.domains.banking.rules import REASON_CODES
from simulators.errors import ToolError
from simulators.protocol import JSON, ScenarioEnvironment, Task

__all__ = ["BankingWorld", "episode_case_id", "new_world"]

_STATUS = {"approve": "approved", "deny": "denied", "escalate": "escalated"}


def episode_case_id(environment: ScenarioEnvironment, task: Task) -> str | None:
    """The case an episode is about: the first case id of the instruction that exists in the world,
    else the evaluator's metadata (trusted environment code may read it; the agent never does)."""
    for case_id in case_ids_in(task.instruction):
        if find_case(environment.world, case_id) is not None:
            return case_id
    fallback = task.evaluator.metadata.get("case_id")
    return fallback if isinstance(fallback, str) else None


def new_world(environment: ScenarioEnvironment, task: Task) -> BankingWorld:
    case_id = episode_case_id(environment, task)
    return BankingWorld(environment.world, case_id)


class BankingWorld:
    def __init__(self, world: Mapping[str, JSON], case_id: str | None) -> None:
        self._world = world
        record = find_case(world, case_id) if case_id else None
        self._case_id = case_id if record is not None else None
        # orjson round trip: a deep copy of the one mutable record, several times faster than deepcopy
        self._case: dict[str, JSON] | None = orjson.loads(orjson.dumps(record)) if record else None
        self._log: list[JSON] = []
        self._visible = self._visible_ids()
        self._tools: dict[str, Callable[[Mapping[str, JSON]], str]] = {
            "get_case_details": self._get_case_details,
            "get_account_details": lambda a: self._lookup("get_account_details", a),
            "get_merchant_details": lambda a: self._lookup("get_merchant_details", a),
            "get_payee_details": lambda a: self._lookup("get_payee_details", a),
            "approve_case": self._approve_case,
            "deny_case": lambda a: self._refuse_case("deny", a),
            "escalate_case": lambda a: self._refuse_case("escalate", a),
            "execute_leg": self._execute_leg,
            "decide_batch": self._decide_batch,
        }

    def _visible_ids(self) -> dict[str, frozenset[str]]:
        case = self._case or {}
        ids: dict[str, list[JSON]] = {
            "accounts": [case.get("account_id")],
            "merchants": [case.get("merchant_id")],
            "payees": referenced_payees(case),
        }
        return {table: frozenset(i for i in found if isinstance(i, str)) for table, found in ids.items()}

    # ------------------------------------------------------------------------------ protocol

    def call(self, name: str, arguments: Mapping[str, JSON]) -> str:
        tool = self._tools.get(name)
        if tool is None:
            raise ToolError(f"tool '{name}' is not available in this environment")
        return tool(arguments)

    def snapshot(self) -> JSON:
        cases = {self._case_id: self._case} if self._case_id else {}
        return orjson.loads(orjson.dumps({"cases": cases, "decision_log": self._log}))

    # ------------------------------------------------------------------------------ lookups

    def _get_case_details(self, arguments: Mapping[str, JSON]) -> str:
        case_id = str(arguments.get("case_id", ""))
        if self._case is None or case_id != self._case_id:
            raise ToolError(f"case {case_id} not found")
        return _dumps(public_view(self._case))

    def _lookup(self, tool: str, arguments: Mapping[str, JSON]) -> str:
        table, argument = ENTITY_TABLES[tool]
        wanted = str(arguments.get(argument, ""))
        records = self._world.get(table, {})
        record = records.get(wanted) if isinstance(records, dict) else None
        if wanted not in self._visible[table] or record is None:
            raise ToolError(f"{argument.removesuffix('_id')} {wanted} not found")
        return _dumps(record)

    # ------------------------------------------------------------------------------ decisions

    def _target(self, tool: str, arguments: Mapping[str, JSON]) -> dict[str, JSON]:
        """The case a decision writes to, or a logged refusal when it is not this episode's."""
        case_id = str(arguments.get("case_id", ""))
        if self._case is None or case_id != self._case_id:
            self._log.append({"tool": tool, "case_id": case_id, "accepted": False})
            raise ToolError(f"case {case_id} not found")
        return self._case

    def _commit(self, tool: str, case: dict[str, JSON]) -> None:
        """Refuse a second decision (logged), else log this one as accepted."""
        accepted = case.get("status") == "pending"
        self._log.append({"tool": tool, "case_id": self._case_id, "accepted": accepted})
        if not accepted:
            raise ToolError(f"case {self._case_id} is already {case.get('status')}; decisions are final")

    def _approve_case(self, arguments: Mapping[str, JSON]) -> str:
        case = self._target("approve_case", arguments)
        _require_form(case, "single", "approve_case")
        self._commit("approve_case", case)
        case["status"], case["reason"] = "approved", None
        return f"Case {self._case_id} approved."

    def _refuse_case(self, action: str, arguments: Mapping[str, JSON]) -> str:
        tool = f"{action}_case"
        reason = _valid_reason(arguments.get("reason"))
        case = self._target(tool, arguments)
        if case_form(case) == "batch":
            raise ToolError("this case is a payment batch; settle every line with decide_batch(case_id, decisions)")
        self._commit(tool, case)
        accepted = case.get("_accept")
        if isinstance(accepted, list) and accepted and reason in accepted:
            reason = str(accepted[0])  # equivalent codes land on one graded state
        case["status"], case["reason"] = _STATUS[action], reason
        return f"Case {self._case_id} {_STATUS[action]} ({reason})."

    def _execute_leg(self, arguments: Mapping[str, JSON]) -> str:
        case = self._target("execute_leg", arguments)
        _require_form(case, "legs", "execute_leg")
        leg = arguments.get("leg")
        legs = case.get("legs")
        numbers = [item.get("leg") for item in legs if isinstance(item, dict)] if isinstance(legs, list) else []
        if isinstance(leg, bool) or leg not in numbers:
            raise ToolError(f"no alternative {leg!r}; this case lists legs {numbers}")
        self._commit("execute_leg", case)
        case["status"], case["reason"], case["chosen_leg"] = "approved", None, leg
        return f"Case {self._case_id} approved on alternative {leg}."

    def _decide_batch(self, arguments: Mapping[str, JSON]) -> str:
        case = self._target("decide_batch", arguments)
        _require_form(case, "batch", "decide_batch")
        lines = {line["line"]: line for line in case.get("lines") or []
                 if isinstance(line, dict) and isinstance(line.get("line"), int)}
        decided = _batch_decisions(arguments.get("decisions"), set(lines))
        self._commit("decide_batch", case)
        for number, (action, reason) in decided.items():
            lines[number]["status"], lines[number]["reason"] = _STATUS[action], reason
        case["status"] = "settled"
        return f"Batch {self._case_id} settled ({len(lines)} lines)."


def _dumps(value: JSON) -> str:
    return orjson.dumps(value).decode()


_FORM_HINT = {
    "single": "decide it with approve_case, deny_case or escalate_case",
    "legs": "it lists ranked alternatives; carry one out with execute_leg(case_id, leg), "
            "or deny_case / escalate_case when none can be approved",
    "batch": "it is a payment batch; settle every line with decide_batch(case_id, decisions)",
}


def _require_form(case: Mapping[str, JSON], wanted: str, tool: str) -> None:
    form = case_form(case)
    if form != wanted:
        raise ToolError(f"{tool} does not fit this case: {_FORM_HINT[form]}")


def _valid_reason(reason: JSON) -> str:
    if reason not in REASON_CODES:
        raise ToolError(f"invalid reason code {reason!r}; valid codes: {', '.join(REASON_CODES)}")
    return str(reason)


def _batch_decisions(raw: JSON, wanted: set[int]) -> dict[int, tuple[str, str | None]]:
    """Validate a batch submission: every line exactly once, each with an action and, unless it is
    approve, a valid reason. Nothing is written unless all of it is valid."""
    if not isinstance(raw, list):
        raise ToolError("decisions must be a list of {line, action, reason} objects")
    decided: dict[int, tuple[str, str | None]] = {}
    for entry in raw:
        line = entry.get("line") if isinstance(entry, dict) else None
        action = str(entry.get("action", "")).strip().lower() if isinstance(entry, dict) else ""
        if not isinstance(line, int) or isinstance(line, bool) or action not in _STATUS:
            raise ToolError("each decision needs an integer `line` and action approve, deny or escalate")
        reason = None if action == "approve" else _valid_reason(entry.get("reason"))
        if line in decided:
            raise ToolError(f"line {line} is decided twice; decide every line exactly once")
        decided[line] = (action, reason)
    if set(decided) != wanted:
        raise ToolError(f"decide every line exactly once (this batch has lines {sorted(wanted)})")
    return decided

