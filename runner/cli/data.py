"""`data build|check|replay|fetch`: make, validate, replay and download datasets.

The work lives in `simulators` (build, load, integrity, replay) and `runner.datasets` (fetch); this
module parses, and `data_commands` (imported when one of those runs: it loads the simulators) prints
replay, gold checks and fetch.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

import orjson

from runner.cli.parsing import Command

__all__ = ["DATA_COMMANDS", "add_data_parser"]


def add_data_parser(commands: Any) -> None:
    actions = commands.add_parser("data", help="build or check a dataset").add_subparsers(dest="data_command",
                                                                                          required=True)
    build = actions.add_parser("build", help="generate the built-in suite")
    build.add_argument("--out", type=Path, default=Path("data/built/suite"), help="the folder to write")
    build.add_argument("--seed", type=int, default=0, help="the suite's seed (same seed, same bytes)")
    check = actions.add_parser("check", help="validate a dataset: counts, fingerprint, ids that point at "
                                             "nothing (exit 1 if any)")
    check.add_argument("dir", type=Path, help="a dataset directory in the ServeLearnBench export layout")
    check.add_argument("--json", action="store_true", help="print the counts and fingerprint as JSON")
    check.add_argument("--gold", action="store_true", help="replay every task's gold through the graders and "
                                                           "report ids that point at nothing; exit 1 on any problem")
    replay = actions.add_parser("replay", help="run tool calls for one task on a fresh world and grade them")
    replay.add_argument("dir", type=Path, help="a dataset directory")
    replay.add_argument("--scenario", required=True, help="the task's scenario")
    replay.add_argument("--task", required=True, help="the task id")
    source = replay.add_mutually_exclusive_group(required=True)
    source.add_argument("--gold", action="store_true", help="the task's gold actions and answer")
    source.add_argument("--actions", help='a JSON list of {"name", "arguments"} calls, a file or - for stdin')
    replay.add_argument("--json", action="store_true", help="print the result as JSON")
    fetch = actions.add_parser("fetch", help="download, verify and write the official ServeLearnBench export")
    fetch.add_argument("--to", type=Path, default=Path("data/built/official"), help="the folder to write")
    fetch.add_argument("--ref", help="another commit of the reference repository (its fingerprint is not compared)")
    fetch.add_argument("--url", help="archive URL template with {repo} and {commit} (default: GitHub's source "
                                     "archive; also SHIFTBENCH_FETCH_URL)")


def _cmd_data(args: argparse.Namespace) -> int:
    from runner.cli.data_commands import run_check_gold, run_fetch, run_replay

    if args.data_command == "replay":
        return run_replay(args.dir, args.scenario, args.task, args.gold, args.actions, args.json)
    if args.data_command == "fetch":
        return run_fetch(args.to, args.ref, args.url)
    if args.data_command == "check" and args.gold:
        return run_check_gold(args.dir)
    if args.data_command == "build":
        from runner.schedule.paths import check_suite_target, write_suite  # the suite's generators

        print(check_suite_target(args.out).capitalize() + " ...")
        fingerprint = write_suite(args.out, args.seed)
        print(f"Built the suite (seed {args.seed}) in {args.out}\nfingerprint {fingerprint}")
        return 0
    return _check(args.dir, args.json)


def _check(root: Path, as_json: bool) -> int:
    from simulators.dataset import load_dataset
    from simulators.integrity import dangling_ids
    from simulators.suite import summarize

    dataset = load_dataset(root)
    dangling = [p for scenario in dataset.scenarios.values() for p in dangling_ids(scenario)]
    summaries = summarize(dataset)
    if as_json:
        payload = {"fingerprint": dataset.fingerprint,
                   "scenarios": {name: vars(s) for name, s in summaries.items()}}
        payload["dangling_ids"] = [p.line() for p in dangling]
        print(orjson.dumps(payload, option=orjson.OPT_INDENT_2).decode())
        return 1 if dangling else 0
    print(f"{'scenario':<12} {'windows':>7} {'serving':>8} {'test':>6} {'hidden':>7} {'fully_spec':>10}")
    for name, s in summaries.items():
        print(f"{name:<12} {s.windows:>7} {s.serving:>8} {s.test:>6} {s.test_hidden:>7} {s.test_fully_specified:>10}")
    print(f"fingerprint {dataset.fingerprint}")
    for problem in dangling:
        print(problem.line())
    return 1 if dangling else 0


DATA_COMMANDS: dict[str, Command] = {"data": _cmd_data}
