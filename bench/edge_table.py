"""The edge table of issue 21: every edge a user meets after the quickstart, tried as a user would.

In a fresh temporary folder it makes the quickstart's run (the built-in suite, the offline scripted model,
a pilot, blind and a learning method), then runs each edge of issue 21 items 1-5 and 7 through the real
CLI in a subprocess, with the temporary folder as its working directory, and prints one Markdown row per
edge: the exact command, its exit code, its message (the first line of stderr, or of stdout when that is
the message), and what was on disk at the target before and after. A last column judges the row: the
exit code the issue asks for, one line on stderr, nothing on disk changed by a refusal, no traceback.

Bad media are real (bench/media.py): a folder, a device node made here, a FIFO, a socket, a small tmpfs
that fills up, a read-only bind mount. Where the machine refuses a mount or mknod the row says so.

    python -m bench.edge_table [--out FILE.md] [--only item1,item3] [--pilot 3] [--keep]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shlex
import shutil
import stat
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from bench import media
from bench.machine import load_average

__all__ = ["ITEMS", "Edge", "Row", "main"]

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
            raise SystemExit(f"edge_table: runs --journal {journal}: {_first_line(done.stderr)}")
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


def _first_line(text: str) -> str:
    return next((line for line in text.splitlines() if line.strip()), "")


def _lines(text: str) -> str:
    count = len(text.splitlines())
    return f"{count:,} line{'' if count == 1 else 's'}"


def message(bench: Bench, done: subprocess.CompletedProcess[str]) -> str:
    """Stderr's first line, or stdout's (with how much it printed) when stderr is empty; paths under the
    temporary folder are shown relative to it, as the commands name them."""
    if done.stderr.strip():
        line = _first_line(done.stderr)
    else:
        out = done.stdout
        line = f"{_first_line(out)} [stdout: {_lines(out)}, {len(out.encode()):,} B]"
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
        problems.append(f"printed first: {_first_line(done.stdout)[:80]!r}")
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


# --- item 1: reading results -----------------------------------------------------------------------


def item1(bench: Bench) -> Iterator[Row]:
    run, journal = bench.runs["quickstart"], ".shiftbench/journal.sqlite"
    t = "state of tabular, retail_l1 window 3"
    edges = [
        ("show: a stream the run lacks", ("show", run, "--stream", "scripted/oracle"), ("scripted/blind",)),
        ("show: a scenario the run lacks", ("show", run, "--scenario", "retail_l9"), ("retail_l1",)),
        ("show: a window no scenario has", ("show", run, "--window", "99"), ("0, 1",)),
        ("show: a window past retail_l1's last (5)",
         ("show", run, "--stream", "scripted/blind", "--scenario", "retail_l1", "--window", "6"), ("5",)),
        ("show: a unit the run lacks", ("show", run, "--unit", "scripted|blind|retail_l1|test|rt_nope"), ()),
        ("show: a replica the run lacks", ("show", run, "--replica", "1"), ("replica",)),
        ("show: a run the journal lacks", ("show", "r-no-such-run"), ("runs",)),
        ("state: a stream the run lacks", ("state", run, "--stream", "scripted/oracle", "--scenario", "retail_l1"),
         ("scripted/tabular",)),
        ("state: a scenario the run lacks", ("state", run, "--scenario", "retail_l9"), ("retail_l1",)),
        ("state: a window past retail_l1's last (5)", ("state", run, "--scenario", "retail_l1", "--window", "6"),
         ("5",)),
        ("state: a replica (state has no --replica)",
         ("state", run, "--stream", "scripted/tabular", "--scenario", "retail_l1", "--replica", "1"), ()),
    ]
    for edge, argv, want in edges:
        yield attempt(bench, Edge("1", edge, argv, journal, want=want))
    for edge, argv in (
        ("show, README walkthrough (failed blind episodes)",
         ("show", run, "--failed", "--stream", "scripted/blind", "--scenario", "retail_l1", "--limit", "3")),
        ("state, README walkthrough (every stream)", ("state", run, "--scenario", "retail_l1", "--window", "3")),
        (f"{t}, as text", ("state", run, "--stream", "scripted/tabular", "--scenario", "retail_l1", "--window", "3")),
        (f"{t}, --json",
         ("state", run, "--stream", "scripted/tabular", "--scenario", "retail_l1", "--window", "3", "--json")),
    ):
        yield attempt(bench, Edge("1", edge, argv, journal, expect=0))
    yield attempt(bench, Edge("1", "export: a run the journal lacks", ("export", "r-no-such-run", "--out", "logs"),
                              "logs"))
    yield attempt(bench, Edge("1", "export: a stream (export has no filters)",
                              ("export", run, "--out", "logs", "--stream", "scripted/oracle"), "logs"))
    yield attempt(bench, Edge("1", "export, README walkthrough", ("export", run, "--format", "jsonl", "--out", "logs/"),
                              "logs", expect=0, made="dir"))


# --- item 2: numbers that say what they are --------------------------------------------------------


def item2(bench: Bench) -> Iterator[Row]:
    yield setup_run(bench, "2", "other", "--methods", "blind", "--scenarios", "retail_l1,banking_l1")
    run, other, journal = bench.runs["quickstart"], bench.runs["other"], ".shiftbench/journal.sqlite"
    yield attempt(bench, Edge("2", "estimate from the offline run", ("estimate", run), journal, want=("pilot",)))
    yield attempt(bench, Edge("2", "estimate from the offline run for a priced model",
                              ("estimate", run, "--models", "openai:gpt-4.1-mini", "--json"), journal,
                              want=("pilot",)))
    pair = (f"{run}:scripted/blind", f"{other}:scripted/blind")
    yield attempt(bench, Edge("2", "compare: runs over different scenarios", ("compare", *pair), journal,
                              want=("retail_l2",)))
    yield attempt(bench, Edge("2", "compare: the same, --shared", ("compare", *pair, "--shared"), journal,
                              expect=0))


# --- item 3: every file written safely -------------------------------------------------------------


def _outputs(bench: Bench, target: str) -> list[tuple[str, tuple[str, ...]]]:
    run = bench.runs["quickstart"]
    return [("report --html", ("report", run, "--html", target)),
            ("compare --html", ("compare", f"{run}:scripted/tabular", f"{run}:scripted/blind", "--html", target)),
            ("export --out", ("export", run, "--out", target)),
            ("data build --out", ("data", "build", "--out", target)),
            ("lock", ("lock", target)),
            ("journal merge OUT", ("journal", "merge", target, "shard.sqlite"))]


@contextmanager
def _hazards(bench: Bench) -> Iterator[list[tuple[str, str | None, str]]]:
    """(name, target or None, why not) for each kind of path no output may replace."""
    folder = bench.root / "hazards"
    folder.mkdir()
    (folder / "a-folder").mkdir()
    (folder / "a-folder" / "thesis.tex").write_text("years of work")
    made: list[tuple[str, str | None, str]] = [("an existing folder", "hazards/a-folder", "")]
    try:
        media.device(folder / "null", media.NULL_DEVICE)
        made.append(("a device node (a copy of /dev/null made here)", "hazards/null", ""))
    except media.Unavailable as exc:
        made.append(("a device node", None, str(exc)))
    media.fifo(folder / "pipe")
    made.append(("a FIFO", "hazards/pipe", ""))
    with media.unix_socket(folder / "sock"):
        made.append(("a socket (listening)", "hazards/sock", ""))
        made.append(("a path under a missing folder", "missing/deeper/out", ""))  # made unique per command
        yield made


def _shard(bench: Bench) -> None:
    """One finished shard of a sweep: what `journal merge` takes."""
    done = bench.call(("run", "--scenarios", "retail_l1", "--methods", "blind", "--pilot", "1", "--shard", "0/1",
                       "--display", "none", "--journal", "shard.sqlite"))
    if done.returncode != 0:
        raise SystemExit(f"edge_table: the shard run failed: {_first_line(done.stderr)}")


def item3(bench: Bench) -> Iterator[Row]:
    _shard(bench)
    write(bench, "plan.toml", PLAN.format(threshold="10.0", extra=""))
    with _hazards(bench) as kinds:
        for kind, target, why in kinds:
            for number, (name, _) in enumerate(_outputs(bench, "-")):
                if target is None:
                    yield skipped("3", f"{name} to {kind}", why)
                else:
                    yield attempt(bench, _hazard_edge(bench, kind, target, number))
    yield from _regular_files(bench)
    yield from _full_disk_run(bench)
    yield from _full_disk_outputs(bench)


def _hazard_edge(bench: Bench, kind: str, target: str, number: int) -> Edge:
    """A refusal, except where the path is fine: one under a missing folder (each command its own, made or
    refused whole), or an existing folder given to export (it adds its file, touching nothing there)."""
    if target.startswith("missing/"):
        target = f"missing-{number}/deeper/out"
    name, argv = _outputs(bench, target)[number]
    folder = name in ("export --out", "data build --out")
    if target.startswith("missing-"):
        return Edge("3", f"{name} to {kind}", argv, target, expect=None, made="dir" if folder else "regular",
                    scope=target.split("/")[0])
    if name == "export --out" and kind == "an existing folder":
        return Edge("3", f"{name} to {kind} (writes its file into it)", argv, target, expect=0, adds=True)
    return Edge("3", f"{name} to {kind}", argv, target, scope="hazards")


def _regular_files(bench: Bench) -> Iterator[Row]:
    """An existing regular file: replaced whole by a file output, refused where a folder is wanted."""
    run = bench.runs["quickstart"]
    write(bench, "old-report.html", "last week's report")
    write(bench, "old-compare.html", "last week's comparison")
    write(bench, "page.html", "the page a link points at")
    os.symlink("page.html", bench.root / "latest.html")
    write(bench, "notes.txt", "my notes")
    write(bench, "merged.sqlite", "not yet merged")
    os.symlink("hazards/null", bench.root / "to-null.html")
    os.symlink("nowhere/logs", bench.root / "dangling")
    for edge, argv, target, expect in (
        ("report --html to an existing regular file", ("report", run, "--html", "old-report.html"),
         "old-report.html", 0),
        ("compare --html to an existing regular file",
         ("compare", f"{run}:scripted/tabular", f"{run}:scripted/blind", "--html", "old-compare.html"),
         "old-compare.html", 0),
        ("report --html to a symlink to a regular file", ("report", run, "--html", "latest.html"), "page.html", 0),
        ("report --html to a symlink to the device node", ("report", run, "--html", "to-null.html"), "hazards/null", 2),
        ("export --out to a dangling symlink", ("export", run, "--out", "dangling"), "dangling", 2),
        ("lock an unlocked plan (rewritten with its [lock])", ("lock", "plan.toml"), "plan.toml", 0),
        ("export --out to an existing regular file", ("export", run, "--out", "notes.txt"), "notes.txt", 2),
        ("data build --out to an existing regular file", ("data", "build", "--out", "notes.txt"), "notes.txt", 2),
        ("journal merge OUT an existing regular file", ("journal", "merge", "merged.sqlite", "shard.sqlite"),
         "merged.sqlite", 2),
    ):
        yield attempt(bench, Edge("3", edge, argv, target, expect=expect, made="regular" if expect == 0 else None))


def _full_disk_run(bench: Bench) -> Iterator[Row]:
    """A run whose journal's disk fills (4 MB tmpfs, 300 kB left), then its resume once there is room."""
    try:
        with media.small_disk(bench.root / "disk-run", 4096) as disk:
            filler = media.fill(disk, 300_000)
            argv = ("run", "--scenarios", "retail_l1,pitch_l1", "--methods", "blind,tabular", "--pilot", "2",
                    "--display", "none", "--journal", "disk-run/journal.sqlite")
            yield attempt(bench, Edge("3", "run on a disk that fills (tmpfs, 300 kB free)", argv, "disk-run",
                                      leaves=True, want=("shiftbench resume",)))
            if (disk / "journal.sqlite").exists():
                filler.unlink()
                run = bench.run_id("disk-run/journal.sqlite")
                yield attempt(bench, Edge("3", "resume it once the filler is removed",
                                          ("resume", run, "--journal", "disk-run/journal.sqlite", "--display", "none"),
                                          "disk-run", expect=0, made="dir"))
    except media.Unavailable as exc:
        yield skipped("3", "run on a full disk", str(exc))


