"""`shiftbench show` and `shiftbench state`: episodes and learned state as a person reads them.

Rendered with rich (this is a view, not the runner): a transcript is a panel per episode with the task,
one block per turn (reasoning, reply, the tool call, the observation), the finish, the grade with its
details and judge, and the episode's tokens, cost and latency. `--json` prints plain data for tools.

The output is bounded: `--limit` episodes (20 by default), each held to about a screen unless `--full`
(`runner.views.episode_layout`: long texts folded, an observation printed before named, the middle of
a long episode's turns folded into one line), and a closing line saying how many episodes it left out,
naming only the flags not already given that would narrow or widen it.
"""

from __future__ import annotations

from collections.abc import Sequence

import orjson
from rich.console import Console, Group, RenderableType
from rich.panel import Panel
from rich.rule import Rule
from rich.text import Text

from runner.views.episode_layout import Block, lay_out_episode
from runner.views.folding import Seen
from runner.views.transcript import Transcript, transcript_data

__all__ = ["NARROWING", "more_hint", "print_transcripts", "render_transcript", "transcripts_json"]

NARROWING = ("--stream", "--scenario", "--window", "--phase", "--failed")
"""The filters that narrow what `show` prints, in the order its hint names them."""


def transcripts_json(transcripts: Sequence[Transcript]) -> str:
    return orjson.dumps([transcript_data(t) for t in transcripts], option=orjson.OPT_INDENT_2).decode()


def print_transcripts(transcripts: Sequence[Transcript], more: int, console: Console | None = None,
                      empty: str = "no episode matches", given: Sequence[str] = (), full: bool = False) -> None:
    """`given`: the flags the command was given (the hint names only the others); `full`: every
    episode whole (by default each is held to about a screen, `runner.views.episode_layout`)."""
    console = console or Console()
    seen = Seen()
    for transcript in transcripts:
        console.print(render_transcript(transcript, seen, console.width, full))
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


def render_transcript(t: Transcript, seen: Seen | None = None, width: int = 80, full: bool = False) -> RenderableType:
    """One episode's panel on a console `width` wide; `seen`: what the output printed before (None: this
    one alone)."""
    e = t.row  # the journaled episode
    # The title holds what tells one episode from the next in a long list, most telling first, short
    # enough for a narrow terminal (a panel cuts its title at the border); the rest opens the body,
    # where it wraps instead of being cut.
    title = f"{t.score_line}  window {e.window}  {e.category}  {e.phase}"
    inside = max(MIN_INSIDE, width - PANEL_EDGES)
    blocks = lay_out_episode(t, inside, seen if seen is not None else Seen(), full)
    style = "green" if e.reward >= 1.0 else "red"
    return Panel(Group(*(_rendered(block) for block in blocks)), title=Text(title, style=f"bold {style}"),
                 title_align="left", border_style=style)


PANEL_EDGES = 4
"""A panel's border and padding, left and right: what its text has less than the console."""
MIN_INSIDE = 16


def _rendered(block: Block) -> RenderableType:
    if block.rule:
        return Rule(block.label, style="dim", align="left")
    text = Text()
    if block.label:
        text.append(f"{block.label}: ", style="bold")
    # Wrapped to the panel already (what the episode's budget counted): rich has nothing left to wrap.
    text.append("\n".join(block.lines), style=block.style)
    return text
