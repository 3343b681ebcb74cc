"""`show` is bounded: a long tool observation is folded, a document is printed once per output, the
closing hint names only the flags not given, and a negative --limit is refused.

The fold is checked against the journaled records (an independent count of the lines it left out);
the command runs on a real offline retail sweep, whose every episode reads the same policy document.
"""

from __future__ import annotations

import io
import re
import sqlite3
from pathlib import Path
from typing import Any

import orjson
import pytest

from runner.cli import main
from runner.views.episode_layout import EPISODE_LINES
from runner.views.folding import Folded, fold
from runner.views.show import more_hint, print_transcripts
from runner.views.transcript import Transcript
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


def test_a_text_wraps_at_the_panels_width_and_its_fold_says_what_it_left_out() -> None:
    document = "\n".join(f"line {n}" for n in range(40))
    folded = fold(document, 76, 63, 8)
    assert folded.lines == tuple(f"line {n}" for n in range(7))
    assert folded.note == "[33 more lines folded: --full shows them]"
    assert fold(document, 76, 63, None) == Folded(tuple(document.split("\n")))
    one_line = "y" * 500  # one JSON object: folded by characters, the label's line shorter
    head = fold(one_line, 76, 63, 3)
    assert head.lines == ("y" * 63, "y" * 76)
    assert head.note == f"[{500 - 63 - 76} more characters folded: --full shows them]"
    # Cut inside a line: that line's rest counts as one more line, beside the two lines after it.
    cut = fold("a" * 200 + "\nb\nc", 80, 80, 2)
    assert cut.lines == ("a" * 80,)
    assert cut.note == "[3 more lines folded: --full shows them]"
    words = fold("alpha beta gamma delta", 11, 11, None)
    assert words.lines == ("alpha beta", "gamma delta")  # between words, the space dropped
    assert all(len(line) <= 76 for line in fold(document + one_line, 76, 63, None).lines)


def test_the_hint_names_only_flags_not_given() -> None:
    assert more_hint(5, []) == ("... 5 more episodes match; narrow with --stream, --scenario, --window, --phase or "
                                "--failed, or print more with --limit N or --all")
    given = ["--stream", "--scenario", "--failed", "--limit"]
    assert more_hint(5, given) == "... 5 more episodes match; narrow with --window or --phase, or print more with --all"
    assert more_hint(1, ["--stream", "--scenario", "--window", "--phase", "--failed"]) == (
        "... 1 more episodes match; print more with --limit N or --all")


def panels(out: str) -> list[list[str]]:
    """Each episode's panel of `show`'s output: its lines, top border to bottom border."""
    found: list[list[str]] = []
    for line in out.splitlines():
        if line.startswith("╭"):
            found.append([])
        if found and (len(found[-1]) == 0 or not found[-1][-1].startswith("╰")):
            found[-1].append(line)
    return found


def inside(lines: list[str]) -> str:
    """A panel's text without its borders and without whitespace: a text wrapped between words or inside
    one (a JSON object) reads as it was before it wrapped."""
    return "".join("".join(line.strip("│╭╮╰╯─ ") for line in lines).split())


def bare(text: str) -> str:
    return "".join(text.split())


def failed_records(journal: Path, limit: int) -> list[dict[str, Any]]:
    """The first `limit` failed episodes' records, as `show --failed` orders them (test-only SQL)."""
    with sqlite3.connect(journal) as db:
        rows = db.execute("SELECT e.record FROM episodes e JOIN units u USING (run_id, unit_id) "
                          "WHERE e.reward < 1 ORDER BY u.rowid LIMIT ?", (limit,)).fetchall()
    return [orjson.loads(record) for (record,) in rows]


