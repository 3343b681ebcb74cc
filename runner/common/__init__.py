"""What every other package of the runner may use, and which uses nothing of the runner itself.

- `errors`: `RunAborted` (the run cannot go on; the journal stays resumable) and unwrapping task groups.
- `files`: every output written safely: to a regular file or a new path only, whole or not at all.
- `toml_tables`: TOML tables checked whole (types, finite numbers, unknown keys with the nearest one).
- `tables`: plain text tables; `money`: dollars shown so they never contradict each other.
- `version`: the code's version (git commit, or the installed source's hash); `machine`: the machine.
- `liveness`: whether a run's process is still alive; `optional`: the optional extras (html, inspect).
- `home`: where shiftbench writes by default (`.shiftbench/`, its journal).
- `journal_flag`: the `--journal` a hint naming a command must carry for a journal not the default.
- `whole_writes`: stdout and stderr that finish every write (unbuffered output dropped part of one).

Arrows: none. Every package may import common, and it imports no other package of the runner.
"""
