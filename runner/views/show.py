"""`shiftbench show` and `shiftbench state`: episodes and learned state as a person reads them.

Rendered with rich (this is a view, not the runner): a transcript is a panel per episode with the task,
one block per turn (reasoning, reply, the tool call, the observation), the finish, the grade with its
details and judge, and the episode's tokens, cost and latency. `--json` prints plain data for tools.

The output is bounded: `--limit` episodes (20 by default), a long tool observation folded and a
document printed once (`runner.views.folding`), and a closing line saying how many episodes it left
out, naming only the flags not already given that would narrow or widen it.
"""

from __future__ import annotations

from collections.abc import Sequence

import orjson
from rich.console import Console, Group, RenderableType
from rich.panel import Panel
from rich.rule import Rule
from rich.text import Text

from runner.views.folding import Observations
from runner.views.transcript import Transcript, json_text, transcript_data
from simulators.record import Step

__all__ = ["NARROWING", "more_hint", "print_transcripts", "render_transcript", "transcripts_json"]

NARROWING = ("--stream", "--scenario", "--window", "--phase", "--failed")
"""The filters that narrow what `show` prints, in the order its hint names them."""


def transcripts_json(transcripts: Sequence[Transcript]) -> str:
    return orjson.dumps([transcript_data(t) for t in transcripts], option=orjson.OPT_INDENT_2).decode()


def print_transcripts(transcripts: Sequence[Transcript], more: int, console: Console | None = None,
                      empty: str = "no episode matches", given: Sequence[str] = (), full: bool = False) -> None:
    """`given`: the flags the command was given (the hint names only the others); `full`: every
    observation whole."""
    console = console or Console()
    observations = Observations(full=full)
    for transcript in transcripts:
        console.print(render_transcript(transcript, observations))
    if more > 0:
        console.print(Text(more_hint(more, given), style="dim"))
    if not transcripts:
        console.print(empty)


def more_hint(more: int, given: Sequence[str]) -> str:
    """How many matching episodes were left out, and the flags not in `given` that narrow or widen."""
    narrow = [flag for flag in NARROWING if flag not in given]
    widen = "--all" if "--limit" in given else "--limit N or --all"
    how = (f"narrow with {_either(narrow)}, or print more with {widen}" if narrow
           else f"print more with {widen}")
    return f"... {more} more episodes match; {how}"


def _either(flags: Sequence[str]) -> str:
    return flags[0] if len(flags) == 1 else f"{', '.join(flags[:-1])} or {flags[-1]}"


def render_transcript(t: Transcript, observations: Observations | None = None) -> RenderableType:
    """One episode's panel; `observations`: what the output printed before (None: this one alone)."""
    observations = observations or Observations()
    e = t.row  # the journaled episode
    # The title holds what tells one episode from the next in a long list, most telling first, short
    # enough for a narrow terminal (a panel cuts its title at the border); the rest opens the body,
    # where it wraps instead of being cut.
    title = f"{t.score_line}  window {e.window}  {e.category}  {e.phase}"
    parts: list[RenderableType] = [
        Text(f"{t.stream}  {e.scenario}  window {e.window}  {e.category}  {e.phase}  task {e.task_id}", style="bold"),
        Text(f"unit {e.unit_id}", style="dim"),
        _labelled("task", t.record.task.instruction)]
    for number, step in enumerate(t.record.steps, start=1):
        where = f"turn {number} of {t.stream} task {e.task_id}"
        observation = observations.text(step.observation, where)
        parts += [Rule(f"turn {number}", style="dim", align="left"), *_step(step, observation)]
    parts.append(Rule("outcome", style="dim", align="left"))
    if t.finish:
        parts.append(_labelled("finish", t.finish))
    parts.append(_labelled("ended", e.end_reason))
    parts.append(_labelled("grade", f"{t.score_line} by {e.judge or 'the grader'}"))
    if t.grade_details:
        parts.append(Text(json_text(t.grade_details)))
    parts.append(Text(f"{e.turns} turns, {e.tool_calls} tool calls, {e.input_tokens} in "
                      f"({e.cached_input_tokens} cached) / {e.output_tokens} out tokens, ${e.cost_usd:.4f}, "
                      f"{e.latency_s:.1f} s", style="dim"))
    style = "green" if e.reward >= 1.0 else "red"
    return Panel(Group(*parts), title=Text(title, style=f"bold {style}"), title_align="left", border_style=style)


def _step(step: Step, observation: str) -> list[RenderableType]:
    parts: list[RenderableType] = []
    if step.reasoning:
        parts.append(_labelled("thought", step.reasoning, "italic"))
    if step.reply:
        parts.append(_labelled("replied", step.reply))
    action = f"NONE [{step.note}]" if step.action_name is None else f"{step.action_name}({step.action_arguments})"
    parts.append(_labelled("call", action, "cyan"))
    parts.append(_labelled("observation", observation))
    return parts


def _labelled(label: str, text: str, style: str = "") -> Text:
    line = Text(f"{label}: ", style="bold")
    line.append(text, style=style)
    return line
