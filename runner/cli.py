"""The `shiftbench` command line.

Every error a user can fix (a typo in a flag or sweep file, a malformed dataset, an unreadable
journal) ends as one line on stderr naming the file or flag and what to do, with exit code 2.
"""

from __future__ import annotations

import argparse
import difflib
import os
import signal
import sys
from collections.abc import Callable, Coroutine, Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

import anyio
import orjson

from methods.registry import METHOD_REGISTRY
from runner.audits.cli import add_audit_parser, run_audit_command
from runner.cli_workbench import (
    WORKBENCH_COMMANDS,
    WorkbenchCommand,
    add_runs_rm,
    add_workbench_commands,
    cmd_runs_rm,
)
from runner.config import SweepConfig, allowed_range, load_config_file
from runner.files import write_atomically
from runner.models.compat import CONTEXT_PROBE_TOKENS
from runner.optional import load_extra
from runner.paths import check_suite_target
from runner.sweep import code_version, default_journal
from simulators.errors import ShiftbenchInputError
from simulators.protocol import SCENARIOS

if TYPE_CHECKING:
    from runner.models.registry import ModelEntry

# Each command imports the modules only it needs when it runs (the evidence commands bring numpy, the
# report and views bring rich): `run` and `resume` start without them (issue 14, resume start).

__all__ = ["main"]

FAILED_SHOWN_PER_SETTING = 5
"""Failed episodes printed in full per setting in the HTML report; the rest are counted and `show` prints them."""
EXIT_BY_STATUS = {"completed": 0, "budget_exhausted": 0, "interrupted": 130, "failed": 1}


def _positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a whole number of at least 1, got {text!r}")
    return value


def _within(kind: Callable[[str], Any], field: str) -> Callable[[str], Any]:
    """Parse a flag's number, naming the range it must fall in (`SweepConfig.validate` checks the range)."""
    def parse(text: str) -> Any:
        try:
            return kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected {allowed_range(field)}, got {text!r}") from None
    return parse


def _names(text: str) -> tuple[str, ...]:
    return tuple(part.strip() for part in text.split(",") if part.strip())


