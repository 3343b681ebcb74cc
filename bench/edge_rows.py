"""The edge table's machinery (bench/edge_table.py): an edge a user tries (`Edge`), the row the table prints
for it (`Row`), what is on disk at its target before and after (`State`), and how a row is judged: the exit
code the issue asks for, one line on stderr, nothing changed by a refusal, no traceback. `Bench` is the
temporary folder and the CLI every edge runs through; `setup_run` makes the runs the edges read.
"""

from __future__ import annotations

import hashlib
import json
import os
import shlex
import stat
import subprocess
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from bench import media

__all__ = ["MESSAGE_CHARS", "PLAN", "TIMEOUT_S", "Bench", "Edge", "Row", "State", "attempt", "first_line",
           "setup_run", "skipped", "state", "write"]

TIMEOUT_S = 600
MESSAGE_CHARS = 520
"""A message longer than this is cut (the lists of known keys run to ~600 characters)."""


@dataclass(frozen=True)
class Edge:
    """One thing a user tries. `expect` is the exit code issue 21 asks for (None: 0 or 2 both fine, as
    for a path under a missing folder); `made` the kind the target must have after a success; `leaves`
    allows a refusal to change the target (a run stopped by a full disk keeps its journal); `adds` lets a
    success add files to a folder but never change or remove one; `scope` is a folder a refusal must leave
    exactly as it was (no staging file beside the target); `want` are words the message must hold; `quiet`
    asks for nothing on stdout (a refused resume)."""

    item: str
    edge: str
    argv: tuple[str, ...]
    target: str | None = None
    expect: int | None = 2
    made: str | None = None
    leaves: bool = False
    adds: bool = False
    scope: str | None = None
    want: tuple[str, ...] = ()
    quiet: bool = False


@dataclass(frozen=True)
class Row:
    item: str
    edge: str
    command: str
    code: str
    message: str
    before: str
    after: str
    check: str


@dataclass(frozen=True)
class State:
    """A path as the table shows it, and what 'unchanged' is judged by."""

    kind: str  # absent, regular, dir, symlink, char device, block device, FIFO, socket
    text: str
    content: object = None
    inode: int = 0


@dataclass
class Bench:
    """The temporary folder, the CLI to call and the runs the edges read."""

    root: Path
    cli: tuple[str, ...]
    pilot: int
    runs: dict[str, str] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)

    def call(self, argv: Sequence[str]) -> subprocess.CompletedProcess[str]:
        return subprocess.run([*self.cli, *argv], cwd=self.root, capture_output=True, text=True,
                              timeout=TIMEOUT_S, check=False)

    def run_id(self, journal: str = ".shiftbench/journal.sqlite") -> str:
        """The newest run of a journal, as `shiftbench runs --json` lists it."""
        done = self.call(("runs", "--json", "--journal", journal))
        if done.returncode != 0:
            raise SystemExit(f"edge_table: runs --journal {journal}: {first_line(done.stderr)}")
        runs = json.loads(done.stdout)
        return str(max(runs, key=lambda run: run["created_at"])["run_id"])


# --- what is on disk -------------------------------------------------------------------------------


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def state(path: Path) -> State:
    try:
        info = path.lstat()
    except FileNotFoundError:
        return State("absent", "absent")
    mode = info.st_mode
    if stat.S_ISREG(mode):
        return State("regular", f"regular {info.st_size:,} B", _sha(path), info.st_ino)
    if stat.S_ISDIR(mode):
        return _folder(path)
    if stat.S_ISLNK(mode):
        return State("symlink", f"symlink -> {os.readlink(path)}", os.readlink(path), info.st_ino)
    for kind, test in (("char device", stat.S_ISCHR), ("block device", stat.S_ISBLK)):
        if test(mode):
            numbers = f"{os.major(info.st_rdev)},{os.minor(info.st_rdev)}"
            return State(kind, f"{kind} {numbers}", numbers, info.st_ino)
    kind = "FIFO" if stat.S_ISFIFO(mode) else "socket" if stat.S_ISSOCK(mode) else f"mode {mode:o}"
    return State(kind, kind, None, info.st_ino)


def _folder(path: Path) -> State:
    files = [p for p in sorted(path.rglob("*")) if not p.is_dir()]
    names = sorted(p.name for p in path.iterdir())
    listed = f": {', '.join(names)}" if 0 < len(names) <= 4 else ""
    count = f"{len(files)} file{'' if len(files) == 1 else 's'}"
    return State("dir", f"dir ({count}{listed})", media.snapshot(path), path.lstat().st_ino)


def after_text(before: State, after: State) -> str:
    """The after column reads against the before: same bytes, new bytes, or a file replaced whole."""
    if before.kind == after.kind == "regular":
        same = "same sha256" if before.content == after.content else "new sha256"
        how = "" if before.content == after.content else (
            ", replaced whole (new inode)" if before.inode != after.inode else ", written in place (same inode)")
        return f"{after.text} {same}{how}"
    if before.kind == after.kind == "dir" and before.content == after.content:
        return f"{after.text} unchanged"
    return after.text


# --- one row ---------------------------------------------------------------------------------------


def first_line(text: str) -> str:
    return next((line for line in text.splitlines() if line.strip()), "")


