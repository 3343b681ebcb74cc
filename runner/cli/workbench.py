"""The researcher's workbench commands: read a run the morning after, share it, keep the journal tidy.

`show` (transcripts), `state` (a method's learned state as of a window), `export` (JSONL or Inspect
logs), `runs rm`, `journal vacuum`, `journal merge` (shard journals into a new one). Each only reads the
journal, except the two housekeeping commands, which refuse to touch a run that is being written (merge
writes only its new journal). `runner.cli.main` wires them in next to the run commands.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import Any

from runner.cli.parsing import add_limit, limit_of
from runner.common.journal_flag import journal_flag
from runner.common.optional import load_extra

__all__ = ["SHOWN_EPISODES", "STATE_LINES", "WORKBENCH_COMMANDS", "WorkbenchCommand", "add_runs_rm",
           "add_workbench_commands", "cmd_runs_rm"]

Async = Callable[..., Any]
SHOWN_EPISODES = 20
"""Episodes `show` prints by default; the closing line says how many more match."""
STATE_LINES = 300
"""Lines of each stream's state `state` prints by default: an oracle's bulletin (~180 lines) whole, the
hundreds of past cases icl_full and rag list on a full stream cut."""
JournalOf = Callable[[argparse.Namespace], Path]


def add_workbench_commands(commands: Any, add_journal: Callable[[argparse.ArgumentParser], None]) -> None:
    _add_show(commands.add_parser("show", help="episodes as a person reads them: task, turns, tool calls, grade"),
              add_journal)
    state = commands.add_parser("state", help="a method's learned state (lessons, playbook, rules, policy block)")
    state.add_argument("run_id", help="the run, as `shiftbench runs` lists it")
    state.add_argument("--stream", help="model/method, e.g. scripted/tabular (default: every stream of the run)")
    state.add_argument("--scenario", help="the scenario (needed when the stream ran several)")
    state.add_argument("--window", type=int, help="the state the window's test set ran against, the dataset's own "
                                                   "window id (default: latest)")
    state.add_argument("--json", action="store_true", help="print the stored state as JSON")
    add_limit(state, "lines of each stream's state", STATE_LINES)
    add_journal(state)
    export = commands.add_parser("export", help="write a run's episodes as JSONL or as Inspect logs")
    export.add_argument("run_id", help="the run, as `shiftbench runs` lists it")
    export.add_argument("--format", choices=("jsonl", "inspect"), default="jsonl",
                        help="jsonl: one line per episode; inspect: one Inspect log per stream "
                             "(needs pip install 'shiftbench[inspect]'; open with `inspect view --log-dir DIR`)")
    export.add_argument("--out", type=Path, required=True, help="the folder to write into")
    export.add_argument("--stream", help="only this stream, model/method (default: every stream)")
    export.add_argument("--scenario", help="only this scenario")
    export.add_argument("--replica", type=int, metavar="K", help="only this stream replica of a run with --replicas")
    add_journal(export)
    journal = commands.add_parser("journal", help="journal maintenance")
    actions = journal.add_subparsers(dest="journal_command", required=True)
    add_journal(actions.add_parser("vacuum", help="give the space of removed runs back to the disk"))
    merge = actions.add_parser("merge", help="join the shard journals of one sweep into one new journal")
    merge.add_argument("out", type=Path, metavar="OUT", help="the merged journal to write (must not exist)")
    merge.add_argument("paths", type=Path, nargs="+", metavar="PATH", help="the shards' journals")
    merge.add_argument("--allow-partial", action="store_true",
                       help="merge what exists when shards are missing or unfinished; the run says which")
    merge.add_argument("--allow-mixed-settings", action="store_true",
                       help="merge shards started with different budgets or settings; the merged cap is then the "
                            "sum of the caps they ran under")
    merge.set_defaults(journal=None)


def add_runs_rm(runs: argparse.ArgumentParser) -> None:
    """`runs rm RUN_ID`: a sub-action of `runs`, which itself still lists runs without one."""
    actions = runs.add_subparsers(dest="runs_command", metavar="[rm]")  # optional: bare `runs` lists
    remove = actions.add_parser("rm", help="remove a run and everything it journaled")
    remove.add_argument("run_ids", nargs="+", metavar="RUN_ID", help="the runs to remove")
    # SUPPRESS: `runs --journal J rm R` keeps the J given before the sub-action.
    remove.add_argument("--journal", type=Path, default=argparse.SUPPRESS, help="the journal file")


def _add_show(show: argparse.ArgumentParser, add_journal: Callable[[argparse.ArgumentParser], None]) -> None:
    show.add_argument("run_id", help="the run, as `shiftbench runs` lists it")
    show.add_argument("--unit", help="one episode by its unit id (as --json prints it)")
    show.add_argument("--failed", action="store_true", help="only episodes short of the full score")
    show.add_argument("--stream", help="model/method, e.g. scripted/tabular")
    show.add_argument("--scenario", help="one scenario, e.g. retail_l1")
    show.add_argument("--window", type=int, help="one window (the dataset's own window id)")
    show.add_argument("--phase", choices=("serving", "test"), help="serving or test episodes only")
    show.add_argument("--replica", type=int, metavar="K", help="one stream replica of a run with --replicas (0 ..)")
    add_limit(show, "episodes", SHOWN_EPISODES)
    show.add_argument("--full", action="store_true",
                      help="print each episode whole: every turn, the task and every observation (by default an "
                           "episode is held to about a screen, each fold saying what it left out); an observation "
                           "printed before is named, not printed again, either way")
    show.add_argument("--json", action="store_true", help="plain data for tools, every field")
    add_journal(show)


def cmd_show(args: argparse.Namespace, journal: Path, run: Async) -> int:
    # The views (rich among them) and the journal are imported by the commands that use them, not by every command
    from runner.journal import EpisodeFilter
    from runner.views.episodes import load_transcripts, split_stream
    from runner.views.filters import nothing_matches
    from runner.views.show import print_transcripts, transcripts_json

    model, method = split_stream(args.stream) if args.stream else (None, None)
    where = EpisodeFilter(unit_id=args.unit, model=model, method=method, scenario=args.scenario,
                          window=args.window, phase=args.phase, failed=args.failed, replica=args.replica)
    bound = limit_of(args)
    transcripts, total = run(load_transcripts, journal, args.run_id, where, -1 if bound is None else bound)
    if args.json:
        print(transcripts_json(transcripts))
    else:
        print_transcripts(transcripts, total - len(transcripts), empty=nothing_matches(where, journal_flag(journal)),
                          given=_given_flags(args), full=args.full)
        _print_method_failures(journal, args, run)
    return 0


def _print_method_failures(journal: Path, args: argparse.Namespace, run: Async) -> None:
    """The streams the run's methods stopped (their line, frames and last output), after the episodes."""
    from runner.common.tables import terminal_width
    from runner.views.method_failures import load_method_failures, render_method_failures

    if args.unit is not None or args.phase is not None or args.window is not None:
        return  # a view of some episodes, not of the run's streams
    failures = run(load_method_failures, journal, args.run_id, args.stream)
    if failures:
        print(f"\nStreams stopped by their method ({len(failures)}):\n")
        print(render_method_failures(failures, terminal_width() or 80))