class _Parser(argparse.ArgumentParser):
    """argparse, with a usage error as one line through the CLI's own error path (exit code 2).

    Flag prefixes are not accepted: argparse would quietly read `--max-turn 3` as `--max-turns 3`, and a
    later flag sharing the prefix would silently change what an old command line means.
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("allow_abbrev", False)
        super().__init__(*args, **kwargs)

    def error(self, message: str) -> NoReturn:
        raise ShiftbenchInputError(f"{self.prog}: {message}; `{self.prog} --help` lists the options")


def _parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="shiftbench", description=(
        "Run evolving-environment benchmarks for tool-calling agents that learn from experience."))
    parser.add_argument("--version", action="version", version=f"shiftbench {code_version()}")
    commands = parser.add_subparsers(dest="command", required=True)
    _add_run(commands.add_parser("run", help="start a sweep (default: built-in suite, scripted model, "
                                             "methods blind and oracle)"))
    resume = commands.add_parser("resume", help="continue an interrupted run in place")
    resume.add_argument("run_id", help="the run, as `shiftbench runs` lists it")
    resume.add_argument("--budget", type=float, help="a new hard cap in USD (a run stopped by its cap resumes "
                                                      "with a higher one)")
    _add_journal(resume)
    resume.add_argument("--display", choices=("auto", "rich", "plain", "none"), default="auto",
                     help="rich: the live dashboard; plain: a status line every 10 s; auto: rich on a terminal")
    runs = commands.add_parser("runs", help="list the runs in a journal; `runs rm RUN_ID` removes one")
    runs.add_argument("--json", action="store_true", help="print the list as JSON")
    _add_journal(runs)
    add_runs_rm(runs)
    report = commands.add_parser("report", help="scores, costs and latencies of a run")
    report.add_argument("run_id", help="the run, as `shiftbench runs` lists it")
    fmt = report.add_mutually_exclusive_group()
    for flag, text in (("--json", "every figure as JSON, sealed with provenance"),
                       ("--csv", "one row per stream (a leaderboard for a sheet); with --windows, one per window"),
                       ("--md", "Markdown tables")):
        fmt.add_argument(flag, action="store_true", help=text)
    fmt.add_argument("--html", type=Path, metavar="FILE",
                     help="write one self-contained HTML page (charts, tables, failed episodes, provenance)")
    report.add_argument("--windows", action="store_true",
                        help="with --csv: one row per stream, setting and window (the learning curves as numbers)")
    report.add_argument("--slices", action="store_true", help="add descriptive slices to the text report "
                                                             "(by tool calls, turns, family, window, category)")
    _add_journal(report)
    _add_evidence(commands)
    commands.add_parser("methods", help="list the learning methods")
    probe = commands.add_parser("probe", help="send one tiny request to each model (checks endpoint and key)")
    probe.add_argument("models", nargs="+", help="model names, as --models takes them")
    probe.add_argument("--config", type=Path, help="a sweep file, for its named endpoints")
    probe.add_argument("--full", action="store_true",
                       help="check what an OpenAI-compatible server supports (tool calls streamed or not, usage, "
                            "tool results, content null, context length) and print the sweep-file settings")
    probe.add_argument("--context-tokens", type=_positive, default=CONTEXT_PROBE_TOKENS,
                       help=f"size of --full's long-context request (default {CONTEXT_PROBE_TOKENS:,})")
    _add_data(commands.add_parser("data", help="build or check a dataset"))
    add_workbench_commands(commands, _add_journal)
    add_audit_parser(commands.add_parser("audit", help="fault-recovery and metamorphic audits of a run"),
                     _add_journal)
    return parser


def _add_evidence(commands: Any) -> None:
    compare = commands.add_parser("compare", help="paired differences of two streams over the same test tasks")
    compare.add_argument("a", help="RUN_ID or RUN_ID:model/method")
    compare.add_argument("b", help="RUN_ID or RUN_ID:model/method (the base)")
    shown = compare.add_mutually_exclusive_group()
    shown.add_argument("--json", action="store_true", help="print the result as JSON")
    shown.add_argument("--html", type=Path, metavar="FILE",
                       help="write one self-contained HTML page: the paired differences with their intervals, "
                            "per setting, as a chart and a table, and each side's provenance")
    _add_journal(compare)
    verify = commands.add_parser("verify", help="re-grade every journaled episode without a model")
    verify.add_argument("run_id", help="the run, as `shiftbench runs` lists it")
    gate = commands.add_parser("gate", help="judge a run against rules (exit 0 PASS/PROCEED, 1 FAIL/STOP, "
                                            "3 INSUFFICIENT_EVIDENCE)")
    gate.add_argument("run_id", help="the run, as `shiftbench runs` lists it")
    gate.add_argument("--rules", type=Path, required=True, help="a TOML file of [[rule]] tables and [pilot]")
    for parser in (verify, gate):
        parser.add_argument("--json", action="store_true", help="print the result as JSON")
        _add_journal(parser)
    estimate = commands.add_parser("estimate", help="what a full sweep will cost, projected from a run's journal "
                                                    "(a pilot's) without sending anything")
    estimate.add_argument("run_id", nargs="?", help="the run to project from (default: the newest in the journal)")
    estimate.add_argument("--models", type=_names, help="models to project, comma-separated (default: the run's); "
                                                       "one the run did not call is re-priced from its tokens")
    estimate.add_argument("--methods", type=_names, help="methods, comma-separated (default: the run's)")
    estimate.add_argument("--scenarios", type=_names, help="scenarios of the run's dataset (default: the run's)")
    estimate.add_argument("--json", action="store_true", help="print the rows as JSON")
    _add_journal(estimate)
    lock = commands.add_parser("lock", help="lock a pre-registered plan under its hash, or --amend it")
    lock.add_argument("plan", type=Path, help="the plan file (TOML) to lock or amend")
    lock.add_argument("--amend", metavar="REASON", help="append an amendment setting the given run flags")
    _add_result_flags(lock)


def _add_journal(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--journal", type=Path, default=None,
                        help=f"the journal file (default: {default_journal()})")


def _add_run(run: argparse.ArgumentParser) -> None:
    source = run.add_mutually_exclusive_group()
    source.add_argument("--config", type=Path, help="a TOML sweep file; flags override its keys")
    source.add_argument("--plan", type=Path, help="run a locked plan (refused if flags change it without an "
                                                  "amendment)")
    _add_result_flags(run)
    run.add_argument("--concurrency", type=int, help="model calls in flight across the run")
    run.add_argument("--model-concurrency", type=int, help="model calls in flight per model")
    run.add_argument("--budget", type=float, help="hard cap on the run's spend in USD")
    run.add_argument("--allow-unpriced", action="store_true", default=None,
                     help="run models with no known price (spend counts only what providers report)")
    run.add_argument("--label", action="append", metavar="TEXT",
                     help="what this run is for, shown by `shiftbench runs` (repeatable)")
    run.add_argument("--display", choices=("auto", "rich", "plain", "none"), default="auto",
                     help="rich: the live dashboard; plain: a status line every 10 s; auto: rich on a terminal")
    _add_journal(run)


def _add_result_flags(run: argparse.ArgumentParser) -> None:
    """The flags that decide results (what a plan locks)."""
    run.add_argument("--models", type=_names, help=(
        "comma-separated. scripted: the offline agent that follows the documents and any policy block it is "
        "given; scripted:docs: the documents only; openai:<id>, anthropic:<id>, openrouter:<vendor>/<id>, "
        "together:<id>, fireworks:<id>, openai-compatible:<id>@http://host:port/v1, or a sweep file's endpoint"))
    run.add_argument("--methods", type=_names, help=f"comma-separated: {', '.join(sorted(METHOD_REGISTRY))}")
    run.add_argument("--scenarios", type=_names, help=f"comma-separated, of {', '.join(SCENARIOS)} (default: all)")
    run.add_argument("--dataset", help="a dataset directory (default: the built-in suite)")
    run.add_argument("--seed", type=int, help="seed of the built-in suite (default 0)")
    run.add_argument("--block-size", type=int, help="serving episodes per learning step (default 1; 12 = reference)")
    run.add_argument("--pilot", type=int, help="only the first N serving and N test tasks of each window, "
                                               "then the projected cost of the full sweep")
    run.add_argument("--repeats", type=int, help="run each test task K times: spread between repeats and pass^k")
    run.add_argument("--max-tokens", type=int, help="output tokens per model call at most (default 4096; "
                                                    "a call reserves its worst case from it)")
    run.add_argument("--max-turns", type=_within(int, "max_turns"),
                     help="model turns per episode at most (default 100); an episode that reaches it ends "
                          "turn_limit and is graded as it stands")
    run.add_argument("--temperature", type=_within(float, "temperature"),
                     help="sampling temperature of every model call, 0 to 2 (default: not sent, the provider's "
                          "own; Anthropic accepts 0 to 1; the offline scripted models ignore it)")
    run.add_argument("--call-timeout", type=_within(float, "call_timeout"), metavar="SECONDS",
                     help="one attempt of a model call may take this long before it fails as a timeout and is "
                          "retried (default 900); a stream silent for 120 s is cut sooner")
    run.add_argument("--judge", help="a model to judge pitches (default: the offline deterministic judge)")


def _add_data(data: argparse.ArgumentParser) -> None:
    actions = data.add_subparsers(dest="data_command", required=True)
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


_FLAG_TO_FIELD = {"models": "models", "methods": "methods", "scenarios": "scenarios", "dataset": "dataset",
                  "seed": "seed", "block_size": "block_size", "concurrency": "concurrency",
                  "model_concurrency": "model_concurrency", "pilot": "pilot", "budget": "budget",
                  "allow_unpriced": "allow_unpriced", "judge": "judge", "label": "labels",
                  "repeats": "repeats", "max_tokens": "max_tokens", "max_turns": "max_turns",
                  "temperature": "temperature", "call_timeout": "call_timeout"}


def sweep_config(args: argparse.Namespace) -> SweepConfig:
    from runner.evidence.plan_commands import follow_plan

    if getattr(args, "plan", None):
        return follow_plan(args.plan, _overrides(args), print)
    config = load_config_file(args.config) if args.config else SweepConfig()
    return replace(config, **_overrides(args)).validate("flags")


def _overrides(args: argparse.Namespace) -> dict[str, Any]:
    """The config keys the flags set (flags a parser does not have count as not given)."""
    overrides = {f: getattr(args, flag) for flag, f in _FLAG_TO_FIELD.items() if getattr(args, flag, None) is not None}
    if "labels" in overrides:
        overrides["labels"] = tuple(overrides["labels"])
    if overrides.get("dataset"):
        overrides["dataset"] = str(Path(overrides["dataset"]).resolve())
    return overrides


def _journal(args: argparse.Namespace, config: SweepConfig | None = None) -> Path:
    if args.journal is not None:
        return Path(args.journal).resolve()
    if config is not None and config.journal:
        return Path(config.journal).resolve()
    return default_journal().resolve()


def _async(fn: Callable[..., Coroutine[Any, Any, Any]], *args: Any) -> Any:
    try:
        return anyio.run(fn, *args, backend_options={"use_uvloop": True})
    except ImportError:
        return anyio.run(fn, *args)


def _cmd_run(args: argparse.Namespace) -> int:
    from runner.sweep import start_sweep

    config = sweep_config(args)
    journal = _journal(args, config)
    outcome = _async(start_sweep, config, journal, args.display)
    from runner.report import build_report, render_text  # after the run: numpy is not on its start's path
    print(render_text(_async(build_report, journal, outcome.run_id)))
    return EXIT_BY_STATUS.get(outcome.status, 1)


def _cmd_resume(args: argparse.Namespace) -> int:
    from runner.sweep import resume_sweep

    journal = _journal(args)
    outcome = _async(resume_sweep, args.run_id, journal, args.display, print, args.budget)
    from runner.report import build_report, render_text  # after the run: numpy is not on its start's path
    print(render_text(_async(build_report, journal, outcome.run_id)))
    return EXIT_BY_STATUS.get(outcome.status, 1)


def _cmd_runs(args: argparse.Namespace) -> int:
    from runner.runs import list_runs, render_runs_json, render_runs_text

    if args.runs_command == "rm":
        return cmd_runs_rm(args, _journal(args), _async)
    runs = _async(list_runs, _journal(args))
    print(render_runs_json(runs) if args.json else render_runs_text(runs))
    return 0


def _cmd_report(args: argparse.Namespace) -> int:
    from runner.report import build_report, render_csv, render_json, render_markdown, render_text, render_window_csv

    if args.html is not None:
        return _cmd_report_html(args)
    report = _async(build_report, _journal(args), args.run_id)
    if args.json or args.csv or args.md:
        csv_render = render_window_csv if args.windows else render_csv
        print((render_json if args.json else csv_render if args.csv else render_markdown)(report))
    else:
        print(render_text(report, with_slices=args.slices))
    return 0


def _cmd_report_html(args: argparse.Namespace) -> int:
    from runner.report import build_report
    from runner.views.episodes import load_failed

    html = load_extra("runner.views.html_report", "html", "report --html")
    journal = _journal(args)
    report = _async(build_report, journal, args.run_id)
    failed = _async(load_failed, journal, args.run_id, FAILED_SHOWN_PER_SETTING)
    write_atomically(args.html, html.render_html(report, failed=failed), "--html")
    print(f"Wrote {args.html}")
    return 0


def _cmd_estimate(args: argparse.Namespace) -> int:
    from runner.estimate import estimate_command

    print(_async(estimate_command, _journal(args), args.run_id, args.models, args.methods, args.scenarios,
                 args.json))
    return 0


def _cmd_compare(args: argparse.Namespace) -> int:
    from runner.evidence.commands import compare_command, load_comparison

    if args.html is not None:
        html = load_extra("runner.views.compare_html", "html", "compare --html")
        comparison, a, b = _async(load_comparison, _journal(args), args.a, args.b)
        write_atomically(args.html, html.render_compare_html(comparison, a, b), "--html")
        print(f"Wrote {args.html}")
        return 0
    text, code = _async(compare_command, _journal(args), args.a, args.b, args.json)
    print(text)
    return int(code)


def _cmd_verify(args: argparse.Namespace) -> int:
    from runner.evidence.commands import verify_command

    text, code = _async(verify_command, _journal(args), args.run_id, args.json)
    print(text)
    return int(code)


def _cmd_gate(args: argparse.Namespace) -> int:
    from runner.evidence.commands import gate_command

    text, code = _async(gate_command, _journal(args), args.run_id, args.rules, args.json)
    print(text)
    return int(code)


def _cmd_lock(args: argparse.Namespace) -> int:
    from runner.evidence.plan_commands import lock_command

    print(lock_command(args.plan, _overrides(args), args.amend, print))
    return 0


def _cmd_probe(args: argparse.Namespace) -> int:
    config = load_config_file(args.config) if args.config else SweepConfig()
    config = replace(config, models=tuple(args.models), allow_unpriced=True).validate("flags")
    _async(_probe, config, args.full, args.context_tokens)
    return 0


async def _probe(config: SweepConfig, full: bool, context_tokens: int) -> None:
    from runner.models.probe import probe_models
    from runner.models.registry import build_models, close_models

    models = build_models(config)
    for entry in models.values():
        if entry.offline:
            print(f"Probe: {entry.name} is in-process, nothing to reach.")
    try:
        await probe_models(models.values(), print)
        if full:
            for entry in models.values():
                await _full_probe(config, entry, context_tokens)
    finally:
        await close_models(models)


async def _full_probe(config: SweepConfig, entry: ModelEntry, context_tokens: int) -> None:
    from runner.models.compat import check_compatibility, render_compatibility, sweep_settings
    from runner.models.registry import endpoint_of
    from runner.providers import OpenAICompatClient

    if entry.offline:
        return
    if not isinstance(entry.probe, OpenAICompatClient):
        print(f"Probe --full: {entry.name} speaks Anthropic Messages, whose tool calls, usage and limits are "
              "documented; the full check is for OpenAI-compatible servers.")
        return
    found = await check_compatibility(entry.probe, context_tokens)
    endpoint = endpoint_of(entry.name, config.endpoints)
    print("\n" + render_compatibility(found))
    print("\nSweep file settings for it:\n")
    print(sweep_settings(entry.name, endpoint.kind, endpoint.model, endpoint.base_url, found))


def _cmd_methods(args: argparse.Namespace) -> int:
    from methods.registry import METHOD_REGISTRY

    for spec in METHOD_REGISTRY.values():
        calls = "extra model calls" if spec.uses_model else "no extra model calls"
        print(f"{spec.name:<12} {spec.summary}  [{calls}]")
    return 0


def _cmd_data(args: argparse.Namespace) -> int:
    from runner.data_commands import run_check_gold, run_fetch, run_replay
    from simulators.dataset import load_dataset
    from simulators.integrity import dangling_ids
    from simulators.suite import build_suite, summarize

    if args.data_command == "replay":
        return run_replay(args.dir, args.scenario, args.task, args.gold, args.actions, args.json)
    if args.data_command == "fetch":
        return run_fetch(args.to, args.ref, args.url)
    if args.data_command == "check" and args.gold:
        return run_check_gold(args.dir)
    if args.data_command == "build":
        print(check_suite_target(args.out).capitalize() + " ...")
        fingerprint = build_suite(args.out, args.seed)
        print(f"Built the suite (seed {args.seed}) in {args.out}\nfingerprint {fingerprint}")
        return 0
    dataset = load_dataset(args.dir)
    dangling = [p for scenario in dataset.scenarios.values() for p in dangling_ids(scenario)]
    summaries = summarize(dataset)
    if args.json:
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


def _with_journal(command: WorkbenchCommand) -> Callable[[argparse.Namespace], int]:
    def run(args: argparse.Namespace) -> int:
        return command(args, _journal(args), _async)
    return run


def _cmd_audit(args: argparse.Namespace) -> int:
    return run_audit_command(args, _journal(args))


COMMANDS: dict[str, Callable[[argparse.Namespace], int]] = {
    "audit": _cmd_audit,
    "run": _cmd_run, "resume": _cmd_resume, "runs": _cmd_runs, "report": _cmd_report,
    "methods": _cmd_methods, "data": _cmd_data, "probe": _cmd_probe, "compare": _cmd_compare,
    "verify": _cmd_verify, "gate": _cmd_gate, "lock": _cmd_lock, "estimate": _cmd_estimate,
    **{name: _with_journal(command) for name, command in WORKBENCH_COMMANDS.items()},
}


def parse(parser: argparse.ArgumentParser, argv: Sequence[str] | None) -> argparse.Namespace:
    """Parse, naming the closest known flag of the chosen command for a flag that does not exist."""
    args, unknown = parser.parse_known_args(argv)
    if unknown:
        command = _chosen(parser, args)
        command.error(f"unrecognized argument {unknown[0]}{_suggestion(command, unknown[0])}")
    return args


def _chosen(parser: argparse.ArgumentParser, args: argparse.Namespace) -> argparse.ArgumentParser:
    """The (sub)command parser the arguments chose, e.g. the one of `data build`."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            name = getattr(args, action.dest, None)
            if name in action.choices:
                return _chosen(action.choices[name], args)
    return parser


def _suggestion(parser: argparse.ArgumentParser, flag: str) -> str:
    if not flag.startswith("-"):
        return ""
    known = [option for action in parser._actions for option in action.option_strings]
    close = difflib.get_close_matches(flag.split("=")[0], known, n=1, cutoff=0.6)
    return f" (did you mean {close[0]}?)" if close else ""


def main(argv: Sequence[str] | None = None) -> int:
    try:
        args = parse(_parser(), argv)
        code = COMMANDS[args.command](args)
        sys.stdout.flush()  # inside the try: a reader gone away is reported here, not at interpreter exit
        return code
    except ShiftbenchInputError as exc:
        print(f"shiftbench: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("shiftbench: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        # `shiftbench report RUN | head`: the reader has all it wanted. Point stdout at /dev/null so the
        # interpreter's final flush does not fail again, and end as a process stopped by SIGPIPE does.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 128 + signal.SIGPIPE


if __name__ == "__main__":
    sys.exit(main())