def test_three_failed_episodes_take_a_screen_each_and_full_prints_what_was_folded(
        retail: tuple[Path, str], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    journal, run_id = retail
    monkeypatch.setenv("COLUMNS", "80")
    args = ["show", run_id, "--failed", "--limit", "3", "--journal", str(journal)]
    assert main(args) == 0
    out = capsys.readouterr().out
    folded = panels(out)
    assert len(folded) == 3 and all(len(panel) <= EPISODE_LINES for panel in folded)
    notes = [line for panel in folded for line in panel if "folded" in line or "[the same" in line]
    assert notes and all("--full" in " ".join(panel) for panel in folded)  # every fold says how to see it
    document = policy_document(journal)
    assert sum(document.split("\n")[0] in line for panel in folded for line in panel) == 1  # printed once
    assert inside(folded[1]).count(bare("[the same 149-line observation as turn 1 of scripted/blind task ")) == 1
    hint = " ".join(out.strip().split("╯")[-1].split())  # the closing line, as wrapped at 80 columns
    assert hint.endswith("narrow with --stream, --scenario, --window or --phase, or print more with --all")
    assert main([*args, "--full"]) == 0
    whole = [inside(panel) for panel in panels(capsys.readouterr().out)]
    assert bare(document) in whole[0]
    for text, record in zip(whole, failed_records(journal, 3), strict=True):
        for step in record["steps"]:  # every observation whole, once in the output (a repeat names it)
            observation = bare(str(step["observation"]))
            assert observation in text or (observation in "".join(whole) and "[thesame" in text)
        assert bare(record["task"]["instruction"]) in text
    assert "folded:--fullshowsthem" not in "".join(whole)


def long_episode(turns: int) -> Transcript:
    """An episode of `turns` turns, each reading one of three long lists, as a live model's might run."""
    from runner.journal import EpisodeDetail

    steps = [{"reasoning": f"step {n}: looking again", "reply": "", "action_name": "get_items",
              "action_arguments": f'{{"page": {n % 3}}}', "observation": f"page {n % 3}\n" + "item\n" * 30}
             for n in range(turns)]
    record = {"task": {"task_id": "t1", "scenario": "retail_l1", "domain": "retail", "tier": "l1", "timestamp": 1,
                       "instruction": "Refund the order.\n" + "Context line.\n" * 40},
              "position": 1, "steps": steps, "reward": 0.0, "finish_arguments": None, "end_reason": "turn_limit"}
    row = EpisodeDetail("m|x|retail_l1|test|t1", "s", "m", "x", "retail_l1", "test", 0, "t1", "hidden", 0.0, "",
                        b'{"answer": false}', turns, turns, 0, 0, 0, 0.0, 0.0, "turn_limit", orjson.dumps(record), 0.0)
    return Transcript.of("r1", row)


def test_a_long_episode_folds_its_middle_turns_into_one_line_and_full_prints_every_one() -> None:
    from rich.console import Console

    def shown(full: bool) -> list[str]:
        console = Console(width=80, file=io.StringIO(), color_system=None)
        print_transcripts([long_episode(30)], 0, console, full=full)
        return console.file.getvalue().splitlines()  # type: ignore[attr-defined]

    short = shown(False)
    assert len(short) <= EPISODE_LINES
    folded = [line for line in short if re.search(r"\[turns \d+-\d+ folded \(\d+ tool calls\): --full shows them]",
                                                  line)]
    assert len(folded) == 1  # the middle turns, one line
    full = shown(True)
    turn_lines = next(i for i, line in enumerate(full) if "turn 11 ─" in line) - next(
        i for i, line in enumerate(full) if "turn 10 ─" in line)
    assert len(short) > EPISODE_LINES - turn_lines  # as many turns kept as fit: one more would not
    assert any("turn 30 " in line for line in short) and any("turn 1 " in line for line in short)
    assert re.search(r"\[\d+ more lines folded: --full shows them]", "\n".join(short[:12]))  # the long task
    assert any("[the same 32-line observation as turn 1 above;" in line for line in short)  # this episode's
    assert all(any(f"turn {n} ─" in line for line in full) for n in range(1, 31))
    assert sum("[the same 32-line observation as turn " in line for line in full) == 27  # 3 pages, 27 repeats
    assert "folded" not in "\n".join(full) and sum("Context line." in line for line in full) == 40


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
