"""Evidence: holding a run to what was decided before it, and comparing runs, with the statistics of
`runner.stats`.

Everything here only reads: the journal (through `runner.journal`'s named queries), reports, plan files
and rules files. Nothing drives a run.

- `compare`: paired differences of two streams (`shiftbench compare`), replicas paired by index.
- `gates`, `gate_run`: rules judged by intervals (PASS / FAIL / INSUFFICIENT_EVIDENCE) and the pilot
  rule (PROCEED / STOP), with exit codes for CI.
- `plans`, `plan_lock`: pre-registered plans, locked under a hash, amended only by appending; a planned
  run follows its plan.
- `power_sizing`: replicas and test tasks a difference needs, and what that sweep would cost.
- `regrade`, `run_evidence`: a run's evidence read from the journal (its test outcomes, two streams'
  comparison), `verify`'s re-grading of every episode and `gate`'s judgement.
The commands' parsers and handlers (what they print, their exit codes) are `runner.cli`'s.

Arrows: evidence -> report, audits, stats, cost, schedule (a plan's dataset), config, journal, common.
"""
