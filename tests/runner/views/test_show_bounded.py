"""`show` is bounded: a long tool observation is folded, a document is printed once per output, the
closing hint names only the flags not given, and a negative --limit is refused.

The fold is checked against the journaled records (an independent count of the lines it left out);
the command runs on a real offline retail sweep, whose every episode reads the same policy document.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

import orjson
import pytest

from runner.cli import main
from runner.views.folding import FOLD_AFTER, KEPT_LINES, LINE_CHARS, Observations
from runner.views.show import more_hint
from tests.support import cli_sweep


@pytest.fixture(scope="module")
def retail(built_suite: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    return cli_sweep(built_suite, tmp_path_factory.mktemp("retail"), ("retail_l1",), ("blind",))


def policy_document(journal: Path) -> str:
    """The observation of the first read_docs call in the journal: the store's policy document."""
    with sqlite3.connect(journal) as db:
        for (record,) in db.execute("SELECT record FROM episodes ORDER BY rowid"):
            for step in orjson.loads(record)["steps"]:
                if step["action_name"] == "read_docs":
                    return str(step["observation"])
    raise AssertionError("no episode read the documents")


def test_a_long_observation_folds_to_its_first_lines_and_counts_the_rest() -> None:
    document = "\n".join(f"line {n}" for n in range(40))
    folded = Observations().text(document, "turn 1 of a/b task t")
    assert folded.split("\n") == [f"line {n}" for n in range(KEPT_LINES)] + [f"({40 - KEPT_LINES} more lines; --full)"]
    assert Observations(full=True).text(document, "turn 1") == document
    short = "\n".join(["x"] * FOLD_AFTER)
    assert Observations().text(short, "turn 1") == short
    one_line = "y" * (LINE_CHARS * FOLD_AFTER + 5)  # one JSON object, wider than the fold as a terminal shows it
    head, tail = Observations().text(one_line, "turn 1").split("\n")
    assert head == "y" * (LINE_CHARS * KEPT_LINES)
    assert tail == f"({len(one_line) - len(head):,} more characters; --full)"


def test_a_document_is_printed_once_and_a_short_repeat_every_time() -> None:
    seen = Observations(full=True)
    document = "\n".join(f"rule {n}" for n in range(30))
    assert seen.text(document, "turn 1 of a/b task t1") == document
    assert seen.text(document, "turn 1 of a/b task t2") == "(the same 30-line document as turn 1 of a/b task t1 above)"
    short = '{"accepted": true}'
    assert seen.text(short, "turn 2") == seen.text(short, "turn 3") == short


def test_the_hint_names_only_flags_not_given() -> None:
    assert more_hint(5, []) == ("... 5 more episodes match; narrow with --stream, --scenario, --window, --phase or "
                                "--failed, or print more with --limit N or --all")
    given = ["--stream", "--scenario", "--failed", "--limit"]
    assert more_hint(5, given) == "... 5 more episodes match; narrow with --window or --phase, or print more with --all"
    assert more_hint(1, ["--stream", "--scenario", "--window", "--phase", "--failed"]) == (
        "... 1 more episodes match; print more with --limit N or --all")


def test_show_prints_the_policy_document_once_folded_and_the_readme_hint(
        retail: tuple[Path, str], capsys: pytest.CaptureFixture[str]) -> None:
    journal, run_id = retail
    document = policy_document(journal).split("\n")
    assert len(document) > FOLD_AFTER
    assert main(["show", run_id, "--stream", "scripted/blind", "--scenario", "retail_l1", "--limit", "3",
                 "--journal", str(journal)]) == 0
    out = capsys.readouterr().out
    assert out.count(document[0]) == 1 and document[-2].strip() not in out
    shown, room = 0, KEPT_LINES  # the leading lines that fit in KEPT_LINES terminal lines of LINE_CHARS
    while (need := max(1, (len(document[shown]) + LINE_CHARS - 1) // LINE_CHARS)) <= room:
        room -= need
        shown += 1
    assert f"({len(document) - shown} more lines; --full)" in out
    assert out.count(f"(the same {len(document)}-line document as turn 1 of scripted/blind task ") == 2
    hint = " ".join(out.strip().split("╯")[-1].split())  # the closing line, as wrapped at 80 columns
    assert hint.endswith("narrow with --window, --phase or --failed, or print more with --all")

    assert main(["show", run_id, "--limit", "2", "--full", "--journal", str(journal)]) == 0
    full = capsys.readouterr().out
    assert full.count(document[0]) == 1 and "more lines; --full" not in full
    assert full.count("(the same ") == 1


@pytest.mark.parametrize("limit", ["-1", "-20", "two"])
def test_a_negative_or_unreadable_limit_is_refused(retail: tuple[Path, str], limit: str,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    journal, run_id = retail
    assert main(["show", run_id, "--limit", limit, "--journal", str(journal)]) == 2
    captured = capsys.readouterr()
    (line,) = captured.err.strip().splitlines()
    assert captured.out == ""
    assert f"argument --limit: expected a whole number, 0 or more (0: all), got '{limit}'" in line


def test_state_prints_at_most_the_limit_of_lines_and_says_how_many_it_left_out() -> None:
    from runner.journal import StreamOfRun
    from runner.views.states import MethodState, state_text

    cases = {"cases": [{"position": n, "score": 0} for n in range(100)]}  # no describe: its JSON, ~600 lines
    state = MethodState(stream=StreamOfRun("s", "scripted", "rag", "retail_l1"), as_of="latest", state=cases,
                        window=None)
    whole = state_text(state).split("\n")
    cut = state_text(state, limit=60).split("\n")
    assert cut[:61] == whole[:61] and len(cut) == 62
    assert cut[-1] == (f"... {len(whole) - 61} more lines of this state; --limit N prints the first N lines, "
                       "--all every one")
    assert state_text(state, limit=10, limit_given=True).split("\n")[-1].endswith("; --all prints them")
    assert state_text(state, limit=None) == "\n".join(whole)


@pytest.fixture(scope="module")
def two_streams(built_suite: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """24 episodes: more than the default bound of 20."""
    return cli_sweep(built_suite, tmp_path_factory.mktemp("two"), ("retail_l1",), ("blind", "oracle"))


@pytest.mark.parametrize("limit", ["20", "3"])
def test_an_explicit_limit_counts_as_given_even_at_the_default(two_streams: tuple[Path, str], limit: str,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    # `--limit 20` is the default's value, but the user typed it: the hint offers only --all, as for --limit 3.
    journal, run_id = two_streams
    assert main(["show", run_id, "--limit", limit, "--journal", str(journal)]) == 0
    hint = " ".join(capsys.readouterr().out.strip().split("╯")[-1].split())
    assert hint.endswith("or print more with --all"), hint
    assert main(["show", run_id, "--journal", str(journal)]) == 0  # not given: both offered
    hint = " ".join(capsys.readouterr().out.strip().split("╯")[-1].split())
    assert hint.endswith("or print more with --limit N or --all"), hint
