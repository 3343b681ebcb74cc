"""One episode of `show` as lines to print, held to about a screen unless `--full`.

An episode is blocks: a label and its text wrapped to the panel (`runner.views.folding`), or a rule
(`turn 3`, `outcome`). By default it gets `EPISODE_LINES` lines, borders included. It is laid out with
the most generous caps per text first (`LEVELS`); while it is taller than its lines it is laid out again
with tighter ones, and when even the tightest leave it too tall (a model that took 30 turns), the turns
from the middle are folded into one line, the first and the last ones kept, since those say how the
agent set out and where it went wrong. Every fold says what it left out and that `--full` shows it.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass

from runner.views.folding import Folded, Seen, fold
from runner.views.transcript import Transcript
from simulators.record import Step

__all__ = ["EPISODE_LINES", "Block", "Caps", "lay_out_episode"]

EPISODE_LINES = 50
"""The lines one episode's panel takes by default, its borders included: about one screen."""
BORDERS = 2
OBSERVATION_LABEL = len("observation: ")


@dataclass(frozen=True)
class Caps:
    """The most printed lines of each text of an episode, its fold note included."""

    task: int | None
    thought: int | None
    replied: int | None
    call: int | None
    observation: int | None
    finish: int | None
    details: int | None


LEVELS = (Caps(task=16, thought=4, replied=8, call=4, observation=8, finish=6, details=10),
          Caps(task=12, thought=3, replied=6, call=3, observation=4, finish=4, details=8),
          Caps(task=8, thought=2, replied=4, call=2, observation=3, finish=3, details=6),
          Caps(task=6, thought=2, replied=3, call=2, observation=2, finish=3, details=4))
"""From the most generous to the tightest: the first that fits the episode in its lines is used."""
WHOLE = Caps(None, None, None, None, None, None, None)
"""`--full`: every text whole."""


@dataclass(frozen=True)
class Block:
    label: str
    """`observation`, `call`, ...; a rule's title when `rule`; "" for a line of its own (a note)."""
    lines: tuple[str, ...] = ()
    style: str = ""
    rule: bool = False

    @property
    def height(self) -> int:
        return max(1, len(self.lines))


def lay_out_episode(t: Transcript, width: int, seen: Seen, full: bool) -> list[Block]:
    """The episode's blocks at a panel `width` columns inside; `seen` (the output's memory of what it
    printed) learns the observations these blocks print."""
    turns = range(len(t.record.steps))
    if full:
        return _blocks(t, width, seen, WHOLE, turns)
    for caps in LEVELS:
        trial = seen.copy()  # what this layout would print, kept only if it is the one printed
        blocks = _blocks(t, width, trial, caps, turns)
        if _height(blocks) <= EPISODE_LINES:
            seen.adopt(trial)
            return blocks
    return _fold_turns(t, width, seen, LEVELS[-1])


def _fold_turns(t: Transcript, width: int, seen: Seen, caps: Caps) -> list[Block]:
    """Only as many of the first and last turns as fit; one line for the ones between. The last turn is
    kept even when the episode is still too tall with it alone (a huge task or grade, already folded).
    Keeping one more turn never makes an episode shorter, so the most that fit are found by bisection
    (an episode of 100 turns is laid out 7 times, not 100)."""
    count = len(t.record.steps)
    if count < 2:
        return _blocks(t, width, seen, caps, range(count))  # no turn or one: nothing to fold

    def tried(kept: int) -> tuple[list[Block], Seen]:
        trial = seen.copy()
        return _blocks(t, width, trial, caps, _ends(count, kept)), trial

    low, high = 1, count - 1  # `low` is kept whatever happens; find the most that fit
    while low < high:
        middle = (low + high + 1) // 2
        if _height(tried(middle)[0]) <= EPISODE_LINES:
            low = middle
        else:
            high = middle - 1
    blocks, trial = tried(low)
    seen.adopt(trial)
    return blocks


