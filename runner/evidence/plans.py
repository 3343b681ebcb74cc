"""Pre-registered plans: a question fixed before the money is spent, and held to.

A plan file is TOML: `[plan]` (the comparison, metric, threshold, test, budget, and optionally the MDE it
is sized for and the replicas that buy it) and `[sweep]` (the sweep config, as in a sweep file).
`shiftbench lock PLAN.toml` appends a `[lock]` table: the dataset fingerprint, the code version and a
sha256 over all of it. From then on the file is append-only:
a change is an `[[amendment]]` appended with its reason, its time, the keys it sets and a hash chained
to the one before, so editing the locked part or an earlier amendment breaks a hash and is refused.

`run --plan PLAN.toml` runs the locked sweep with its amendments applied; any config, dataset or code
version differing from that is refused, naming the keys, until an amendment covers it. The run keeps
the plan's hashes and amendments in its config, so every report of the run shows them.
"""

from __future__ import annotations

import hashlib
import re
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, fields, replace
from pathlib import Path
from typing import Any

import orjson

from runner.common.files import write_atomically
from runner.common.toml_tables import Field, check_table, read_toml
from runner.config.settings import RESULT_KEYS, SweepConfig, load_config_file
from simulators.errors import ShiftbenchInputError

__all__ = ["LOCKED_KEYS", "TESTS", "Amendment", "LockedPlan", "amend_plan", "differences", "lock_plan",
           "read_plan", "toml_value"]

TESTS = ("paired_bootstrap", "sign_test")
LOCKED_KEYS = (*RESULT_KEYS, "budget")
"""Config keys a plan freezes: everything that decides results, and the budget."""
PROVENANCE_KEYS = ("dataset_fingerprint", "code_version")
PLAN_TABLES = ("plan", "lock", "amendment")
"""What a plan file holds beside its [sweep]."""
_PLAN_FIELDS = {"question": Field("string"), "comparison": Field("list of strings", 'comparison = ["scripted/tabular", '
                                                                                     '"scripted/blind"]'),
                "metric": Field("non-empty string"), "threshold": Field("number"),
                "test": Field("non-empty string"), "budget": Field("number"), "mde": Field("number"),
                "replicas": Field("whole number", ranged_later=True)}

Clock = Callable[[], float]


@dataclass(frozen=True)
class Amendment:
    reason: str
    at: str
    sets: Mapping[str, Any]
    previous: str
    hash: str


@dataclass(frozen=True)
class LockedPlan:
    path: Path
    plan: Mapping[str, Any]
    config: SweepConfig
    """The sweep as locked, before amendments."""
    dataset_fingerprint: str
    code_version: str
    locked_at: str
    hash: str
    amendments: tuple[Amendment, ...]
    file_sha256: str = ""
    """The plan file's bytes as read: with its absolute path, which file this was wherever it was run."""

    @property
    def head(self) -> str:
        """The hash of the plan as it stands: the last amendment's, or the lock's."""
        return self.amendments[-1].hash if self.amendments else self.hash

    def effective(self) -> tuple[SweepConfig, str, str]:
        """(config, dataset fingerprint, code version) with every amendment applied in order."""
        config, fingerprint, version = self.config, self.dataset_fingerprint, self.code_version
        for amendment in self.amendments:
            sets = dict(amendment.sets)
            fingerprint = str(sets.pop("dataset_fingerprint", fingerprint))
            version = str(sets.pop("code_version", version))
            values: dict[str, Any] = {k: tuple(v) if isinstance(v, list) else v for k, v in sets.items()}
            config = replace(config, **values)
        return config, fingerprint, version

    def summary(self) -> dict[str, Any]:
        """What a run records and its reports show."""
        return {"file": str(self.path.resolve()), "file_sha256": self.file_sha256, "hash": self.hash,
                "head": self.head, "locked_at": self.locked_at, "plan": dict(self.plan),
                "amendments": [{"reason": a.reason, "at": a.at, "sets": dict(a.sets), "hash": a.hash}
                               for a in self.amendments]}


# ---------------------------------------------------------------------------- reading