def _full_disk_outputs(bench: Bench) -> Iterator[Row]:
    """Outputs on a 1 MB tmpfs with 24 kB left: each refused whole, the disk as it was."""
    run = bench.runs["quickstart"]
    try:
        with media.small_disk(bench.root / "disk", 1024) as disk:
            (disk / "kept").mkdir()
            (disk / "kept" / "report.html").write_text("the report before")
            media.fill(disk, 24_000)
            for edge, argv, target in (
                ("report --html, a new file", ("report", run, "--html", "disk/report.html"), "disk/report.html"),
                ("report --html over an existing file", ("report", run, "--html", "disk/kept/report.html"),
                 "disk/kept/report.html"),
                ("compare --html", ("compare", f"{run}:scripted/tabular", f"{run}:scripted/blind", "--html",
                                    "disk/compare.html"), "disk/compare.html"),
                ("export --out", ("export", run, "--out", "disk/export"), "disk/export"),
                ("data build --out", ("data", "build", "--out", "disk/suite"), "disk/suite"),
                ("journal merge OUT", ("journal", "merge", "disk/merged.sqlite", "shard.sqlite"), "disk/merged.sqlite"),
            ):
                yield attempt(bench, Edge("3", f"full disk (tmpfs, 24 kB free): {edge}", argv, target,
                                          want=("disk is full",), scope="disk"))
    except media.Unavailable as exc:
        yield skipped("3", "outputs on a full disk", str(exc))


