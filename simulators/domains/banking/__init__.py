"""Placeholder until the banking domain lands."""

from typing import Any

DOMAIN: Any = None
