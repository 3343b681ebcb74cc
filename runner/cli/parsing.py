"""What every command group shares: the parser class, flag types, the journal flag, running a coroutine.

Every error a user can fix ends as one line on stderr naming the file or flag and what to do, with exit
code 2: `ShiftbenchInputError` raised anywhere below reaches `runner.cli.main`, which prints it.
"""

from __future__ import annotations

import argparse
import difflib
from collections.abc import Callable, Coroutine, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

from runner.common.home import default_journal
from simulators.errors import ShiftbenchInputError

if TYPE_CHECKING:
    import asyncio

    from runner.config.settings import SweepConfig

__all__ = ["Command", "Parser", "add_journal", "add_limit", "journal_path", "limit_of", "names", "parse", "positive",
           "run_async", "within"]

Command = Callable[[argparse.Namespace], int]
"""A command's handler: parsed arguments in, exit code out."""


class Parser(argparse.ArgumentParser):
    """argparse, with a usage error as one line through the CLI's own error path (exit code 2).

    Flag prefixes are not accepted: argparse would quietly read `--max-turn 3` as `--max-turns 3`, and a
    later flag sharing the prefix would silently change what an old command line means.
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("allow_abbrev", False)
        super().__init__(*args, **kwargs)

    def error(self, message: str) -> NoReturn:
        raise ShiftbenchInputError(f"{self.prog}: {message}; `{self.prog} --help` lists the options")


def positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a whole number of at least 1, got {text!r}")
    return value


def add_limit(parser: argparse.ArgumentParser, what: str, default: int) -> None:
    """`--limit N` (at most N `what`; 0 or `--all`: every one) and `--all`; a negative N is refused.
    `args.limit_given` says whether `--limit` was on the command line (`--limit 20` is given even where 20
    is the default, so a hint does not offer it as unused)."""
    bound = parser.add_mutually_exclusive_group()
    bound.add_argument("--limit", type=_limit, default=default, metavar="N", action=_GivenLimit,
                       help=f"print at most N {what} (default {default}; 0: all)")
    bound.add_argument("--all", action="store_true", help=f"no bound: print all {what}")
    parser.set_defaults(limit_given=False)


class _GivenLimit(argparse.Action):
    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace, values: object,
                 option_string: str | None = None) -> None:
        setattr(namespace, self.dest, values)
        namespace.limit_given = True


def limit_of(args: argparse.Namespace) -> int | None:
    """The bound `add_limit` parsed: a count, or None for every one."""
    return None if args.all or args.limit == 0 else int(args.limit)


def _limit(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = -1
    if value < 0:
        raise argparse.ArgumentTypeError(f"expected a whole number, 0 or more (0: all), got {text!r}")
    return value


def within(kind: Callable[[str], Any], field: str) -> Callable[[str], Any]:
    """Parse a flag's number, naming the range it must fall in (`SweepConfig.validate` checks the range)."""
    def parse_number(text: str) -> Any:
        try:
            value = kind(text)
        except ValueError:
            value = None
        # Out of range is refused here too, so `--pilot -1` reads as `--limit -1` does: the flag named.
        from runner.config.settings import allowed_range, in_range  # it loads the methods: only when given

        if value is None or not in_range(field, value):
            raise argparse.ArgumentTypeError(f"expected {allowed_range(field)}, got {text!r}")
        return value
    return parse_number


def names(text: str) -> tuple[str, ...]:
    return tuple(part.strip() for part in text.split(",") if part.strip())


def add_journal(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--journal", type=Path, default=None,
                        help=f"the journal file (default: {default_journal()})")


def journal_path(args: argparse.Namespace, config: SweepConfig | None = None) -> Path:
    """`--journal`, else the sweep file's `journal`, else the default, made absolute."""
    if args.journal is not None:
        return Path(args.journal).resolve()
    if config is not None and config.journal:
        return Path(config.journal).resolve()
    return default_journal().resolve()


def run_async(fn: Callable[..., Coroutine[Any, Any, Any]], *args: Any) -> Any:
    """Run a command's coroutine on uvloop where it is installed."""
    import asyncio  # the event loop only for a command that runs one, not for `--help` (asyncio costs 20 ms)

    import anyio

    async def quiet(*given: Any) -> Any:
        asyncio.get_running_loop().set_exception_handler(_late_result)
        return await fn(*given)

    try:
        return anyio.run(quiet, *args, backend_options={"use_uvloop": True})
    except ImportError:
        return anyio.run(quiet, *args)


def _late_result(loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
    """A thread's answer for a waiter already cancelled (aiosqlite's connection thread calls
    `call_soon_threadsafe(future.set_result, ...)`; a task cancelled as its group ends, such as the lease
    keeper mid-renewal, leaves that future cancelled) is dropped: nobody waits for it, and the loop's
    default handler would print a traceback after the run's report. Everything else goes to the default."""
    import asyncio  # imported by run_async already (the loop that calls this one is running)

    if isinstance(context.get("exception"), asyncio.InvalidStateError) and "set_result" in repr(context.get("handle")):
        return
    loop.default_exception_handler(context)


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