def _given_flags(args: argparse.Namespace) -> list[str]:
    """The filter and bound flags `show` was given, so its closing hint names only the others."""
    values = {"--stream": args.stream, "--scenario": args.scenario, "--window": args.window,
              "--phase": args.phase, "--failed": args.failed or None, "--unit": args.unit,
              "--limit": args.limit if args.limit_given else None}
    return [flag for flag, value in values.items() if value is not None]


def cmd_state(args: argparse.Namespace, journal: Path, run: Async) -> int:
    from runner.common.tables import terminal_width
    from runner.views.states import is_replicated, load_states, state_text, states_json

    states = run(load_states, journal, args.run_id, args.stream, args.scenario, args.window)
    replicated = is_replicated(states)
    bound, given = limit_of(args), args.limit_given
    width = terminal_width()
    print(states_json(states) if args.json else "\n\n".join(state_text(state, replicated, bound, given, width)
                                                             for state in states))
    return 0


def cmd_export(args: argparse.Namespace, journal: Path, run: Async) -> int:
    from runner.journal import EpisodeFilter
    from runner.views.episodes import split_stream
    from runner.views.export import export_jsonl

    model, method = split_stream(args.stream) if args.stream else (None, None)
    where = EpisodeFilter(model=model, method=method, scenario=args.scenario, replica=args.replica)
    # The folder is made by the export itself (runner.common.files.output_folder), and removed if the export fails.
    if args.format == "jsonl":
        target, count = run(export_jsonl, journal, args.run_id, args.out, "--out", where)
        print(f"Wrote {count} episodes to {target}")
        return 0
    inspect = load_extra("runner.views.inspect_export", "inspect", "export --format inspect")
    written = run(inspect.export_inspect, journal, args.run_id, args.out, "--out", where)
    for target, count in written:
        print(f"Wrote {target} ({count} samples)")
    print(f"Open them with: inspect view --log-dir {args.out}")
    return 0


def cmd_runs_rm(args: argparse.Namespace, journal: Path, run: Async) -> int:
    from runner.cli.batch_cancel import cancel_outstanding
    from runner.journal.housekeeping import journal_bytes, remove_run

    for run_id in args.run_ids:
        run(cancel_outstanding, journal, run_id, print)  # a provider may still bill a batch the run left
        removed = run(remove_run, journal, run_id)
        print(f"Removed run {removed.run_id} ({removed.episodes} episodes).")
    print(f"The journal is {_mb(journal_bytes(journal))}; `shiftbench journal vacuum{journal_flag(journal)}` gives "
          "the space back to the disk.")
    return 0


def cmd_journal(args: argparse.Namespace, journal: Path, run: Async) -> int:
    if args.journal_command == "merge":
        from runner.shards.merge import merge_shards

        run(merge_shards, args.out, args.paths, args.allow_partial, print, args.allow_mixed_settings)
        return 0
    from runner.journal.housekeeping import vacuum_journal

    done = run(vacuum_journal, journal)
    print(f"Vacuumed {journal}: {_mb(done.before_bytes)} -> {_mb(done.after_bytes)}")
    return 0


def _mb(size: int) -> str:
    return f"{size / 1e6:.1f} MB"


WorkbenchCommand = Callable[[argparse.Namespace, Path, Callable[..., Coroutine[Any, Any, Any]]], int]
WORKBENCH_COMMANDS: dict[str, WorkbenchCommand] = {
    "show": cmd_show, "state": cmd_state, "export": cmd_export, "journal": cmd_journal,
}
