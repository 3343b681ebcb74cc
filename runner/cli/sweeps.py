"""`run` and `resume`: start a sweep from flags, a sweep file or a locked plan, or continue one in place.

The flags that decide results are defined once here (`add_result_flags`), because `lock --amend` takes
exactly the same ones. After a run ends its summary is printed (the leaderboard and what to run next;
`report` has the rest); numpy and the report load only then, so a run starts fast.
"""

from __future__ import annotations

import argparse
import os
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from methods.names import REGISTERED_METHODS
from runner.cli.parsing import Command, add_journal, journal_path, names, positive, run_async, within
from runner.common.tables import say_fitted
from simulators.errors import ShiftbenchInputError
from simulators.protocol import SCENARIOS

if TYPE_CHECKING:  # the settings load the methods: imported when a sweep is configured
    from runner.config.settings import SweepConfig

__all__ = ["EXIT_BY_STATUS", "SWEEP_COMMANDS", "add_result_flags", "add_sweep_parsers", "flag_overrides",
           "sweep_config"]

EXIT_BY_STATUS = {"completed": 0, "budget_exhausted": 0, "interrupted": 130, "failed": 1}
DISPLAYS = ("auto", "rich", "plain", "none")
DISPLAY_HELP = "rich: the live dashboard; plain: a status line every 10 s; auto: rich on a terminal"

_FLAG_TO_FIELD = {"models": "models", "methods": "methods", "scenarios": "scenarios", "dataset": "dataset",
                  "seed": "seed", "block_size": "block_size", "concurrency": "concurrency",
                  "model_concurrency": "model_concurrency", "pilot": "pilot", "budget": "budget",
                  "allow_unpriced": "allow_unpriced", "judge": "judge", "label": "labels",
                  "repeats": "repeats", "max_tokens": "max_tokens", "max_turns": "max_turns",
                  "temperature": "temperature", "call_timeout": "call_timeout", "shards": "shards",
                  "replicas": "replicas", "methods_in_process": "methods_in_process",
                  "method_context_limit": "method_context_limit", "method_learn_limit": "method_learn_limit",
                  "method_reads": "method_reads", "batch": "batch", "method_env": "method_env",
                  "method_memory": "method_memory", "method_output_size": "method_output_size",
                  "method_state_size": "method_state_size", "method_context_size": "method_context_size",
                  "method_workers": "method_workers"}


def add_sweep_parsers(commands: Any) -> None:
    _add_run(commands.add_parser("run", help="start a sweep (default: built-in suite, scripted model, "
                                             "methods blind and oracle)"))
    resume = commands.add_parser("resume", help="continue an interrupted run in place")
    resume.add_argument("run_id", help="the run, as `shiftbench runs` lists it")
    resume.add_argument("--budget", type=float, help="a new hard cap in USD (a run stopped by its cap resumes "
                                                      "with a higher one)")
    resume.add_argument("--accept-method-change", action="store_true",
                        help="continue although a method's source changed since the run began (the change is "
                             "recorded in the run's provenance)")
    add_journal(resume)
    resume.add_argument("--display", choices=DISPLAYS, default="auto", help=DISPLAY_HELP)


def _add_run(run: argparse.ArgumentParser) -> None:
    source = run.add_mutually_exclusive_group()
    source.add_argument("--config", type=Path, help="a TOML sweep file; flags override its keys")
    source.add_argument("--plan", type=Path, help="run a locked plan (refused if flags change it without an "
                                                  "amendment)")
    add_result_flags(run)
    run.add_argument("--concurrency", type=int, help="model calls in flight across the run")
    run.add_argument("--model-concurrency", type=int, help="model calls in flight per model")
    run.add_argument("--budget", type=float, help="hard cap on the run's spend in USD")
    run.add_argument("--allow-unpriced", action="store_true", default=None,
                     help="run models with no known price (spend counts only what providers report)")
    run.add_argument("--label", action="append", metavar="TEXT",
                     help="what this run is for, shown by `shiftbench runs` (repeatable)")
    run.add_argument("--batch", choices=("tests", "off"), default=None,
                     help="tests: test episodes' model calls (agent and judge) go through the endpoint's batch API "
                          "at its batch price, serving stays live (default off; the sweep file's [batch] table sets "
                          "thresholds; resume keeps it)")
    run.add_argument("--display", choices=DISPLAYS, default="auto", help=DISPLAY_HELP)
    add_journal(run)
    _add_method_flags(run)
    shard = run.add_argument_group("shards (one part of a sweep per process; `journal merge` joins them)")
    shard.add_argument("--shard", metavar="I/N|auto",
                       help="run shard I (from 0) of N; auto: I from SLURM_ARRAY_TASK_ID or JOB_COMPLETION_INDEX, N "
                            "from --shards or the sweep file's shards (required). The same command again continues "
                            "the shard. Default journal: .shiftbench/journal-shard-I-of-N.sqlite; '{shard}' in "
                            "--journal becomes I")
    shard.add_argument("--shards", type=positive, help="the sweep's shard count for --shard auto (the array's size or "
                                                        "the Indexed Job's completions; a SLURM array of another size "
                                                        "is refused)")
    shard.add_argument("--sweep", metavar="NAME", help="name the sweep (default: derived from its config, dataset "
                                                       "and shard count)")


