"""The machine-readable policy block: a fenced JSON object inside prose.

Oracle bulletins end with one, the built-in suite's documents carry one, and learning methods that
write beliefs (tabular) write one in the same format. The scripted agent reads them. The JSON is a
flat object of rule id -> rule, so a later block overrides an earlier one rule by rule.

    ```shiftbench-policy
    {"rule_id": {...}, ...}
    ```
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping

import orjson

from simulators.protocol import JSON

__all__ = ["FENCE", "render_policy_block", "parse_policy_blocks", "merged_policy"]

FENCE = "shiftbench-policy"
_BLOCK = re.compile(r"```" + FENCE + r"\s*\n(.*?)\n```", re.DOTALL)


def render_policy_block(rules: Mapping[str, JSON]) -> str:
    body = orjson.dumps(dict(rules), option=orjson.OPT_SORT_KEYS | orjson.OPT_INDENT_2).decode()
    return f"```{FENCE}\n{body}\n```"


def parse_policy_blocks(text: str) -> list[dict[str, JSON]]:
    """Every well-formed block in `text`, in order. A malformed block is skipped, not fatal: an
    agent reading a damaged note should fall back to what it knows, as a person would."""
    return [dict(block) for block in _parsed(text)]


@functools.lru_cache(maxsize=256)
def _parsed(text: str) -> tuple[dict[str, JSON], ...]:
    # Cached: the scripted agent re-reads the same system prompt every turn of an episode, and a
    # method's context can run to hundreds of kilobytes. A str caches its own hash, so a hit is cheap.
    # Callers get copies of the top level (parse_policy_blocks); rules themselves are read, not edited.
    if FENCE not in text:
        return ()
    blocks: list[dict[str, JSON]] = []
    for match in _BLOCK.finditer(text):
        try:
            value = orjson.loads(match.group(1))
        except orjson.JSONDecodeError:
            continue
        if isinstance(value, dict):
            blocks.append(value)
    return tuple(blocks)


def merged_policy(*texts: str) -> dict[str, JSON]:
    """Rules from every block of every text, later ones overriding earlier ones by rule id."""
    merged: dict[str, JSON] = {}
    for text in texts:
        for block in parse_policy_blocks(text):
            merged.update(block)
    return merged
