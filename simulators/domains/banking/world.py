"""One episode's banking world with the public reference's semantics, tool by tool.

Reference: `servelearnbench/domains/banking/tools.py` (lookups, `_decide`), `l2/tools.py` and
`l3/tools.py` (approve / deny / escalate on multi-part cases, `execute_leg`, `decide_batch`), and
`engine/env.py` (`apply_episode_view`, errors become observations). What an agent sees:

- Scope: every account, merchant and payee can be looked up; of the cases only the episode's own
  (the evaluator's `case_id`, else the first case id of the instruction that exists). Other case
  ids are "case not found" in every tool.
- Lookups return the record as Python's `json.dumps` writes it; a case without its evaluator-private
  `_` keys.
- Decisions write onto the case and are final: a case that has left `pending` refuses another
  decision ("case already approved — decisions are final") and keeps its state. A refused call
  changes nothing, so the grader simply compares final states (no penalty log).
- Checks run in the reference's order: deny/escalate check the reason code before anything else;
  execute_leg and decide_batch check that the case exists, has that form and is still pending
  before they look at their arguments.
- `leg` and a batch line's `line` are read as `int()` reads them (`"2"` -> 2); a line given twice
  keeps its last entry; every line must be decided.
- Reason codes: the tier's seven (`vocabulary.REFERENCE_REASON_CODES`) on a dataset in the export's
  schema (its world carries `_episode_view`), the built-in suite's nine otherwise. That is the one
  difference between the two: the built-in suite follows these semantics too.
- A missing or unexpected argument is Python's TypeError text for the reference's tool class, so
  this world checks its own arguments (the session skips its schema check for it).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

import orjson

from simulators.domains.banking.records import ENTITY_TABLES, case_ids_in, find_case, public_view
from simulators.domains.banking.vocabulary import REASON_CODES, REFERENCE_REASON_CODES
from simulators.errors import ToolError
from simulators.protocol import JSON, ScenarioEnvironment, Task
from simulators.pycompat import py_int, py_json, signature_error, unhashable_error

__all__ = ["BankingWorld", "episode_case_id", "is_export_world", "new_world", "reason_codes_for"]

_STATUS = {"approve": "approved", "deny": "denied", "escalate": "escalated"}
_LEGS_HINT = "this case lists ranked alternatives — carry one out with execute_leg(case_id, leg)"
_BATCH_HINT = "this case is a payment batch — settle it with decide_batch(case_id, decisions)"
_SINGLE_HINT = "decide it with approve_case / deny_case / escalate_case"


@dataclass(frozen=True)
class _Signature:
    """A reference tool's keyword parameters and the class whose `invoke` owns them, per tier
    (the L2/L3 subclasses override some methods and inherit others, which shows in the errors)."""

    classes: Mapping[str, str]
    required: tuple[str, ...]
    optional: tuple[str, ...] = ()

    def error(self, tier: str, arguments: Mapping[str, JSON]) -> str | None:
        qualname = f"{self.classes.get(tier, self.classes['L2'])}.invoke"
        if "data" in arguments:
            return f"{qualname}() got multiple values for keyword argument 'data'"
        return signature_error(qualname, self.required, self.optional, arguments)


def _same(name: str) -> dict[str, str]:
    return {"L1": name, "L2": name, "L3": name}


def _tiered(name: str) -> dict[str, str]:
    return {"L1": name, "L2": f"{name}L2", "L3": f"{name}L3"}


_SIGNATURES: dict[str, _Signature] = {
    "get_case_details": _Signature(_tiered("GetCaseDetails"), ("case_id",)),
    "get_account_details": _Signature(_same("GetAccountDetails"), ("account_id",)),
    "get_merchant_details": _Signature(_same("GetMerchantDetails"), ("merchant_id",)),
    "get_payee_details": _Signature(_same("GetPayeeDetails"), ("payee_id",)),
    "approve_case": _Signature(_tiered("ApproveCase"), ("case_id",)),
    "deny_case": _Signature(_tiered("DenyCase"), ("case_id", "reason")),
    "escalate_case": _Signature(_tiered("EscalateCase"), ("case_id", "reason")),
    "execute_leg": _Signature(_tiered("ExecuteLeg"), ("case_id", "leg")),
    "decide_batch": _Signature(_tiered("DecideBatch"), ("case_id", "decisions")),
}


def is_export_world(world: Mapping[str, JSON]) -> bool:
    """A world in the public export's schema: its loader marks it with `_episode_view`."""
    return "_episode_view" in world