def _ends(count: int, kept: int) -> list[int]:
    """`kept` (1 or more) of `count` turns: a third of them from the start (one once two are kept), the
    rest from the end, where an episode goes wrong."""
    head = max(kept // 3, 1 if kept > 1 else 0)
    return [*range(head), *range(count - (kept - head), count)]


def _height(blocks: Sequence[Block]) -> int:
    return BORDERS + sum(block.height for block in blocks)


def _blocks(t: Transcript, width: int, seen: Seen, caps: Caps, turns: Sequence[int]) -> list[Block]:
    e = t.row
    # The unit id names the stream, scenario, phase and task (and --unit takes it); the title has the rest.
    blocks = [_line(f"unit {e.unit_id}", width, "bold"),
              *_text("task", t.record.task.instruction, width, caps.task)]
    previous = -1
    for number in turns:
        if number > previous + 1:
            blocks.append(_folded_turns(t.record.steps[previous + 1:number], previous + 1, width))
        where = f"turn {number + 1} of {t.stream} task {e.task_id}"
        blocks += _turn(number + 1, t.record.steps[number], width, seen, caps, where)
        previous = number
    if previous + 1 < len(t.record.steps):
        blocks.append(_folded_turns(t.record.steps[previous + 1:], previous + 1, width))
    return blocks + _outcome(t, width, caps)


def _folded_turns(steps: Sequence[Step], first: int, width: int) -> Block:
    calls = sum(step.action_name is not None for step in steps)
    span = f"turn {first + 1}" if len(steps) == 1 else f"turns {first + 1}-{first + len(steps)}"
    return _line(f"[{span} folded ({calls} tool call{'' if calls == 1 else 's'}): --full shows them]", width, "dim")


def _turn(number: int, step: Step, width: int, seen: Seen, caps: Caps, where: str) -> list[Block]:
    blocks = [Block(f"turn {number}", rule=True)]
    if step.reasoning:
        blocks += _text("thought", step.reasoning, width, caps.thought, "italic")
    if step.reply:
        blocks += _text("replied", step.reply, width, caps.replied)
    action = f"NONE [{step.note}]" if step.action_name is None else f"{step.action_name}({step.action_arguments})"
    blocks += _text("call", action, width, caps.call, "cyan")
    first = seen.where(step.observation)
    if first is not None:
        first = first.removesuffix(where[where.index(" of "):])  # "turn 2" in the same episode
        said = "" if caps is WHOLE else "; --full prints it there"
        return blocks + _text("observation", f"[the same {_size(step.observation)} observation as {first} above"
                                             f"{said}]", width, None, "dim")
    seen.remember(step.observation, where, len(fold(step.observation, width, width - OBSERVATION_LABEL, None).lines))
    return blocks + _text("observation", step.observation, width, caps.observation)


def _outcome(t: Transcript, width: int, caps: Caps) -> list[Block]:
    e = t.row
    blocks = [Block("outcome", rule=True)]
    finish = t.record.finish_arguments
    steps = t.record.steps
    if finish is not None and steps and steps[-1].action_name == "finish" and _arguments(steps[-1]) == finish:
        blocks += _text("finish", f"[the arguments of turn {len(steps)}'s call above]", width, None, "dim")
    elif finish is not None:
        blocks += _text("finish", _compact(finish), width, caps.finish)
    blocks += _text("ended", f"{e.end_reason}  grade: {t.score_line} by {e.judge or 'the grader'}", width, None)
    if t.grade_details:
        blocks += _text("", _compact(t.grade_details), width, caps.details)
    tally = (f"{e.turns} turns, {e.tool_calls} tool calls, {e.input_tokens} in ({e.cached_input_tokens} cached) / "
             f"{e.output_tokens} out tokens, ${e.cost_usd:.4f}, {e.latency_s:.1f} s")
    return blocks + _text("", tally, width, None, "dim")


def _text(label: str, text: str, width: int, cap: int | None, style: str = "") -> list[Block]:
    """A labelled text folded to `cap` lines, the fold's note the last of them."""
    folded: Folded = fold(text, width, width - len(label) - 2 if label else width, cap)
    blocks = [Block(label, folded.lines, style)]
    if folded.note:
        blocks.append(_line(folded.note, width, "dim"))
    return blocks


def _line(text: str, width: int, style: str) -> Block:
    """A line of its own (a note, the unit id), wrapped to the panel like every text: counted as printed."""
    return Block("", fold(text, width, width, None).lines, style)


def _size(text: str) -> str:
    lines = text.count("\n") + 1
    return f"{lines:,}-line" if lines > 1 else f"{len(text):,}-character"


def _arguments(step: Step) -> object:
    """A call's arguments as data (None when they are not JSON: then they are not the finish's either)."""
    try:
        return json.loads(step.action_arguments)
    except ValueError:
        return None


def _compact(value: object) -> str:
    """JSON on as few lines as it wraps to (a grade's details took 35 indented lines), keys sorted."""
    return json.dumps(value, sort_keys=True, ensure_ascii=False)
