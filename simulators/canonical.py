"""Canonical JSON and its hash: dict keys unordered, lists ordered, floats as JSON writes them."""

from __future__ import annotations

import hashlib

import orjson

from simulators.protocol import JSON

__all__ = ["canonical_bytes", "canonical_hash", "dumps_line"]


def canonical_bytes(value: JSON) -> bytes:
    return orjson.dumps(value, option=orjson.OPT_SORT_KEYS)


def canonical_hash(value: JSON) -> str:
    return hashlib.sha256(canonical_bytes(value)).hexdigest()


def dumps_line(value: JSON) -> bytes:
    """One JSONL line with sorted keys, so that written files are byte-identical run to run."""
    return orjson.dumps(value, option=orjson.OPT_SORT_KEYS | orjson.OPT_APPEND_NEWLINE)