# --- item 4: journals where they are ---------------------------------------------------------------


def _copy_journal(bench: Bench, folder: str) -> str:
    (bench.root / folder).mkdir()
    shutil.copy(bench.root / ".shiftbench" / "journal.sqlite", bench.root / folder / "journal.sqlite")
    return folder


def _readers(run: str) -> list[tuple[str, ...]]:
    return [("runs",), ("show", run, "--limit", "1"), ("state", run, "--stream", "scripted/tabular", "--scenario",
                                                       "retail_l1"),
            ("report", run), ("compare", f"{run}:scripted/tabular", f"{run}:scripted/blind"), ("verify", run),
            ("export", run, "--out", "ro-export")]


def item4(bench: Bench) -> Iterator[Row]:
    yield from _read_only(bench)
    yield from _writable_copy(bench)
    yield from _damaged(bench)


def _read_only(bench: Bench) -> Iterator[Row]:
    run = bench.runs["quickstart"]
    share = _copy_journal(bench, "share")
    try:
        with media.read_only_view(bench.root / share) as view:
            journal = f"{view.name}/journal.sqlite"
            for argv in _readers(run):
                yield attempt(bench, Edge("4", f"read-only media: {argv[0]}", (*argv, "--journal", journal), share,
                                          expect=0))
            for edge, argv in (("run", ("run", "--scenarios", "retail_l1", "--methods", "blind", "--pilot", "1",
                                        "--display", "none")),
                               ("resume", ("resume", run, "--display", "none"))):
                yield attempt(bench, Edge("4", f"read-only media: {edge}", (*argv, "--journal", journal), share,
                                          want=("read-only", "not damaged"), quiet=True))
    except media.Unavailable as exc:
        yield skipped("4", "a journal on read-only media", str(exc))