def reason_codes_for(environment: ScenarioEnvironment, tier: str) -> tuple[str, ...]:
    if is_export_world(environment.world):
        return REFERENCE_REASON_CODES.get(tier.upper(), REFERENCE_REASON_CODES["L2"])
    return REASON_CODES


def episode_case_id(environment: ScenarioEnvironment, task: Task) -> str | None:
    """The case an episode is about: the evaluator's `case_id` (as the reference scopes it), else the
    first case id of the instruction that exists in the world."""
    named = task.evaluator.metadata.get("case_id")
    if isinstance(named, str) and find_case(environment.world, named) is not None:
        return named
    for case_id in case_ids_in(task.instruction):
        if find_case(environment.world, case_id) is not None:
            return case_id
    return None


def new_world(environment: ScenarioEnvironment, task: Task) -> BankingWorld:
    return BankingWorld(environment.world, episode_case_id(environment, task),
                        reason_codes_for(environment, task.tier), task.tier.upper())


class BankingWorld:
    checks_own_arguments = True
    """The session passes arguments through unchecked: this world answers a bad call as the
    reference does."""

    def __init__(self, world: Mapping[str, JSON], case_id: str | None,
                 reason_codes: tuple[str, ...] = REASON_CODES, tier: str = "L2") -> None:
        self._world = world
        record = find_case(world, case_id) if case_id else None
        self._case_id = case_id if record is not None else None
        # orjson round trip: a deep copy of the one mutable record, several times faster than deepcopy
        self._case: dict[str, JSON] | None = orjson.loads(orjson.dumps(record)) if record else None
        self._reasons = reason_codes
        self._tier = tier
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

    @property
    def reason_codes(self) -> tuple[str, ...]:
        return self._reasons

    # ------------------------------------------------------------------------------ protocol

    def call(self, name: str, arguments: Mapping[str, JSON]) -> str:
        tool = self._tools.get(name)
        if tool is None:
            raise ToolError(f"tool '{name}' is not available in this environment")
        problem = _SIGNATURES[name].error(self._tier, arguments)
        if problem:
            raise ToolError(problem)
        return tool(arguments)

    def snapshot(self) -> JSON:
        """The graded state: the episode's case (nothing else can change)."""
        cases = {self._case_id: self._case} if self._case_id else {}
        return orjson.loads(orjson.dumps({"cases": cases}))

    # ------------------------------------------------------------------------------ lookups

    def _find(self, case_id: JSON) -> dict[str, JSON] | None:
        """The episode's case when `case_id` names it; any other id is not found."""
        problem = unhashable_error(case_id)
        if problem:
            raise ToolError(problem)
        return self._case if self._case is not None and case_id == self._case_id else None

    def _existing(self, case_id: JSON) -> dict[str, JSON]:
        case = self._find(case_id)
        if case is None:
            raise ToolError("case not found")
        return case

    def _get_case_details(self, arguments: Mapping[str, JSON]) -> str:
        return py_json(public_view(self._existing(arguments["case_id"])))

    def _lookup(self, tool: str, arguments: Mapping[str, JSON]) -> str:
        table, argument = ENTITY_TABLES[tool]
        wanted = arguments[argument]
        problem = unhashable_error(wanted)
        if problem:
            raise ToolError(problem)
        records = self._world.get(table, {})
        record = records.get(wanted) if isinstance(records, dict) else None
        if record is None:
            raise ToolError(f"{argument.removesuffix('_id')} not found")
        return py_json(record)

    # ------------------------------------------------------------------------------ decisions

    def _decide(self, case_id: JSON, status: str, reason: str | None) -> str:
        case = self._existing(case_id)
        _require_pending(case)
        case["status"], case["reason"] = status, reason
        return f"Case {case_id} {status}" + (f" ({reason})" if reason else "")

    def _approve_case(self, arguments: Mapping[str, JSON]) -> str:
        case = self._find(arguments["case_id"]) or {}
        if case.get("legs"):
            raise ToolError(_LEGS_HINT)
        if case.get("lines"):
            raise ToolError(_BATCH_HINT)
        return self._decide(arguments["case_id"], "approved", None)

    def _refuse_case(self, action: str, arguments: Mapping[str, JSON]) -> str:
        reason = arguments["reason"]
        if reason not in self._reasons:
            raise ToolError("invalid reason code")
        case = self._find(arguments["case_id"]) or {}
        if case.get("lines"):
            raise ToolError(_BATCH_HINT)
        accepted = case.get("_accept")
        if isinstance(accepted, list) and accepted and reason in accepted:
            reason = accepted[0]  # every admissible code lands on one graded state
        return self._decide(arguments["case_id"], _STATUS[action], str(reason))

    def _execute_leg(self, arguments: Mapping[str, JSON]) -> str:
        case_id = arguments["case_id"]
        case = self._existing(case_id)
        legs = case.get("legs")
        if not legs or not isinstance(legs, list):
            raise ToolError(f"this case has no alternatives — {_SINGLE_HINT}")
        _require_pending(case)
        leg = py_int(arguments["leg"])
        if leg is None:
            raise ToolError("leg must be an integer")
        if not any(isinstance(item, dict) and item.get("leg") == leg for item in legs):
            raise ToolError(f"no such alternative (this case lists legs 1..{len(legs)})")
        case["status"], case["chosen_leg"], case["reason"] = "approved", leg, None
        return f"Case {case_id} approved on alternative {leg}"

    def _decide_batch(self, arguments: Mapping[str, JSON]) -> str:
        case_id = arguments["case_id"]
        case = self._existing(case_id)
        lines = case.get("lines")
        if not lines or not isinstance(lines, list):
            raise ToolError(f"this case is not a payment batch — {_SINGLE_HINT}")
        _require_pending(case)
        decided = _batch_decisions(arguments["decisions"], self._reasons)
        wanted = {line.get("line") for line in lines if isinstance(line, dict)}
        if set(decided) != wanted:
            numbers = sorted(n for n in wanted if isinstance(n, int))
            raise ToolError(f"decide every line exactly once (this batch has lines {numbers})")
        for line in lines:
            action, reason = decided[line["line"]]
            line["status"], line["reason"] = _STATUS[action], reason
        case["status"] = "settled"
        return f"Batch {case_id} settled ({len(decided)} lines)"


