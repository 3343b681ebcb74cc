"""The size of `probe --full`'s long-context request, here so the command line can show its default
without importing `compat` (which loads the HTTP clients)."""

from __future__ import annotations

__all__ = ["CONTEXT_PROBE_TOKENS"]

CONTEXT_PROBE_TOKENS = 32_768
