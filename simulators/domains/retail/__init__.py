"""Placeholder until the retail domain lands."""

from typing import Any

DOMAIN: Any = None
