"""The edge table's items 3 and 4 (issue 21): every output written safely (a folder, a device, a FIFO, a
socket, a missing folder, regular files, a full disk), and journals where they are (read-only media, a
writable copy, damaged files).
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from bench import media
from bench.edge_rows import PLAN, Bench, Edge, Row, attempt, first_line, skipped, write

__all__ = ["item3", "item4"]


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
        raise SystemExit(f"edge_table: the shard run failed: {first_line(done.stderr)}")


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
