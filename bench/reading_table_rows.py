"""The reading table's machinery (bench/reading_table.py), on the edge table's (`bench.edge_rows`): a thing a
reader tries (`Try`), the row the table prints for it (`Row`: the command, its exit code, how many lines it
printed and the widest, what it said, the journal before and after) and how a row is judged.

A row is judged by what issue 30 asks of it: the exit code, no traceback, a refusal in one line on stderr
with the journal left as it was (and, where asked, nothing on stdout before it), the words the output must
hold (`want`, matched with the output's whitespace collapsed, so a word wrapped at 80 columns still counts)
and must not (`absent`), at most `max_lines` lines, no line wider than `max_width` unless its longest word
is a path kept whole (the output is laid out to the width, a path is never broken), and a row's own
`extra` check (a hash against `sha256sum`, the same interval in two commands).
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from bench.edge_rows import MESSAGE_CHARS, TIMEOUT_S, Bench, State, after_text, first_line, state

__all__ = ["JOURNAL", "Check", "Row", "Try", "attempt", "fits", "note_row", "spoken", "table"]

JOURNAL = ".shiftbench/journal.sqlite"

Check = Callable[[subprocess.CompletedProcess[str]], list[str]]
"""A row's own check: the problems it finds in what the command did (none: fine)."""


@dataclass(frozen=True)
class Try:
    """One thing a reader tries. `columns`: COLUMNS for the command (None: unset, as in a pipe); `quiet`: a
    refusal must print nothing on stdout first; `env`: more environment; `argv0`: a command other than the
    CLI (a Python snippet), shown as run."""

    item: str
    what: str
    argv: tuple[str, ...]
    expect: int | None = 0
    columns: int | None = None
    want: tuple[str, ...] = ()
    absent: tuple[str, ...] = ()
    max_lines: int | None = None
    max_width: int | None = None
    quiet: bool = False
    target: str | None = JOURNAL
    extra: Check | None = None
    env: Mapping[str, str] = field(default_factory=dict)
    argv0: tuple[str, ...] | None = None


@dataclass(frozen=True)
class Row:
    item: str
    what: str
    command: str
    code: str
    lines: str
    widest: str
    message: str
    before: str
    after: str
    check: str


def spoken(text: str) -> str:
    """The output with its whitespace collapsed: what a reader reads, however it was wrapped."""
    return " ".join(text.split())


def fits(text: str, width: int) -> list[str]:
    """Lines wider than `width` whose longest word is not a path (a path is kept whole to be copied)."""
    return [line for line in text.splitlines() if len(line) > width and "/" not in max(line.split(), key=len)]


def _judge(tried: Try, done: subprocess.CompletedProcess[str], before: State, after: State) -> str:
    problems = []
    said = done.stdout + done.stderr
    if "Traceback (most recent call last)" in said:
        problems.append("TRACEBACK")
    if tried.expect is not None and done.returncode != tried.expect:
        problems.append(f"exit {done.returncode}, wanted {tried.expect}")
    if done.returncode not in (0, 1, 3):  # a refusal, an interrupt: one line, nothing changed
        if len(done.stderr.splitlines()) > 1:
            problems.append(f"{len(done.stderr.splitlines())} lines on stderr")
        if (before.kind, before.content) != (after.kind, after.content):
            problems.append("journal changed by a refusal")
        if tried.quiet and done.stdout.strip():
            problems.append(f"printed first: {first_line(done.stdout)[:80]!r}")
    read = spoken(said)
    problems += [f"lacks {word!r}" for word in tried.want if spoken(word) not in read]
    problems += [f"says {word!r}" for word in tried.absent if spoken(word) in read]
    lines = done.stdout.splitlines()
    if tried.max_lines is not None and len(lines) > tried.max_lines:
        problems.append(f"{len(lines)} lines, wanted at most {tried.max_lines}")
    if tried.max_width is not None and (wide := fits(done.stdout, tried.max_width)):
        problems.append(f"{len(wide)} lines over {tried.max_width} columns (widest {max(map(len, wide))})")
    if tried.extra is not None:
        problems += tried.extra(done)
    return "ok" if not problems else "**" + "; ".join(problems) + "**"


def _message(bench: Bench, done: subprocess.CompletedProcess[str]) -> str:
    line = first_line(done.stderr) if done.returncode != 0 and done.stderr.strip() else _last(done.stdout)
    line = line.replace(f"{bench.root}/", "").replace(str(bench.root), ".")
    return line if len(line) <= MESSAGE_CHARS else line[:MESSAGE_CHARS] + " ..."


def _last(text: str) -> str:
    """A run's summary line (`run R: completed; ...`), else a success's closing words: its last paragraph
    when that is a few lines of prose (`show`'s hint, wrapped), else its last line."""
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    ran = [line for line in lines if re.match(r"run \S+: ", line)]
    if ran:
        return ran[0]
    tail: list[str] = []
    for line in reversed(text.rstrip().splitlines()):
        if not line.strip() or line.lstrip().startswith(("╰", "│", "─")):
            break
        tail.insert(0, line.strip())
    return " ".join(tail) if 1 < len(tail) <= 4 else lines[-1] if lines else ""


def call(bench: Bench, tried: Try) -> subprocess.CompletedProcess[str]:
    env = {key: value for key, value in os.environ.items() if key != "COLUMNS"}
    if tried.columns is not None:
        env["COLUMNS"] = str(tried.columns)
    env.update(tried.env)
    command = [*(tried.argv0 or bench.cli), *tried.argv]
    try:
        return subprocess.run(command, cwd=bench.root, env=env, capture_output=True, text=True, timeout=TIMEOUT_S,
                              check=False)
    except subprocess.TimeoutExpired:
        return subprocess.CompletedProcess(command, -1, "", f"timed out after {TIMEOUT_S} s")


def attempt(bench: Bench, tried: Try) -> tuple[Row, subprocess.CompletedProcess[str]]:
    target = bench.root / tried.target if tried.target else None
    before = state(target) if target else State("-", "-")
    done = call(bench, tried)
    after = state(target) if target else State("-", "-")
    out = done.stdout.splitlines()
    shown = shlex.join(["python", *tried.argv0[1:], *tried.argv]) if tried.argv0 else "shiftbench " + shlex.join(
        tried.argv)
    if tried.columns is not None:
        shown = f"COLUMNS={tried.columns} {shown}"
    widest = max((len(line) for line in out), default=0)
    row = Row(tried.item, tried.what, shown.replace(str(bench.root), "."), str(done.returncode),
              f"{len(out):,} + {len(done.stderr.splitlines())}", str(widest), _message(bench, done),
              before.text, after_text(before, after), _judge(tried, done, before, after))
    return row, done


def note_row(item: str, what: str, message: str, check: str = "ok") -> Row:
    """A row that runs nothing here: where else it is shown, or why it was skipped."""
    return Row(item, what, "-", "-", "-", "-", message, "-", "-", check)


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def table(rows: Sequence[Row]) -> str:
    lines = ["| item | what | command | exit | lines (out + err) | widest | said | journal before | after | check |",
             "|---|---|---|---:|---:|---:|---|---|---|---|"]
    for row in rows:
        command = f"`{row.command}`" if row.command != "-" else "-"
        cells = (row.item, row.what, command, row.code, row.lines, row.widest, row.message, row.before, row.after,
                 row.check)
        lines.append("| " + " | ".join(_cell(cell) for cell in cells) + " |")
    return "\n".join(lines)