def read_plan(path: Path) -> tuple[dict[str, Any], LockedPlan | None]:
    """The plan table and, when the file is locked, the checked lock. Raise on any broken hash."""
    raw = _load(path)
    plan = _plan_table(path, raw)
    if "lock" not in raw:
        if "amendment" in raw:
            raise ShiftbenchInputError(f"{path}: has amendments but no [lock]; lock the plan first")
        return plan, None
    config = load_config_file(path, PLAN_TABLES)
    lock = raw["lock"]
    body = _lock_body(plan, config, str(lock.get("dataset_fingerprint", "")), str(lock.get("code_version", "")))
    if lock.get("hash") != _sha(body):
        raise ShiftbenchInputError(f"{path}: the plan was edited after it was locked (its hash no longer "
                                   "matches); restore it and add an amendment instead")
    amendments = _amendments(path, raw.get("amendment", []), str(lock["hash"]))
    locked = LockedPlan(path=path, plan=plan, config=config, dataset_fingerprint=body["dataset_fingerprint"],
                        code_version=body["code_version"], locked_at=str(lock.get("locked_at", "")),
                        hash=str(lock["hash"]), amendments=amendments,
                        file_sha256=hashlib.sha256(path.read_bytes()).hexdigest())
    locked.effective()[0].validate(f"{path} (amended)")
    return plan, locked


def _load(path: Path) -> dict[str, Any]:
    return read_toml(path, "the plan")


def _plan_table(path: Path, raw: dict[str, Any]) -> dict[str, Any]:
    plan = raw.get("plan")
    if not isinstance(plan, dict):
        raise ShiftbenchInputError(f"{path}: no [plan] table; a plan names its comparison, metric, threshold "
                                   "and test")
    check_table(f"{path} [plan]", plan, _PLAN_FIELDS)
    comparison = plan.get("comparison")
    if not (isinstance(comparison, list) and len(comparison) == 2 and all(isinstance(s, str) for s in comparison)):
        raise ShiftbenchInputError(f"{path}: [plan] comparison must name two streams, "
                                   "e.g. [\"scripted/tabular\", \"scripted/blind\"]")
    for key in ("metric", "test"):
        if not isinstance(plan.get(key), str):
            raise ShiftbenchInputError(f"{path}: [plan] needs {key} (a string)")
    if plan["test"] not in TESTS:
        raise ShiftbenchInputError(f"{path}: [plan] test must be one of {', '.join(TESTS)}")
    if "threshold" not in plan:
        raise ShiftbenchInputError(f"{path}: [plan] needs threshold (a number)")
    if "sweep" not in raw:
        raise ShiftbenchInputError(f"{path}: no [sweep] table; a plan fixes the sweep it runs")
    _check_power(path, plan, raw["sweep"])
    return dict(plan)


def _check_power(path: Path, plan: Mapping[str, Any], sweep: Any) -> None:
    """A plan may state the MDE it is sized for (points of its metric, at 80% power; a gate rule
    `mde.avg_h` with `max` = it holds the run to it) and the replicas that buy it, which the sweep runs."""
    mde = plan.get("mde")
    if mde is not None and (isinstance(mde, bool) or not isinstance(mde, (int, float)) or not mde > 0):
        raise ShiftbenchInputError(f"{path}: [plan] mde must be a positive number of points, got {mde!r}")
    replicas = plan.get("replicas")
    if replicas is None:
        return
    if isinstance(replicas, bool) or not isinstance(replicas, int) or replicas < 1:
        raise ShiftbenchInputError(f"{path}: [plan] replicas must be a whole number of at least 1, got {replicas!r}")
    swept = sweep.get("replicas", 1) if isinstance(sweep, dict) else 1
    if swept != replicas:
        raise ShiftbenchInputError(f"{path}: [plan] states replicas = {replicas} but [sweep] runs {swept}; set "
                                   f"replicas = {replicas} in [sweep] (`shiftbench power` sizes it)")


def _lock_body(plan: Mapping[str, Any], config: SweepConfig, fingerprint: str, version: str) -> dict[str, Any]:
    return {"plan": dict(plan), "sweep": _locked_view(config), "dataset_fingerprint": fingerprint,
            "code_version": version}


def _locked_view(config: SweepConfig) -> dict[str, Any]:
    view = {f.name: getattr(config, f.name) for f in fields(config)}
    return {key: view[key] for key in LOCKED_KEYS}


def _sha(body: Mapping[str, Any]) -> str:
    return hashlib.sha256(orjson.dumps(body, option=orjson.OPT_SORT_KEYS)).hexdigest()


