"""docs/cli.md lists every command and every flag `--help` shows (issue 30 item 10): the README's command
table links it, so a flag the README's table does not name is still one click away.

The page is written from the parser (`python -m tests.runner.test_cli_reference > docs/cli.md`); the test
compares each command's flags and arguments with the page's section for it, so a flag added without the
page fails here, while a reworded help text does not.
"""

from __future__ import annotations

import argparse
import re
from collections.abc import Iterator
from pathlib import Path

from runner.cli.main import build_parser

PAGE = Path(__file__).resolve().parents[2] / "docs" / "cli.md"
_HEAD = """# Every command and flag

What `shiftbench COMMAND --help` prints, one table per command, written from the parser itself
(`python -m tests.runner.test_cli_reference > docs/cli.md`; `tests/runner/test_cli_reference.py` fails
when a command gains a flag this page lacks). The README's command table shows the common ones and
what each command is for; this page has them all.
"""


def commands(parser: argparse.ArgumentParser, path: tuple[str, ...] = ()) -> Iterator[
        tuple[tuple[str, ...], argparse.ArgumentParser]]:
    """Every (sub)command with its parser, in the order `--help` lists them."""
    subs = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    if path:
        yield path, parser
    for action in subs:
        for name, sub in action.choices.items():
            yield from commands(sub, path + (name,))


def entries(parser: argparse.ArgumentParser) -> list[tuple[str, str]]:
    """(how the argument is written, its help) for each argument but -h and a sub-command choice."""
    formatter = parser._get_formatter()
    rows = []
    for action in parser._actions:
        if isinstance(action, (argparse._HelpAction, argparse._SubParsersAction)) or action.help == argparse.SUPPRESS:
            continue
        if action.option_strings:
            shown = formatter._format_action_invocation(action).replace(", ", " / ")
        else:
            shown = formatter._metavar_formatter(action, action.dest.upper())(1)[0]
        rows.append((shown, formatter._expand_help(action) if action.help else ""))
    return rows


def reference_text() -> str:
    parser = build_parser()
    parts = [_HEAD]
    for path, sub in commands(parser):
        rows = entries(sub)
        if not rows:
            continue
        parts.append(f"\n## `shiftbench {' '.join(path)}`\n\n| argument | what it does |\n|---|---|")
        parts += [f"| `{_cell(shown)}` | {_cell(' '.join(text.split()))} |" for shown, text in rows]
    return "\n".join(parts) + "\n"


def _cell(text: str) -> str:
    return text.replace("|", "\\|")  # a table cell's pipe, escaped as GitHub's tables read it (code spans too)


def names_in(rows: list[str]) -> set[str]:
    """The flag or argument names of a section's rows (`--journal JOURNAL` -> --journal)."""
    return {match[1] for row in rows if (match := re.match(r"\| `([^ `/]+)", row))}


def sections(text: str) -> dict[str, set[str]]:
    found: dict[str, set[str]] = {}
    for block in text.split("\n## `shiftbench ")[1:]:
        name, body = block.split("`", 1)
        found[name] = names_in(body.splitlines())
    return found


def test_the_page_lists_every_flag_of_every_command() -> None:
    expected = sections(reference_text())
    assert sections(PAGE.read_text()) == expected, ("docs/cli.md is out of date: "
                                                    "python -m tests.runner.test_cli_reference > docs/cli.md")
    assert {"show", "report", "run", "audit faults", "methods check"} <= set(expected)
    assert {"--phase", "--replica", "--limit"} <= expected["show"] and "--slices" in expected["report"]


def test_the_readme_links_the_page_from_its_command_table() -> None:
    readme = (PAGE.parents[1] / "README.md").read_text()
    table = readme.split("## Commands", 1)[1].split("\n\n", 2)[1]
    assert "(docs/cli.md)" in table


def test_methods_usage_shows_its_sub_command_as_optional() -> None:
    usage = build_parser()._subparsers._group_actions[0].choices["methods"].format_usage()  # type: ignore[union-attr]
    assert "[check]" in usage and "{check}" not in usage


if __name__ == "__main__":
    print(reference_text(), end="")
