"""The keys an `[endpoints.NAME]` table of a sweep file may have, and the one check of them.

Kept apart from the registry that builds clients from those tables so that the sweep file's loader
checks them too, where it knows the file's name: a typo is one line naming the file, the table, the
unknown key and the nearest known one, before anything runs.
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping
from typing import Any

from runner.config.batch_settings import check_batch_mode
from simulators.errors import ShiftbenchInputError

__all__ = ["ENDPOINT_KEYS", "check_endpoint_keys"]

ENDPOINT_KEYS = frozenset({
    "kind", "model", "base_url", "base_urls", "api_key_env", "api_key_envs", "requests_per_minute",
    "tokens_per_minute", "max_concurrency", "extra_body", "thinking_budget", "stream", "max_tokens",
    "prompt_cache_key", "cache_ttl", "batch"})


def check_endpoint_keys(where: str, table: Mapping[str, Any]) -> None:
    """`where` names the file and the table (`sweep.toml [endpoints.local]`)."""
    if not isinstance(table, Mapping):
        raise ShiftbenchInputError(f"{where}: must be a table")
    unknown = sorted(set(table) - ENDPOINT_KEYS)
    if not unknown:
        if "batch" in table:
            check_batch_mode(where, "batch", table["batch"])
        return
    close = difflib.get_close_matches(unknown[0], sorted(ENDPOINT_KEYS), n=1)
    hint = f" (did you mean '{close[0]}'?)" if close else ""
    raise ShiftbenchInputError(f"{where}: unknown key '{unknown[0]}'{hint}; known: {', '.join(sorted(ENDPOINT_KEYS))}")