def _writable_copy(bench: Bench) -> Iterator[Row]:
    """Reading a journal on ordinary media leaves no -wal or -shm beside it."""
    run = bench.runs["quickstart"]
    mine = _copy_journal(bench, "mine")
    for argv in (("report", run), ("show", run, "--limit", "1")):
        yield attempt(bench, Edge("4", f"a copied journal: {argv[0]} (no -wal/-shm left)",
                                  (*argv, "--journal", f"{mine}/journal.sqlite"), mine, expect=0))


def _damage(path: Path, how: str) -> None:
    """Damage a copy: its 100-byte header overwritten whole, or all but the magic 'SQLite format 3', or
    the copy cut at half its length (a copy interrupted midway)."""
    if how == "a copy cut at half":
        os.truncate(path, path.stat().st_size // 2)
        return
    at = 0 if how == "header" else 16
    with path.open("r+b") as handle:
        handle.seek(at)
        handle.write(b"\xff" * (100 - at))


def _damaged(bench: Bench) -> Iterator[Row]:
    run = bench.runs["quickstart"]
    for how, folder in (("header", "damaged-header"), ("header after its magic", "damaged-after-magic"),
                        ("a copy cut at half", "damaged-cut")):
        _copy_journal(bench, folder)
        _damage(bench.root / folder / "journal.sqlite", how)
        for argv in (("runs",), ("report", run), ("resume", run, "--display", "none")):
            damage = how if how.startswith("a copy") else f"{how} bytes overwritten"
            edge = f"damaged copy ({damage}): {argv[0]}"
            yield attempt(bench, Edge("4", edge, (*argv, "--journal", f"{folder}/journal.sqlite"), folder,
                                      want=("damaged", ".recover"), quiet=True))


# --- item 5: sweep files and rules checked whole ---------------------------------------------------

SWEEPS = {
    "methods-string.toml": ('`methods = "blind"` (top level)', 'methods = "blind"\n', ("list",)),
    "sweep-methods-string.toml": ('`methods = "blind"` in [sweep]', '[sweep]\nmethods = "blind"\n', ("list",)),
    "methods-mixed.toml": ('`methods = ["blind", 3]`', '[sweep]\nmethods = ["blind", 3]\n', ("strings",)),
    "budget-nan.toml": ("`budget = nan` in [sweep]", '[sweep]\nmethods = ["blind"]\nbudget = nan\n', ("nan",)),
    "sweep-typo.toml": ("unknown key in [sweep] (`pilott`)",
                        '[sweep]\nmethods = ["blind"]\nscenarios = ["retail_l1"]\npilott = 1\n', ("'pilot'",)),
    "top-typo.toml": ("unknown top-level key (`scenaros`)", 'methods = ["blind"]\nscenaros = ["retail_l1"]\n',
                      ("'scenarios'",)),
    "beside-sweep.toml": ("a top-level key beside [sweep] (`scenarios`)",
                          'scenarios = ["retail_l1"]\n[sweep]\nmethods = ["blind"]\n', ("scenarios",)),
    "method-typo.toml": ("unknown key in [methods.fast] (`frm`)",
                         '[sweep]\nmethods = ["fast"]\nscenarios = ["retail_l1"]\n[methods.fast]\nfrom = "tabular"\n'
                         'frm = 1\n', ("'from'",)),
    "unused-method-typo.toml": ("unknown key in an unused [methods.spare] (`optionz`)",
                                '[sweep]\nmethods = ["blind"]\nscenarios = ["retail_l1"]\n[methods.spare]\n'
                                'from = "tabular"\noptionz = 1\n', ("'options'",)),
    "option-typo.toml": ("unknown option in [methods.fast.options]",
                         '[sweep]\nmethods = ["fast"]\nscenarios = ["retail_l1"]\n[methods.fast]\nfrom = "tabular"\n'
                         '[methods.fast.options]\nlearning_rat = 0.1\n', ("learning_rat",)),
    "endpoint-typo.toml": ("unknown key in [endpoints.local] (`max_concurency`)",
                           'models = ["local"]\nscenarios = ["retail_l1"]\n[endpoints.local]\n'
                           'kind = "openai-compatible"\nmodel = "m"\nbase_url = "http://127.0.0.1:9/v1"\n'
                           'max_concurency = 4\n', ("'max_concurrency'",)),
    "endpoint-nan.toml": ("`max_concurrency = nan` in [endpoints.local]",
                           'models = ["local"]\nscenarios = ["retail_l1"]\n[endpoints.local]\n'
                           'kind = "openai-compatible"\nmodel = "m"\nbase_url = "http://127.0.0.1:9/v1"\n'
                           'max_concurrency = nan\n', ("endpoint-nan.toml", "nan")),
    "price-typo.toml": ("unknown key in [prices.scripted] (`inptu`)",
                        '[sweep]\nmethods = ["blind"]\nscenarios = ["retail_l1"]\n[prices.scripted]\ninptu = 0.0\n',
                        ("'input'",)),
}

RULE = '[[rule]]\nmetric = "avg_h"\nstream = "scripted/tabular"\n'
PILOT = '[pilot]\nbase = "scripted/blind"\ntreat = "scripted/tabular"\nmeasure = "turns"\nmin_pairs = 5\nbudget = 1.0\n'
RULES = {
    "rules-nan.toml": ("NaN in a gate rule (`min = nan`)", f"{RULE}min = nan\n", ("nan",)),
    "rules-inf.toml": ("an infinite gate rule (`max = inf`)", f"{RULE}max = inf\n", ("inf",)),
    "rules-pilot-nan.toml": ("NaN in a gate's [pilot] (`min_median_r = nan`)", f"{PILOT}min_median_r = nan\n",
                             ("nan",)),
    "rules-typo.toml": ("unknown key in a [[rule]] (`bse`)", f"{RULE}min = 1\nbse = \"scripted/blind\"\n",
                        ("'base'",)),
}


def item5(bench: Bench) -> Iterator[Row]:
    run = bench.runs["quickstart"]
    for name, (edge, text, want) in SWEEPS.items():
        yield attempt(bench, Edge("5", edge, ("run", "--config", write(bench, name, text), "--display", "none"),
                                  ".shiftbench/journal.sqlite", want=want, quiet=True))
    for name, (edge, text, want) in RULES.items():
        yield attempt(bench, Edge("5", edge, ("gate", run, "--rules", write(bench, name, text)), name, want=want))
    write(bench, "plan-nan.toml", PLAN.format(threshold="nan", extra=""))
    write(bench, "plan-key.toml", PLAN.format(threshold="10.0\nthreshhold = 3", extra=""))
    write(bench, "plan-typo.toml", PLAN.format(threshold="10.0", extra="budgett = 1.0\n"))
    for edge, argv, target, want in (
        ("lock a plan with `threshold = nan`", ("lock", "plan-nan.toml"), "plan-nan.toml", ("nan",)),
        ("run --plan with `threshold = nan`", ("run", "--plan", "plan-nan.toml", "--display", "none"),
         "plan-nan.toml", ("nan",)),
        ("lock a plan with an unknown key in [sweep] (`budgett`)", ("lock", "plan-typo.toml"), "plan-typo.toml",
         ("'budget'",)),
        ("lock a plan with an unknown key in [plan] (`threshhold`)", ("lock", "plan-key.toml"), "plan-key.toml",
         ("'threshold'",)),
        ("resume of an unknown run", ("resume", "r-no-such-run", "--display", "none"), ".shiftbench/journal.sqlite",
         ("runs",)),
        ("resume of a finished run", ("resume", run, "--display", "none"), ".shiftbench/journal.sqlite",
         ("complete",)),
    ):
        yield attempt(bench, Edge("5", edge, argv, target, want=want, quiet=True))


# --- item 7: provenance ----------------------------------------------------------------------------


def _head() -> str:
    done = subprocess.run(["git", "rev-parse", "--short=12", "HEAD"], capture_output=True, text=True, check=False,
                          cwd=Path(__file__).resolve().parent)
    return done.stdout.strip()


def item7(bench: Bench) -> Iterator[Row]:
    head = _head()
    yield attempt(bench, Edge("7", "--version from this checkout", ("--version",), expect=0,
                              want=(f"+g{head}",) if head else ()))


ITEMS: dict[str, Callable[[Bench], Iterator[Row]]] = {
    "item1": item1, "item2": item2, "item3": item3, "item4": item4, "item5": item5, "item7": item7}


# --- the table -------------------------------------------------------------------------------------


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def table(rows: Sequence[Row]) -> str:
    lines = ["| item | edge | command | exit | message | before | after | check |",
             "|---|---|---|---:|---|---|---|---|"]
    for row in rows:
        command = f"`{row.command}`" if row.command != "-" else "-"
        lines.append("| " + " | ".join(_cell(cell) for cell in (
            row.item, row.edge, command, row.code, row.message, row.before, row.after, row.check)) + " |")
    return "\n".join(lines)


def document(bench: Bench, rows: Sequence[Row], seconds: float, loads: tuple[str, str]) -> str:
    version = _first_line(bench.call(("--version",)).stdout)
    flagged = [row for row in rows if row.check not in ("ok", "skipped")]
    head = [
        "# Edge table (issue 21, items 1-5 and 7)", "",
        f"`python -m bench.edge_table` on {version}, {time.strftime('%Y-%m-%d %H:%M %Z')}: {len(rows)} rows, "
        f"{len(flagged)} flagged, {sum(row.check == 'skipped' for row in rows)} skipped; {seconds:.0f} s wall, "
        f"load average {loads[0]} before, {loads[1]} after.",
        "Every command ran in a fresh temporary folder (its working directory); paths in messages are shown "
        "relative to it. Messages are the first line of stderr, or of stdout with its size when stderr was empty; "
        f"lines over {MESSAGE_CHARS} characters are cut. `check` is `ok` when the exit code is the one issue 21 asks "
        "for, a refusal is one line on stderr and left the target as it was, and the message holds the words it "
        "must (the part the user needs: the valid names, the nearest key, what to try).", "",
        *[f"- {note}" for note in bench.notes], "", table(rows), ""]
    if flagged:
        head += ["## Flagged", "", *[f"- item {row.item}, {row.edge}: `{row.command}` -> exit {row.code}: "
                                      f"{row.check}" for row in flagged], ""]
    return "\n".join(head)


def _cli() -> tuple[str, ...]:
    script = Path(sys.executable).with_name("shiftbench")
    return (str(script),) if script.exists() else (sys.executable, "-m", "runner.cli")


def _selected(only: str | None) -> list[str]:
    if not only:
        return list(ITEMS)
    names = [name if name.startswith("item") else f"item{name}" for name in only.split(",") if name]
    unknown = [name for name in names if name not in ITEMS]
    if unknown:
        raise SystemExit(f"edge_table: --only {','.join(unknown)}: no such item; known: {', '.join(ITEMS)}")
    return names


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.edge_table", description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, help="also write the Markdown here")
    parser.add_argument("--only", help="comma-separated items, e.g. item1,item3 (default: all)")
    parser.add_argument("--pilot", type=int, default=3, help="the runs' --pilot N (default 3)")
    parser.add_argument("--in", dest="parent", type=Path, help="make the temporary folder here")
    parser.add_argument("--keep", action="store_true", help="keep the temporary folder and say where")
    args = parser.parse_args(argv)
    names = _selected(args.only)
    loads, started = load_average(), time.perf_counter()
    root = Path(tempfile.mkdtemp(prefix="edge-table-", dir=args.parent))
    bench = Bench(root, _cli(), args.pilot)
    try:
        rows = [setup_run(bench, "0", "quickstart", "--methods", "blind,tabular")]
        for name in names:
            rows += list(ITEMS[name](bench))
        text = document(bench, rows, time.perf_counter() - started, (_load(loads), _load(load_average())))
    finally:
        _clean_up(root, keep=args.keep)
    print(text)
    if args.out:
        args.out.write_text(text)
    return 0


def _load(loads: list[float] | None) -> str:
    return " ".join(f"{value:.2f}" for value in loads) if loads else "unknown"


def mounts_under(root: Path) -> list[str]:
    """Mount points at or under `root` (every helper unmounts; this is the proof before removing)."""
    points = [line.split()[4] for line in Path("/proc/self/mountinfo").read_text().splitlines()]
    return [point for point in points if point == str(root) or point.startswith(f"{root}/")]


def _clean_up(root: Path, *, keep: bool) -> None:
    left = mounts_under(root)
    if keep or left:  # never remove through a mount that is still there
        print(f"edge_table: kept {root}" + (f" (still mounted: {', '.join(left)})" if left else ""), file=sys.stderr)
    else:
        shutil.rmtree(root)


if __name__ == "__main__":
    sys.exit(main())
