"""The `shiftbench` command line, one module per command group.

`main` joins the groups and owns the one error path (a fixable error is one line on stderr, exit 2);
`parsing` holds what the groups share (the parser class, flag types, `--journal`, running a coroutine).
The groups: `sweeps` (run, resume), `results` (runs, report), `evidence` (compare, verify, gate,
estimate, lock), `power`, `methods`, `probe`, `data` (its replay, gold check and fetch in `data_commands`),
`workbench` (show, state, export, runs rm, journal vacuum; `batch_cancel`: the batches a removed run left
outstanding at a provider, cancelled or named),
`audits` (audit faults, audit metamorphic). A command imports what only it needs when it runs, so
`run` and `resume` start without numpy, the report or the views.

`runner.cli:main` is the console entry point; `python -m runner.cli` runs the same.

Arrows: cli -> every package but display and stats (it is the top of the house): views, evidence, report,
audits, method_check, shards, schedule, models, cost, config, journal, providers, workers, datasets, common.
"""

from __future__ import annotations

import sys

try:
    from runner.cli.main import main
except KeyboardInterrupt:
    # Ctrl-C while the command line itself is still being imported (the console script imports this
    # package before `main` and its own Ctrl-C handling run): the same one line and exit code as a Ctrl-C
    # later, not a traceback. Nothing has been opened or written yet.
    print("shiftbench: interrupted", file=sys.stderr)
    raise SystemExit(130) from None

__all__ = ["main"]
