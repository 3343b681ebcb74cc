"""Intervals where the bootstrap has nothing to say: too few families, or every task agreeing.

A percentile bootstrap over a handful of task families is not a 95% interval: two families have three
distinct resamples, and `compare` printed `H +0.0 [0.0, 0.0]` from two paired tasks. Below
`MIN_FAMILIES` a figure gets no interval but a note saying so ("2 tasks: too few for an interval").

Where every task of a figure agrees, every resample is the point and the bootstrap's interval is zero
wide ([100.0, 100.0]), a certainty no sample gives. The exact interval is used instead, counting task
families as the trials (tasks of one family stand or fall together, so families, not tasks, are the
independent draws; counting tasks would claim more than the data holds):
- a score of 100 everywhere: Clopper-Pearson for n successes of n, [100 (a/2)^(1/n), 100]; a reward is
  at most 1, so the mean is at least the share of families that scored in full;
- a score of 0 everywhere: [0, 100 (1 - (a/2)^(1/n))] by the same bound on the share that scored;
- a paired difference of 0 everywhere (every pair tied): the share of pairs that differ is at most
  u = 1 - (a/2)^(1/n) (Clopper-Pearson, none of n), and a pair differs by at most 100, so [-100u, 100u];
- a paired difference of +100 everywhere (A in full, B nothing): at least 1 - u of pairs are at +100 and
  the rest at no less than -100, so [100 (1 - 2u), 100]; -100 everywhere mirrors it;
- any other common value (every task at 40) has no distribution-free bound: "all N tasks agree".
An average over settings some of which agree takes each setting's bound at level 1 - a/k (Bonferroni,
k settings: exact where it agrees, the percentile interval where it varies), so the mean of the bounds
holds the mean at 1 - a (`StreamDraws.decided_avg`); a setting with too few families leaves the average
without one.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["MIN_FAMILIES", "ONE_FAMILY", "ONE_FAMILY_EACH", "Agreement", "agreed_interval", "too_few"]

MIN_FAMILIES = 3
"""Fewest task families a bootstrap interval is drawn from. n families have C(2n-1, n) distinct
resamples (3 for two families, 10 for three, 35 for four), so any such interval is coarse; three is
the floor because the pitch scenarios hold only 3-4 buyer-profile families in all (the built-in suite,
seed 0), and a higher one would leave Avg H without an interval in every sweep that includes them."""

ONE_FAMILY = "no interval (1 family)"
ONE_FAMILY_EACH = "no interval (1 family per setting)"


@dataclass(frozen=True)
class Agreement:
    """A figure whose tasks all have one value: that value, its tasks and its families."""

    value: float
    tasks: int
    families: int


def too_few(families: int, tasks: int) -> str | None:
    """The note for a figure over fewer than MIN_FAMILIES families; None when there are enough."""
    if families >= MIN_FAMILIES or families == 0:
        return None
    if families == 1:
        return ONE_FAMILY
    counted = f"{tasks} tasks" if tasks == families else f"{families} families"
    return f"{counted}: too few for an interval"


def agreed_interval(agreement: Agreement, level: float, paired: bool) -> tuple[float, float] | str:
    """The exact interval of a figure whose every task agrees, or the note when there is none."""
    tail = (1 - level) / 2
    share = 1 - tail ** (1 / agreement.families)  # the most a share seen in none of n families can be
    if paired and agreement.value == 0:
        return (-100 * share, 100 * share)
    if paired and abs(agreement.value) == 100:
        bound = 100 * (1 - 2 * share)
        return (bound, 100.0) if agreement.value > 0 else (-100.0, -bound)
    if not paired and agreement.value == 100:
        return (100 * (1 - share), 100.0)
    if not paired and agreement.value == 0:
        return (0.0, 100 * share)
    return f"all {agreement.tasks} tasks agree"
