"""The reading table of issue 30: every item of "Reading a run at any size" tried through the real CLI.

In a fresh temporary folder (its working directory, an empty journal, the built-in suite built on first
use) it makes the runs the README makes: the Quickstart's `shiftbench run` (blind and oracle) at 80
columns and the walkthrough's learning run (`--methods blind,tabular`) at 200, then tries each item 1-10
of issue 30 in a subprocess, and prints one Markdown row per try: the command, its exit code, the lines it
printed (stdout + stderr) and the widest, what it said (a refusal's line, or a success's last line: its
hint), the journal before and after, and a check (`ok`, or what is not as the issue asks).

    python -m bench.reading_table [--out FILE.md] [--only 1,4] [--pilot 3 | --pilot 0] [--keep]

`--pilot 0` runs the Quickstart's sweep whole, as the README does (about a minute more); the default
`--pilot 3` keeps the table to a few minutes. Machinery: `bench.reading_table_rows` (on `bench.edge_rows`);
items: `reading_table_items` (1-5) and `reading_table_more` (6-10).
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

from bench.edge_rows import Bench, first_line
from bench.machine import load_average
from bench.reading_table_items import item1, item2, item3, item4, item5, make_run
from bench.reading_table_more import item6, item7, item8, item9, item10
from bench.reading_table_rows import Row, table

__all__ = ["ITEMS", "main", "run_table"]

ITEMS: dict[str, Callable[[Bench], Iterator[Row]]] = {
    "1": item1, "2": item2, "3": item3, "4": item4, "5": item5, "6": item6, "7": item7, "8": item8, "9": item9,
    "10": item10}


def run_table(root: Path, pilot: int, names: Sequence[str]) -> tuple[Bench, list[Row]]:
    bench = Bench(root, _cli(), pilot)
    rows = [make_run(bench, "2", "quickstart", columns=80)[0],
            make_run(bench, "2", "learning", "--methods", "blind,tabular", columns=200)[0]]
    for name in names:
        rows += list(ITEMS[name](bench))
    return bench, rows


def document(bench: Bench, rows: Sequence[Row], seconds: float, loads: tuple[str, str]) -> str:
    version = first_line(bench.call(("--version",)).stdout)
    flagged = [row for row in rows if row.check not in ("ok", "skipped")]
    pilot = f"--pilot {bench.pilot}" if bench.pilot else "the whole sweep"
    return "\n".join([
        "# Reading table (issue 30, items 1-10)", "",
        f"`python -m bench.reading_table` on {version}, {time.strftime('%Y-%m-%d %H:%M %Z')} (runs: {pilot}): "
        f"{len(rows)} rows, {len(flagged)} flagged, {sum(row.check == 'skipped' for row in rows)} skipped; "
        f"{seconds:.0f} s wall, load average {loads[0]} before, {loads[1]} after.",
        "Every command ran in a fresh temporary folder (paths shown relative to it). `lines` counts stdout + "
        "stderr lines, `widest` stdout's widest line; `said` is a refusal's stderr line or a success's last line. "
        "`check` is `ok` when the exit code, the words and the widths are what issue 30 asks for and a refusal "
        "left the journal as it was.", "",
        *[f"- {note}" for note in bench.notes], "", table(rows), "",
        *(["## Flagged", "", *[f"- item {row.item}, {row.what}: `{row.command}` -> {row.check}" for row in flagged],
           ""] if flagged else [])])


def _cli() -> tuple[str, ...]:
    script = Path(sys.executable).with_name("shiftbench")
    return (str(script),) if script.exists() else (sys.executable, "-m", "runner.cli")


def _selected(only: str | None) -> list[str]:
    names = [name.removeprefix("item") for name in (only or ",".join(ITEMS)).split(",") if name]
    unknown = [name for name in names if name not in ITEMS]
    if unknown:
        raise SystemExit(f"reading_table: --only {','.join(unknown)}: no such item; known: {', '.join(ITEMS)}")
    return names


def _load(loads: list[float] | None) -> str:
    return " ".join(f"{value:.2f}" for value in loads) if loads else "unknown"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.reading_table", description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, help="also write the Markdown here")
    parser.add_argument("--only", help="comma-separated items, e.g. 1,4 (default: all of 1-10)")
    parser.add_argument("--pilot", type=int, default=3, help="the runs' --pilot N (default 3; 0: whole sweeps)")
    parser.add_argument("--in", dest="parent", type=Path, help="make the temporary folder here")
    parser.add_argument("--keep", action="store_true", help="keep the temporary folder and say where")
    args = parser.parse_args(argv)
    names = _selected(args.only)
    loads, started = load_average(), time.perf_counter()
    root = Path(tempfile.mkdtemp(prefix="reading-table-", dir=args.parent))
    try:
        bench, rows = run_table(root, args.pilot, names)
        text = document(bench, rows, time.perf_counter() - started, (_load(loads), _load(load_average())))
    finally:
        if args.keep:
            print(f"reading_table: kept {root}", file=sys.stderr)
        else:
            shutil.rmtree(root)
    print(text)
    if args.out:
        args.out.write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