def _add_method_flags(run: argparse.ArgumentParser) -> None:
    guest = run.add_argument_group("user methods (each runs in a worker process of its own, docs/methods.md)")
    guest.add_argument("--methods-in-process", action="store_true", default=None,
                       help="run them in the runner's process instead (to step through one in a debugger); "
                            "recorded in the run's provenance")
    guest.add_argument("--method-context-limit", type=within(float, "method_context_limit"), metavar="SECONDS",
                       help="one context call may take this long before its stream stops with method_error "
                            "(default 60)")
    guest.add_argument("--method-learn-limit", type=within(float, "method_learn_limit"), metavar="SECONDS",
                       help="one learn call (a block) may take this long (default 900)")
    guest.add_argument("--method-reads", action="append", metavar="DIR",
                       help="a folder a worker's method may read beside its own source (repeatable; never one "
                            "that holds the run's journal or dataset)")
    guest.add_argument("--method-env", action="append", metavar="NAME",
                       help="an environment variable a worker gets beside PATH, the locale and TZ (repeatable; "
                            "API keys never pass unless named)")
    guest.add_argument("--method-memory", type=within(float, "method_memory"), metavar="MB",
                       help="a worker's address space (default 4096)")
    guest.add_argument("--method-output-size", type=within(float, "method_output_size"), metavar="MB",
                       help="what a worker may print over its life, into its output.log (default 16)")
    guest.add_argument("--method-state-size", type=within(float, "method_state_size"), metavar="MB",
                       help="one state() as JSON (default 64)")
    guest.add_argument("--method-context-size", type=within(float, "method_context_size"), metavar="MB",
                       help="one context text (default 4)")
    guest.add_argument("--method-workers", type=within(int, "method_workers"), metavar="N",
                       help="the most streams served at once whose method runs in a worker on an offline model "
                            "(each holds a worker; default 0: twice the cores; live models are never held back)")


def add_result_flags(run: argparse.ArgumentParser) -> None:
    """The flags that decide results (what a plan locks)."""
    run.add_argument("--models", type=names, help=(
        "comma-separated. scripted: the offline agent that follows the documents and any policy block it is "
        "given; scripted:docs: the documents only; openai:<id>, anthropic:<id>, openrouter:<vendor>/<id>, "
        "together:<id>, fireworks:<id>, openai-compatible:<id>@http://host:port/v1, or a sweep file's endpoint"))
    run.add_argument("--methods", type=names, help=f"comma-separated: {', '.join(REGISTERED_METHODS)}, an "
                     "entry point's name, module:NAME, ./file.py:NAME, slb:module:Class; NAME=SPEC names one")
    run.add_argument("--scenarios", type=names, help=f"comma-separated, of {', '.join(SCENARIOS)} (default: all)")
    run.add_argument("--dataset", help="a dataset directory (default: the built-in suite)")
    run.add_argument("--seed", type=int, help="seed of the built-in suite (default 0)")
    run.add_argument("--block-size", type=int, help="serving episodes per learning step (default 1; 12 = reference)")
    run.add_argument("--pilot", type=within(int, "pilot"), help="only the first N serving and N test tasks of each "
                     "window, then the projected cost of the full sweep (0: no pilot)")
    run.add_argument("--repeats", type=int, help="run each test task K times: spread between repeats and pass^k")
    run.add_argument("--replicas", type=int, metavar="K",
                     help="K independent streams of every model, method and scenario (own serving stream, method "
                          "state and sampling seed): reports measure the noise between them (default 1)")
    run.add_argument("--max-tokens", type=int, help="output tokens per model call at most (default 4096; "
                                                    "a call reserves its worst case from it)")
    run.add_argument("--max-turns", type=within(int, "max_turns"),
                     help="model turns per episode at most (default 100); an episode that reaches it ends "
                          "turn_limit and is graded as it stands")
    run.add_argument("--temperature", type=within(float, "temperature"),
                     help="sampling temperature of every model call, 0 to 2 (default: not sent, the provider's "
                          "own; Anthropic accepts 0 to 1; the offline scripted models ignore it)")
    run.add_argument("--call-timeout", type=within(float, "call_timeout"), metavar="SECONDS",
                     help="one attempt of a model call may take this long before it fails as a timeout and is "
                          "retried (default 900); a stream silent for 120 s is cut sooner")
    run.add_argument("--judge", help="a model to judge pitches (default: the offline deterministic judge)")


