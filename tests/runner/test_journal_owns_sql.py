"""The journal owns its SQL: no SQL statement in any source or benchmark module outside runner/journal/.

A new read or write goes into the journal package as a named query or a typed writer (its __init__
says how), so the schema has one owner and every statement one place to change.
"""

from __future__ import annotations

import io
import re
import tokenize
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SCANNED = ("runner", "methods", "simulators", "bench")
OWNER = ROOT / "runner" / "journal"
# Upper-case statement keywords anywhere in a string or comment, and the lower-case statement shapes.
KEYWORDS = re.compile(r"\b(SELECT|INSERT|UPDATE|DELETE|CREATE)\b")
SHAPES = re.compile(r"(?i)\binsert\s+(or\s+\w+\s+)?into\b|\bdelete\s+from\b|\bupdate\s+\w+\s+set\b"
                    r"|\bcreate\s+(table|index|view|trigger)\b"
                    r"|\bselect\s+(\*|distinct\b|(count|sum|max|min)\s*\(|[\w.]+(\s*,\s*[\w.]+)+\s+from\b)")


def sql_in(source: str) -> list[str]:
    """Strings and comments of a module that look like SQL statements."""
    found = []
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.type in (tokenize.STRING, tokenize.COMMENT) and (
                KEYWORDS.search(token.string) or SHAPES.search(token.string)):
            found.append(f"line {token.start[0]}: {token.string[:70]!r}")
    return found


def test_no_sql_outside_the_journal_package() -> None:
    offenders = {}
    for top in SCANNED:
        for path in sorted((ROOT / top).rglob("*.py")):
            if OWNER in path.parents:
                continue
            found = sql_in(path.read_text(encoding="utf-8"))
            if found:
                offenders[str(path.relative_to(ROOT))] = found
    assert offenders == {}, "SQL outside runner/journal/ (add a named query or a typed writer there):\n" + \
        "\n".join(f"{path}: {hits}" for path, hits in offenders.items())


def test_the_check_sees_sql_in_strings_and_comments_but_not_prose() -> None:
    assert sql_in('q = "SELECT a FROM t"\n')
    assert sql_in("q = f'insert into t values ({x})'\n")
    assert sql_in("# DELETE FROM t when done\n")
    assert sql_in('q = "update runs set status = 1"\n')
    assert sql_in('q = "select run_id, status from runs"\n')
    assert not sql_in('"""Select the model from the config; update the progress."""\nx.update(y)\n')
