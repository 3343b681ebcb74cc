"""Pre-registered plans: locked under a hash, changed only by appended amendments."""

from __future__ import annotations

import tomllib
from dataclasses import replace
from pathlib import Path

import pytest

from runner.evidence.plans import amend_plan, differences, lock_plan, read_plan
from runner.stats.seal import digest, is_sealed_intact, seal
from simulators.errors import ShiftbenchInputError

PLAN = """\
[plan]
question = "Does tabular beat blind on Avg H?"
comparison = ["scripted/tabular", "scripted/blind"]
metric = "avg_h"
threshold = 5.0
test = "paired_bootstrap"

[sweep]
models = ["scripted"]
methods = ["tabular", "blind"]
scenarios = ["retail_l1"]
budget = 10.0
"""


def clock() -> float:
    return 1_790_000_000.0


@pytest.fixture
def plan(tmp_path: Path) -> Path:
    path = tmp_path / "PLAN.toml"
    path.write_text(PLAN)
    return path


def test_lock_appends_and_reads_back(plan: Path) -> None:
    digest_ = lock_plan(plan, "fp1", "0.1.0", clock)
    assert plan.read_text().startswith(PLAN)  # appended, nothing above rewritten
    _, locked = read_plan(plan)
    assert locked is not None and locked.hash == digest_ == locked.head
    assert locked.config.scenarios == ("retail_l1",) and locked.locked_at == "2026-09-21T14:13:20Z"
    with pytest.raises(ShiftbenchInputError, match="already locked"):
        lock_plan(plan, "fp1", "0.1.0", clock)


def test_an_edit_after_locking_is_refused(plan: Path) -> None:
    lock_plan(plan, "fp1", "0.1.0", clock)
    plan.write_text(plan.read_text().replace('threshold = 5.0', 'threshold = 2.0'))
    with pytest.raises(ShiftbenchInputError, match="edited after it was locked"):
        read_plan(plan)


def test_a_run_differing_from_the_plan_is_named_until_an_amendment_covers_it(plan: Path) -> None:
    lock_plan(plan, "fp1", "0.1.0", clock)
    _, locked = read_plan(plan)
    assert locked is not None
    planned = locked.effective()[0]
    assert differences(locked, planned, "fp1", "0.1.0") == {}
    wider = replace(planned, scenarios=("retail_l1", "banking_l1"))
    assert differences(locked, wider, "fp1", "0.1.0") == {"scenarios": ("retail_l1", "banking_l1")}
    assert differences(locked, planned, "fp2", "0.2.0") == {"dataset_fingerprint": "fp2", "code_version": "0.2.0"}

    head = amend_plan(plan, "banking too: the pilot showed retail alone is too small", {"scenarios": wider.scenarios},
                      clock)
    _, amended = read_plan(plan)
    assert amended is not None and amended.head == head and amended.hash == locked.hash
    assert differences(amended, wider, "fp1", "0.1.0") == {}
    assert amended.amendments[0].reason.startswith("banking too")
    assert amended.summary()["amendments"][0]["sets"] == {"scenarios": ["retail_l1", "banking_l1"]}


def test_amendments_form_a_chain_that_refuses_rewrites(plan: Path) -> None:
    lock_plan(plan, "fp1", "0.1.0", clock)
    amend_plan(plan, "bigger blocks", {"block_size": 12}, clock)
    amend_plan(plan, "new code", {"code_version": "0.2.0"}, clock)
    _, locked = read_plan(plan)
    assert locked is not None
    config, fingerprint, version = locked.effective()
    assert (config.block_size, fingerprint, version) == (12, "fp1", "0.2.0")
    raw = tomllib.loads(plan.read_text())
    assert raw["amendment"][1]["previous"] == raw["amendment"][0]["hash"]
    plan.write_text(plan.read_text().replace("block_size = 12", "block_size = 24"))
    with pytest.raises(ShiftbenchInputError, match="amendment 1 was edited"):
        read_plan(plan)


def test_amendments_need_a_lock_a_reason_and_a_change(plan: Path) -> None:
    with pytest.raises(ShiftbenchInputError, match="not locked yet"):
        amend_plan(plan, "why", {"block_size": 2}, clock)
    lock_plan(plan, "fp1", "0.1.0", clock)
    with pytest.raises(ShiftbenchInputError, match="give the reason"):
        amend_plan(plan, " ", {"block_size": 2}, clock)
    with pytest.raises(ShiftbenchInputError, match="nothing changes"):
        amend_plan(plan, "why", {}, clock)
    with pytest.raises(ShiftbenchInputError, match="concurrency is not something a plan locks"):
        amend_plan(plan, "why", {"concurrency": 8}, clock)


@pytest.mark.parametrize(("edit", "message"), [
    (lambda text: text.replace("[plan]", "[plans]"), "no \\[plan\\] table"),
    (lambda text: text.replace('test = "paired_bootstrap"', 'test = "t-test"'), "test must be one of"),
    (lambda text: text.replace('comparison = ["scripted/tabular", "scripted/blind"]', 'comparison = "x"'),
     "comparison must be a list of strings, e.g. comparison = "),
    (lambda text: text.replace("[sweep]\n", "[sweep]\nblok_size = 3\n"), "unknown key 'blok_size'"),
])
def test_bad_plans_are_one_line(plan: Path, edit: object, message: str) -> None:
    assert callable(edit)
    plan.write_text(edit(PLAN))
    with pytest.raises(ShiftbenchInputError, match=message) as caught:
        lock_plan(plan, "fp1", "0.1.0", clock)
    assert "\n" not in str(caught.value)


def test_seal_detects_any_change() -> None:
    sealed = seal({"run_id": "r1", "streams": [{"avg_h": 61.5, "avg_h_ci": [55.0, 68.25]}], "note": "é"})
    assert list(sealed)[-1] == "sha256" and is_sealed_intact(sealed)
    assert digest(sealed) == digest({k: v for k, v in sealed.items() if k != "sha256"})
    tampered = {**sealed, "streams": [{"avg_h": 71.5, "avg_h_ci": [55.0, 68.25]}]}
    assert not is_sealed_intact(tampered)
