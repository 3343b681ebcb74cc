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

The machinery (edges, rows, what is on disk, the judge) is `bench.edge_rows`; the items' edges are
`edge_reading` (1, 2), `edge_media` (3, 4) and `edge_inputs` (5, 7); this module runs them and prints the table.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

from bench.edge_inputs import item5, item7
from bench.edge_media import item3, item4
from bench.edge_reading import item1, item2
from bench.edge_rows import MESSAGE_CHARS, Bench, Edge, Row, first_line, setup_run
from bench.machine import load_average

__all__ = ["ITEMS", "Edge", "Row", "main"]

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
    version = first_line(bench.call(("--version",)).stdout)
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
