"""Running a sweep: one episode, a batch of streams, a whole run from start to its end.

The three layers (STYLE.md): `episode` runs one episode (agent loop, fresh world, grade); `engine` runs
a batch of streams (serving in order, test sets fanned out, every step journaled); `sweep` turns a
config into a run (checks before spending, probes, journal, resume). Beside them: `stream_methods` (each
stream's method built, frozen and restored), `judge` (the pitch judge), `paths` (where a run writes, the
built-in suite built on first use), `full_disk` (a full disk stops a run like a budget stop),
`lease_keeper` (the run's lease: which host and process write it, renewed while it runs),
`starting_progress` (a resumed run's figures from its journal), `admission` (when test sets start and how
many test episodes run at once; `--batch tests` changes both), `engine_rows` (an episode's audit row, a
stream's dashboard row).

Arrows: schedule -> models, cost, config, display, journal, providers, workers, common.
"""
