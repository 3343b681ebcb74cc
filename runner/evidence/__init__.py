"""Evidence: holding a run to what was decided before it, and comparing runs, with the statistics of
`runner.stats`.

Everything here only reads: the journal (through `runner.journal`'s named queries), reports, plan files
and rules files. Nothing drives a run.

- `compare`: paired differences of two streams (`shiftbench compare`), replicas paired by index.
- `gates`, `gate_run`: rules judged by intervals (PASS / FAIL / INSUFFICIENT_EVIDENCE) and the pilot
  rule (PROCEED / STOP), with exit codes for CI.
- `plans`, `plan_commands`: pre-registered plans, locked under a hash, amended only by appending.
- `power_command`: replicas and test tasks a difference needs, and what that sweep would cost.
- `regrade`, `commands`: `verify` (re-grade every episode) and the commands' entry points.

Arrows: evidence -> report, audits, stats, cost, schedule (a plan's dataset), config, journal, common.
"""
