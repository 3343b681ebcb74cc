"""The statistics behind every interval and comparison: pure functions over finished test outcomes.

- `outcomes`: a finished test episode as the statistics read it, grouped per task.
- `bootstrap`: intervals that resample task families within each setting, paired on the same draws.
- `replicated`: the two-level bootstrap over stream replicas, then families; `noise`: the spread
  across replicas, flip rates, the minimum detectable difference; `power`: replicas needed for a bar;
  `t_power`: the exact power of a t test, which the MDEs rest on.
- `compare_replicas`, `repeats`, `slices`, `seal`, `stats` (sign test, Clopper-Pearson, pass^k, t/F quantiles).

Nothing here reads the journal or a report: `runner.report` and `runner.evidence` feed it.

Arrows: none.
"""
