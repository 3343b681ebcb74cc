"""An accepted method change is kept: a second resume compares against the accepted source (it runs with
it, and refuses a further edit), the record of the change survives it whole, and every report format
names it (text, Markdown, JSON, CSV, HTML), through real processes killed mid-run and a real journal."""

from __future__ import annotations

import csv
import io
import shutil
import subprocess
import time
from pathlib import Path

import orjson
import pytest

from runner.cli import main
from tests.methods.test_method_specs import NOTES_FILE
from tests.runner.test_kill_resume import committed, kill_after, only_run, shiftbench
from tests.runner.test_own_methods import dump, sweep


def resume(journal: Path, run_id: str, *more: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(shiftbench("resume", run_id, "--journal", str(journal), "--display", "none", *more),
                          capture_output=True, text=True)


def changes_of(journal: Path, run_id: str) -> list[dict[str, str]]:
    import sqlite3
    with sqlite3.connect(journal) as db:
        row = db.execute("SELECT value FROM meta WHERE key = ?", (f"run:{run_id}:methods:accepted",)).fetchone()
    return [] if row is None else list(orjson.loads(row[0]))


@pytest.mark.heavy  # three killed or refused processes and a finished sweep: 74 s at load 15
def test_an_accepted_method_change_survives_a_second_resume_and_shows_in_every_report_format(
        built_suite: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    own = tmp_path / "notes.py"
    shutil.copy(NOTES_FILE, own)
    original = own.read_text()
    journal = tmp_path / "j.sqlite"
    assert kill_after(shiftbench("run", *sweep(built_suite, journal, f"tuned={own}:NOTES")), journal, 6)
    run_id = only_run(journal)[0]
    edited = original.replace('"keep", int, 8', '"keep", int, 9')
    assert edited != original
    own.write_text(edited)
    accepting = shiftbench("resume", run_id, "--journal", str(journal), "--display", "none", "--accept-method-change")
    assert kill_after(accepting, journal, committed(journal) + 6)  # killed again, mid-run, after the accept
    (change,) = changes_of(journal, run_id)
    assert change["method"] == "tuned" and change["before"] != change["after"]

    # The second resume compares against the accepted source: a further edit is refused, nothing written ...
    own.write_text(edited.replace('"keep", int, 9', '"keep", int, 10'))
    before = dump(journal)
    refused = resume(journal, run_id)
    assert refused.returncode == 2 and f"source {change['after'][:12]} -> " in refused.stderr
    assert dump(journal) == before
    # ... and the accepted source runs on without the flag, the record kept as it was.
    own.write_text(edited)
    time.sleep(0.01)
    finished = resume(journal, run_id)
    assert finished.returncode == 0, finished.stderr
    assert changes_of(journal, run_id) == [change] and only_run(journal)[1] == "completed"

    formats: dict[str, str] = {}
    for name, flags in (("text", []), ("md", ["--md"]), ("json", ["--json"]), ("csv", ["--csv"])):
        assert main(["report", run_id, "--journal", str(journal), *flags]) == 0
        formats[name] = capsys.readouterr().out
    html = tmp_path / "report.html"
    assert main(["report", run_id, "--journal", str(journal), "--html", str(html)]) == 0
    formats["html"] = html.read_text()
    said = f"{change['before'][:12]} -&gt; {change['after'][:12]}"
    for name in ("text", "md"):
        assert f"method tuned: source changed, resumed with it at {change['accepted_at']}" in formats[name], name
        assert said.replace("-&gt;", "->") in formats[name], name
    assert said in formats["html"] or said.replace("-&gt;", "->") in formats["html"]
    assert orjson.loads(formats["json"])["provenance"]["method_changes"] == [change]
    (row,) = csv.DictReader(io.StringIO(formats["csv"]))
    assert row["method_source_changes"] == "1" and row["method_source_sha256"] == change["after"]
