"""Sealed documents: a sha256 over canonical content, so a report can be checked against itself.

Canonical content is the document's JSON with sorted keys and orjson's shortest float repr, minus the
`sha256` key itself. Anyone can recompute it: `sha256(json.dumps(doc_without_sha256, sort_keys=True,
separators=(",", ":"), ensure_ascii=False).encode())` gives the same digest for the same values.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from typing import Any

import orjson

__all__ = ["SEAL_KEY", "canonical", "digest", "is_sealed_intact", "seal"]

SEAL_KEY = "sha256"


def canonical(document: Mapping[str, Any]) -> bytes:
    return orjson.dumps({k: v for k, v in document.items() if k != SEAL_KEY}, option=orjson.OPT_SORT_KEYS)


def digest(document: Mapping[str, Any]) -> str:
    return hashlib.sha256(canonical(document)).hexdigest()


def seal(document: Mapping[str, Any]) -> dict[str, Any]:
    """The document with its seal as the last key."""
    body = {k: v for k, v in document.items() if k != SEAL_KEY}
    return {**body, SEAL_KEY: digest(body)}


def is_sealed_intact(document: Mapping[str, Any]) -> bool:
    return document.get(SEAL_KEY) == digest(document)
