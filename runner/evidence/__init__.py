"""Evidence: how sure a run's numbers are, and holding a run to what was decided before it.

Everything here only reads: the journal (through `runner.journal`'s named queries), plan files and
rules files. Nothing drives a run.

- `bootstrap`: 95% intervals that resample task families within each setting; paired differences on
  the very same resamples.
- `stats`: the exact sign test, the relative reduction r, pass^k, Clopper-Pearson, the median.
- `seal`: a sha256 over a report's canonical content.
- `plans`: pre-registered plans, locked under a hash, amended only by appending.
- `gates`: rules judged by intervals (PASS / FAIL / INSUFFICIENT_EVIDENCE) and the pilot rule
  (PROCEED / STOP), with exit codes for CI.
"""
