"""Power before money: the pilot's variance split, replicas needed, the MDE gate rule, plans stating
their MDE and replicas."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from runner.evidence.gates import MetricValue, Rule, Verdict, evaluate_mde_rule, load_rules
from runner.evidence.plans import read_plan
from runner.stats.noise import mde
from runner.stats.power import predicted_sd, replicas_needed, setting_variances
from runner.stats.stats import f_quantile
from simulators.errors import ShiftbenchInputError
from tests.runner.evidence.test_plans import PLAN
from tests.runner.evidence.test_replicated import outcome


def test_f_quantile_matches_the_table() -> None:
    assert f_quantile(0.95, 5, 10) == pytest.approx(3.3258, abs=1e-4)
    assert f_quantile(0.5, 1, 1) == pytest.approx(1.0, abs=1e-9)


def test_per_task_noise_alone_has_no_per_replica_part_and_shrinks_with_tasks() -> None:
    rng = random.Random(3)
    outcomes = [outcome(k, t, float(rng.random() < 0.5)) for k in range(8) for t in range(60)]
    (found,) = setting_variances(outcomes, "hidden")
    assert found.tasks == 60 and found.per_task == pytest.approx(2500, rel=0.15)  # a fair coin x 100
    # No replica shifts its tasks together: what shows of a per-replica part is noise, smaller than the
    # per-task part's share of a replica's score (and pooled to 0 when it does not show at all).
    assert found.per_replica < found.per_task / 60
    pooled = setting_variances([outcome(k, t, float((k + t) % 2 == 0)) for k in range(8) for t in range(60)], "hidden")
    assert pooled[0].per_replica == 0.0
    assert predicted_sd(pooled, {"retail_l1": 240}) == pytest.approx(predicted_sd(pooled, {}) / 2)


def test_a_whole_replica_shifting_shows_as_the_per_replica_part() -> None:
    outcomes = [outcome(k, t, 1.0 if (t + k) % 10 < 3 + 4 * (k % 2) else 0.0) for k in range(8) for t in range(60)]
    (found,) = setting_variances(outcomes, "hidden")
    assert found.per_replica > 300  # odd replicas solve 70%, even 30%: a 40-point swing
    # More tasks cannot average a per-replica part away.
    assert predicted_sd([found], {"retail_l1": 100_000}) ** 2 == pytest.approx(found.per_replica, rel=0.01)


def test_replicas_needed_is_the_fewest_whose_mde_is_within_the_difference() -> None:
    needed = replicas_needed(5.0, 4.0)
    assert needed is not None
    found, before = mde(5.0, needed), mde(5.0, needed - 1)
    assert found is not None and before is not None and found <= 4.0 < before
    assert replicas_needed(5.0, 0.01) is None


def test_mde_rule_passes_when_met_and_asks_for_replicas_otherwise(tmp_path: Path) -> None:
    rule = Rule(metric="mde.avg_h", stream="m/blind", bar=4.0, side="max")
    assert evaluate_mde_rule(rule, MetricValue(3.5, None, 10)).verdict is Verdict.PASS
    missed = evaluate_mde_rule(rule, MetricValue(8.0, None, 10))
    assert missed.verdict is Verdict.INSUFFICIENT_EVIDENCE and missed.more_cases == 30  # 10 x (8/4)^2 - 10
    assert evaluate_mde_rule(rule, MetricValue(None, None, 1)).verdict is Verdict.INSUFFICIENT_EVIDENCE
    rules = tmp_path / "rules.toml"
    rules.write_text('[[rule]]\nmetric = "mde.avg_h"\nstream = "m/blind"\nmin = 4\n')
    with pytest.raises(ShiftbenchInputError, match="give its bar as max"):
        load_rules(rules)


def test_a_plan_states_its_mde_and_the_replicas_its_sweep_runs(tmp_path: Path) -> None:
    plan = tmp_path / "plan.toml"
    plan.write_text(PLAN.replace('test = "paired_bootstrap"', 'test = "paired_bootstrap"\nmde = 4.0\nreplicas = 5')
                    + "replicas = 5\n")
    stated, _ = read_plan(plan)
    assert stated["mde"] == 4.0 and stated["replicas"] == 5
    plan.write_text(PLAN.replace('test = "paired_bootstrap"', 'test = "paired_bootstrap"\nreplicas = 5'))
    with pytest.raises(ShiftbenchInputError, match=r"states replicas = 5 but \[sweep\] runs 1"):
        read_plan(plan)
    plan.write_text(PLAN.replace('test = "paired_bootstrap"', 'test = "paired_bootstrap"\nmde = -1'))
    with pytest.raises(ShiftbenchInputError, match="mde must be a positive number"):
        read_plan(plan)