def sweep_config(args: argparse.Namespace) -> SweepConfig:
    from runner.config.settings import SweepConfig, load_config_file
    from runner.evidence.plan_lock import follow_plan

    if getattr(args, "plan", None):
        return follow_plan(args.plan, flag_overrides(args), print)
    config = load_config_file(args.config) if args.config else SweepConfig()
    if args.config:
        from runner.models.endpoints import check_endpoint_tables

        check_endpoint_tables(args.config, config.endpoints)
    return replace(config, **flag_overrides(args)).validate("flags")


def flag_overrides(args: argparse.Namespace) -> dict[str, Any]:
    """The config keys the flags set (flags a parser does not have count as not given)."""
    overrides = {f: getattr(args, flag) for flag, f in _FLAG_TO_FIELD.items() if getattr(args, flag, None) is not None}
    if "labels" in overrides:
        overrides["labels"] = tuple(overrides["labels"])
    if "method_env" in overrides:
        overrides["method_env"] = tuple(overrides["method_env"])
    if "method_reads" in overrides:
        overrides["method_reads"] = tuple(str(Path(d).expanduser().resolve()) for d in overrides["method_reads"])
    if overrides.get("dataset"):
        overrides["dataset"] = str(Path(overrides["dataset"]).resolve())
    return overrides


def _cmd_run(args: argparse.Namespace) -> int:
    from runner.schedule.sweep import start_sweep

    config = sweep_config(args)
    if args.shard is not None:
        return _run_shard(args, config)
    if args.sweep is not None or args.shards is not None:
        raise ShiftbenchInputError(f"{'--sweep' if args.sweep is not None else '--shards'}: only with --shard; "
                                   "pass --shard I/N or --shard auto")
    journal = journal_path(args, config)
    outcome = run_async(start_sweep, config, journal, args.display, say_fitted)
    _print_report(journal, outcome.run_id)
    return EXIT_BY_STATUS.get(outcome.status, 1)


def _run_shard(args: argparse.Namespace, config: SweepConfig) -> int:
    from runner.schedule.sweep import DEFAULT_HOME
    from runner.shards.spec import parse_shard
    from runner.shards.start import start_shard

    spec = parse_shard(args.shard, os.environ, config.shards)
    if args.journal is None and not config.journal:
        journal = (DEFAULT_HOME / f"journal-shard-{spec.index}-of-{spec.count}.sqlite").resolve()
    else:
        journal = Path(str(journal_path(args, config)).replace("{shard}", str(spec.index)))
    outcome = run_async(start_shard, config, spec, journal, args.display, say_fitted, args.sweep or "")
    _print_report(journal, outcome.run_id)
    return EXIT_BY_STATUS.get(outcome.status, 1)


def _cmd_resume(args: argparse.Namespace) -> int:
    from runner.schedule.sweep import resume_sweep

    journal = journal_path(args)
    outcome = run_async(resume_sweep, args.run_id, journal, args.display, say_fitted, args.budget, None,
                        args.accept_method_change)
    _print_report(journal, outcome.run_id)
    return EXIT_BY_STATUS.get(outcome.status, 1)


def _print_report(journal: Path, run_id: str) -> None:
    """The end-of-run summary (the leaderboard and what to run next); `report` prints the rest."""
    from runner.common.tables import terminal_width
    from runner.report import build_report  # after the run: numpy is not on its start's path
    from runner.report.summary import render_summary
    from runner.schedule.sweep import default_journal

    flag = [] if journal == default_journal().resolve() else ["--journal", str(journal)]
    print(render_summary(run_async(build_report, journal, run_id), terminal_width(), flag))


SWEEP_COMMANDS: dict[str, Command] = {"run": _cmd_run, "resume": _cmd_resume}