def _amendments(path: Path, tables: Any, previous: str) -> tuple[Amendment, ...]:
    if not isinstance(tables, list):
        raise ShiftbenchInputError(f"{path}: amendment must be an array of tables ([[amendment]])")
    result = []
    for number, table in enumerate(tables, start=1):
        sets = table.get("set", {})
        body = {"reason": table.get("reason"), "at": table.get("at"), "set": sets, "previous": previous}
        if table.get("previous") != previous or table.get("hash") != _sha(body):
            raise ShiftbenchInputError(f"{path}: amendment {number} was edited or reordered (its hash chain "
                                       "is broken); amendments are appended, never rewritten")
        result.append(Amendment(reason=str(body["reason"]), at=str(body["at"]), sets=sets, previous=previous,
                                hash=str(table["hash"])))
        previous = str(table["hash"])
    return tuple(result)


# ---------------------------------------------------------------------------- writing (append only)

def lock_plan(path: Path, fingerprint: str, version: str, clock: Clock = time.time) -> str:
    """Append the [lock] table; return the plan's hash. A locked plan is never locked again."""
    plan, locked = read_plan(path)
    if locked is not None:
        raise ShiftbenchInputError(f"{path}: already locked (hash {locked.hash[:12]}); change it with an "
                                   "amendment: shiftbench lock PLAN --amend REASON [run flags]")
    body = _lock_body(plan, load_config_file(path, PLAN_TABLES), fingerprint, version)
    digest = _sha(body)
    _append(path, "lock", {"hash": digest, "locked_at": _iso(clock()), "dataset_fingerprint": fingerprint,
                           "code_version": version})
    return digest


def amend_plan(path: Path, reason: str, sets: Mapping[str, Any], clock: Clock = time.time) -> str:
    """Append one amendment setting `sets` (config keys, or dataset_fingerprint / code_version);
    return its hash."""
    _, locked = read_plan(path)
    if locked is None:
        raise ShiftbenchInputError(f"{path}: not locked yet; `shiftbench lock {path}` first")
    if not reason.strip():
        raise ShiftbenchInputError("--amend: give the reason for the amendment")
    unknown = sorted(set(sets) - set(LOCKED_KEYS) - set(PROVENANCE_KEYS))
    if unknown:
        raise ShiftbenchInputError(f"--amend: {unknown[0]} is not something a plan locks")
    if not sets:
        raise ShiftbenchInputError("--amend: nothing changes; name the new values with run flags "
                                   "(e.g. --scenarios ...)")
    # TOML has no null: a key set to None (no budget) is left out, so the hash covers what is written.
    plain = {key: list(value) if isinstance(value, tuple) else value for key, value in sets.items()
             if value is not None}
    body = {"reason": reason, "at": _iso(clock()), "set": plain, "previous": locked.head}
    digest = _sha(body)
    _append(path, "[amendment]", {**body, "hash": digest})
    return digest


def differences(locked: LockedPlan, config: SweepConfig, fingerprint: str, version: str) -> dict[str, Any]:
    """Key -> the value this run would use, for every locked key the run does not match."""
    planned, planned_fingerprint, planned_version = locked.effective()
    want, have = _locked_view(planned), _locked_view(config)
    changed: dict[str, Any] = {key: have[key] for key in LOCKED_KEYS if want[key] != have[key]}
    if fingerprint != planned_fingerprint:
        changed["dataset_fingerprint"] = fingerprint
    if version != planned_version:
        changed["code_version"] = version
    return changed


def _iso(moment: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(moment))


def _append(path: Path, table: str, values: Mapping[str, Any]) -> None:
    text = path.read_text(encoding="utf-8")
    lead = "" if text.endswith("\n") else "\n"
    lines = [f"{lead}\n[{table}]"] + [f"{key} = {toml_value(value)}" for key, value in values.items()
                                      if value is not None]
    # The whole file rewritten and renamed into place: a full disk or a crash never leaves half a [lock].
    write_atomically(path, text + "\n".join(lines) + "\n", "lock")


def toml_value(value: Any) -> str:
    """A TOML value for what a plan holds: strings, numbers, booleans, lists and tables of them."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (str, int, float)):
        # A JSON string or number is a valid TOML one (same escapes, same number forms).
        return orjson.dumps(value).decode()
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(toml_value(item) for item in value) + "]"
    if isinstance(value, Mapping):
        return "{" + ", ".join(f"{_toml_key(str(k))} = {toml_value(v)}"
                               for k, v in value.items() if v is not None) + "}"
    raise TypeError(f"cannot write {type(value).__name__} to a plan")


def _toml_key(key: str) -> str:
    return key if re.fullmatch(r"[A-Za-z0-9_-]+", key) else orjson.dumps(key).decode()