def _require_pending(case: Mapping[str, JSON]) -> None:
    if case.get("status") != "pending":
        raise ToolError(f"case already {case.get('status')} — decisions are final")


def _batch_decisions(raw: JSON, reasons: tuple[str, ...]) -> dict[int, tuple[str, str | None]]:
    """line -> (action, reason), read entry by entry; a line given twice keeps its last entry.
    The first bad entry refuses the whole call, so nothing is written unless all of it reads."""
    if not isinstance(raw, list):
        raise ToolError("decisions must be a list of per-line objects")
    decided: dict[int, tuple[str, str | None]] = {}
    for entry in raw:
        if not isinstance(entry, dict):
            raise ToolError("each decision must be an object")
        line = py_int(entry.get("line"))
        if line is None:
            raise ToolError("each decision needs an integer `line`")
        action = _action_text(entry.get("action", ""))
        if action not in _STATUS:
            raise ToolError("each decision needs action = approve | escalate | deny")
        reason = entry.get("reason")
        if action != "approve" and reason not in reasons:
            raise ToolError("invalid reason code")
        decided[line] = (action, None if action == "approve" else str(reason))
    return decided


def _action_text(value: JSON) -> str:
    """`str(value).strip().lower()` as the reference reads an action; only text can name one."""
    return value.strip().lower() if isinstance(value, str) else ""
