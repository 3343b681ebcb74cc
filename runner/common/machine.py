"""The machine a run starts on, as a report's provenance records it (no host name: reports get shared)."""

from __future__ import annotations

import os
import platform

import orjson

__all__ = ["machine_info"]


def machine_info() -> str:
    """The machine a run starts on, as JSON text (no host name: reports get shared)."""
    return orjson.dumps({"platform": platform.platform(), "python": platform.python_version(),
                         "implementation": platform.python_implementation(), "cpus": os.cpu_count()}).decode()
