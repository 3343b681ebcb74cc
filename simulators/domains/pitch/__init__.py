"""Placeholder until the pitch domain lands."""

from typing import Any

DOMAIN: Any = None
