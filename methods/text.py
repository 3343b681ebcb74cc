"""Text helpers the learning methods share: tokens, token estimates, clipping, near-duplicates.

Everything here is a pure function of its input, so a method's context stays a pure function of its
state (what `load(state())` must preserve).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from simulators.record import EpisodeRecord, score_line

__all__ = [
    "TIMESTAMP_PREFIX",
    "clip",
    "estimate_tokens",
    "near_duplicate",
    "short_record",
    "strip_timestamp",
    "tokenize",
]

TIMESTAMP_PREFIX = "Current timestamp:"
_TOKEN = re.compile(r"[a-z0-9]+")
_NEGATIONS = frozenset({"not", "no", "never", "cannot", "without", "don", "doesn", "isn", "aren", "won",
                        "shouldn", "mustn", "nor", "neither"})
_CLIP_TAIL = 2_000
"""Characters kept from the end of a clipped record: the last steps and the `Score:` line."""


def tokenize(text: str) -> list[str]:
    """Lowercased `[a-z0-9]+` runs, the reference retriever's tokens."""
    return _TOKEN.findall(text.lower())


def strip_timestamp(instruction: str) -> str:
    """The instruction without its `Current timestamp: t` line and the blank line after it.

    The position says nothing about the task's content; left in, it would make every query match
    every record on the token `timestamp` and on nearby numbers."""
    if not instruction.startswith(TIMESTAMP_PREFIX):
        return instruction
    head, blank, rest = instruction.partition("\n\n")
    if blank:
        return rest
    return instruction.partition("\n")[2]


def estimate_tokens(text: str) -> int:
    """Characters / 4, rounded up: the usual rule of thumb, and free of any tokenizer dependency."""
    return (len(text) + 3) // 4


def clip(text: str, limit: int) -> str:
    """At most about `limit` characters, keeping the head and the tail: the tail holds the last
    steps and the score line, which is what a reviewing model most needs."""
    if len(text) <= limit:
        return text
    tail = min(_CLIP_TAIL, limit // 4)
    marker = f"\n  ... ({len(text) - limit} characters omitted) ...\n"
    return text[: max(0, limit - tail)] + marker + text[len(text) - tail:]


def near_duplicate(a: str, b: str) -> bool:
    """Token-set Jaccard >= 0.8 (in integers, so never a matter of float rounding), and the same
    numbers and negations: "escalate above 5000" and "escalate above 3000" are different rules, and
    so are "refund" and "do not refund", however much wording they share."""
    left, right = set(tokenize(a)), set(tokenize(b))
    if _pivots(left) != _pivots(right):
        return False
    if not left or not right:
        return left == right
    return 5 * len(left & right) >= 4 * len(left | right)


def _pivots(tokens: set[str]) -> set[str]:
    return {t for t in tokens if t in _NEGATIONS or any(c.isdigit() for c in t)}


def short_record(record: EpisodeRecord) -> str:
    """The instruction, the actions taken and the score: a record without thoughts or observations."""
    lines = [f"INSTRUCTION: {record.task.instruction}", ""]
    lines.extend(_action_lines(record))
    lines.append(score_line(record.reward))
    return "\n".join(lines)


def _action_lines(record: EpisodeRecord) -> Sequence[str]:
    return [f"  action: {step.action_name}({step.action_arguments})"
            for step in record.steps if step.action_name is not None]