def _lines(text: str) -> str:
    count = len(text.splitlines())
    return f"{count:,} line{'' if count == 1 else 's'}"


def message(bench: Bench, done: subprocess.CompletedProcess[str]) -> str:
    """Stderr's first line, or stdout's (with how much it printed) when stderr is empty; paths under the
    temporary folder are shown relative to it, as the commands name them."""
    if done.stderr.strip():
        line = first_line(done.stderr)
    else:
        out = done.stdout
        line = f"{first_line(out)} [stdout: {_lines(out)}, {len(out.encode()):,} B]"
    line = line.replace(f"{bench.root}/", "").replace(str(bench.root), ".")
    return line if len(line) <= MESSAGE_CHARS else line[:MESSAGE_CHARS] + " ..."


Scope = tuple[bool, dict[str, tuple[int, int, bytes | None]]]


def scope_of(path: Path | None) -> Scope | None:
    if path is None:
        return None
    return path.exists(), media.snapshot(path) if path.is_dir() else {}


def changes(before: Scope, after: Scope) -> str:
    """What a refusal changed in its scope, by name, or '' for nothing."""
    if before[0] != after[0]:
        return "made the folder" if after[0] else "removed the folder"
    old, new = before[1], after[1]
    said = [f"+{name}" for name in new if name not in old] + [f"-{name}" for name in old if name not in new]
    said += [f"~{name}" for name in old if name in new and old[name] != new[name]]
    return ", ".join(said[:4]) + (" ..." if len(said) > 4 else "")


def _additions_only(before: State, after: State) -> bool:
    old, new = before.content, after.content
    return isinstance(old, dict) and isinstance(new, dict) and all(new.get(name) == kept for name, kept in old.items())


def judge(edge: Edge, done: subprocess.CompletedProcess[str], before: State, after: State,
          scoped: tuple[Scope | None, Scope | None] = (None, None)) -> str:
    problems = []
    if "Traceback (most recent call last)" in done.stderr:
        problems.append("TRACEBACK")
    if edge.expect is not None and done.returncode != edge.expect:
        problems.append(f"exit {done.returncode}, wanted {edge.expect}")
    if done.returncode != 0:
        if len(done.stderr.splitlines()) > 1:
            problems.append(f"{len(done.stderr.splitlines())} lines on stderr")
        if not edge.leaves and (before.kind, before.content) != (after.kind, after.content):
            problems.append("target changed by a refusal")
        old, new = scoped
        if old is not None and new is not None and (changed := changes(old, new)):
            problems.append(f"left beside it: {changed}")
    elif edge.made is not None and after.kind != edge.made:
        problems.append(f"target is {after.kind}, wanted {edge.made}")
    elif edge.adds and not _additions_only(before, after):
        problems.append("a file that was there changed or went")
    said = done.stderr if done.stderr.strip() else done.stdout
    problems += [f"message lacks {word!r}" for word in edge.want if word not in said]
    if edge.quiet and done.stdout.strip():
        problems.append(f"printed first: {first_line(done.stdout)[:80]!r}")
    return "ok" if not problems else "**" + "; ".join(problems) + "**"


def attempt(bench: Bench, edge: Edge) -> Row:
    target = bench.root / edge.target if edge.target else None
    scope = bench.root / edge.scope if edge.scope else None
    before, scoped = state(target) if target else State("-", "-"), scope_of(scope)
    try:
        done = bench.call(edge.argv)
    except subprocess.TimeoutExpired:
        done = subprocess.CompletedProcess(edge.argv, -1, "", f"timed out after {TIMEOUT_S} s")
    after = state(target) if target else State("-", "-")
    check = judge(edge, done, before, after, (scoped, scope_of(scope)))
    return Row(edge.item, edge.edge, "shiftbench " + shlex.join(edge.argv), str(done.returncode),
               message(bench, done), before.text, after_text(before, after), check)


def skipped(item: str, edge: str, reason: str) -> Row:
    return Row(item, edge, "-", "-", f"skipped: {reason}", "-", "-", "skipped")


# --- the runs the edges read -----------------------------------------------------------------------


def setup_run(bench: Bench, item: str, name: str, *flags: str) -> Row:
    """A run the edges read, into the default journal; its id kept under `name`."""
    argv = ("run", *flags, "--pilot", str(bench.pilot), "--display", "none")
    started = time.perf_counter()
    row = attempt(bench, Edge(item, f"the {name} run", argv, ".shiftbench/journal.sqlite", expect=0, made="regular"))
    if row.code != "0":
        raise SystemExit(f"edge_table: the {name} run failed: {row.message}")
    bench.runs[name] = bench.run_id()
    bench.notes.append(f"{name} run {bench.runs[name]}: `{row.command}` took {time.perf_counter() - started:.1f} s")
    return row


def write(bench: Bench, name: str, text: str) -> str:
    (bench.root / name).write_text(text)
    return name


PLAN = """[plan]
question = "Does tabular beat blind on Avg H by 10 points?"
comparison = ["scripted/tabular", "scripted/blind"]
metric = "avg_h"
threshold = {threshold}
test = "paired_bootstrap"

[sweep]
models = ["scripted"]
methods = ["tabular", "blind"]
scenarios = ["retail_l1"]
{extra}"""
