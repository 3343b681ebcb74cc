"""Family bootstrap intervals on synthetic journals with known answers."""

from __future__ import annotations

import random

import numpy as np
import pytest

from runner.stats.bootstrap import BootstrapSpec, SettingSample, TaskValue, paired_values, stream_draws


def synthetic(rng: random.Random, setting: str, families: int, per_family: int, shift: float = 0.0,
              ) -> list[TaskValue]:
    """Families whose success rate is drawn uniformly from [0.2, 1.0] (mean 0.6): tasks of a family
    succeed together more often than tasks of different families, as in a real suite."""
    tasks = []
    for f in range(families):
        rate = min(1.0, rng.uniform(0.2, 1.0) + shift)
        for i in range(per_family):
            value = 100.0 if rng.random() < rate else 0.0
            tasks.append(TaskValue(setting, f"{setting}-{f}-{i}", f"fam{f}", "hidden", i % 3, value))
    return tasks


def test_interval_covers_the_true_mean_at_about_the_stated_rate() -> None:
    """Over 120 independent synthetic suites, the 95% interval of a setting's H covers the true 60
    about 95% of the time (a family bootstrap with 30 families runs slightly under: allow 88-99%),
    and Avg H over three settings covers it too."""
    spec = BootstrapSpec(draws=2000, seed=7)
    covered_setting = covered_avg = 0
    repeats = 120
    for seed in range(repeats):
        rng = random.Random(seed)
        tasks = [t for name in ("retail_l1", "retail_l2", "banking_l1") for t in synthetic(rng, name, 30, 4)]
        draws = stream_draws(tasks, spec)
        setting = draws.setting_interval("retail_l1", ("hidden", None))
        average = draws.avg_h_interval()
        assert setting is not None and average is not None
        covered_setting += setting.lo <= 60.0 <= setting.hi
        covered_avg += average.lo <= 60.0 <= average.hi
    assert 0.88 <= covered_setting / repeats <= 0.99
    assert 0.88 <= covered_avg / repeats <= 0.99


def test_families_are_resampled_whole() -> None:
    """One family always solved, one never: every resample is 0, 50 or 100, never a mix of tasks."""
    tasks = [TaskValue("retail_l1", f"a{i}", "always", "hidden", 0, 100.0) for i in range(5)]
    tasks += [TaskValue("retail_l1", f"n{i}", "never", "hidden", 0, 0.0) for i in range(5)]
    draws = stream_draws(tasks, BootstrapSpec(draws=500, seed=1)).settings["retail_l1"][("hidden", None)]
    assert set(np.unique(draws)) <= {0.0, 50.0, 100.0}
    assert {0.0, 50.0, 100.0} <= set(np.unique(draws))


def test_a_task_without_family_is_its_own_cluster() -> None:
    tasks = [TaskValue("retail_l1", f"t{i}", "", "hidden", 0, float(100 * (i % 2))) for i in range(10)]
    assert len(SettingSample("retail_l1", tasks).families) == 10


def test_same_seed_same_draws_and_the_seed_matters() -> None:
    tasks = synthetic(random.Random(3), "retail_l1", 20, 3)
    first = stream_draws(tasks, BootstrapSpec(draws=300, seed=5)).avg_h
    again = stream_draws(tasks, BootstrapSpec(draws=300, seed=5)).avg_h
    other = stream_draws(tasks, BootstrapSpec(draws=300, seed=6)).avg_h
    assert first is not None and again is not None and other is not None
    assert np.array_equal(first, again)
    assert not np.array_equal(first, other)


def test_paired_differences_use_identical_resamples() -> None:
    """The paired draws are exactly A's draws minus B's: both sides were resampled the same way."""
    rng = random.Random(11)
    a = [t for name in ("retail_l1", "pitch_l1") for t in synthetic(rng, name, 12, 3, shift=0.2)]
    b = [TaskValue(t.setting, t.task_id, t.family, t.category, t.window, 100.0 if rng.random() < 0.5 else 0.0)
         for t in a]
    spec = BootstrapSpec(draws=400, seed=2)
    draws_a, draws_b = stream_draws(a, spec), stream_draws(b, spec)
    paired = stream_draws(paired_values(a, b), spec)
    for setting in ("retail_l1", "pitch_l1"):
        for cell in paired.settings[setting]:
            assert np.allclose(paired.settings[setting][cell],
                               draws_a.settings[setting][cell] - draws_b.settings[setting][cell], equal_nan=True)
    assert paired.avg_h is not None and draws_a.avg_h is not None and draws_b.avg_h is not None
    assert np.allclose(paired.avg_h, draws_a.avg_h - draws_b.avg_h)


def test_avg_f_covers_retail_and_banking_only() -> None:
    tasks = [TaskValue("retail_l1", "r", "f", "fully_specified", 0, 100.0),
             TaskValue("retail_l1", "r2", "g", "fully_specified", 0, 100.0),
             TaskValue("pitch_l1", "p", "f", "fully_specified", 0, 0.0)]
    draws = stream_draws(tasks, BootstrapSpec(draws=50))
    interval = draws.avg_f_interval()
    assert interval is not None and (interval.lo, interval.hi) == (100.0, 100.0)
    assert draws.avg_h is None


def test_pairing_refuses_different_task_sets() -> None:
    a = [TaskValue("retail_l1", "x", "f", "hidden", 0, 1.0)]
    b = [TaskValue("retail_l1", "y", "f", "hidden", 0, 1.0)]
    with pytest.raises(ValueError):
        paired_values(a, b)


def test_a_figure_over_one_family_has_no_interval_however_many_tasks_it_holds() -> None:
    # pitch_l1's window 0: four tasks of one buyer profile; window 1: two profiles.
    tasks = [TaskValue("pitch_l1", f"p{i}", "profile-a", "hidden", 0, 100.0 * (i % 2)) for i in range(4)]
    tasks += [TaskValue("pitch_l1", "q1", "profile-b", "hidden", 1, 0.0),
              TaskValue("pitch_l1", "q2", "profile-c", "hidden", 1, 100.0)]
    draws = stream_draws(tasks, BootstrapSpec(draws=200))
    assert draws.families_of("pitch_l1", ("hidden", 0)) == 1
    assert draws.setting_interval("pitch_l1", ("hidden", 0)) is None
    assert draws.families_of("pitch_l1", ("hidden", 1)) == 2
    wide = draws.setting_interval("pitch_l1", ("hidden", 1))
    assert wide is not None and wide.lo < wide.hi
    assert draws.setting_interval("pitch_l1", ("hidden", None)) is not None and not draws.one_family_each("hidden")
    single = stream_draws(tasks[:4], BootstrapSpec(draws=50))
    assert single.avg_h_interval() is None and single.one_family_each("hidden")
