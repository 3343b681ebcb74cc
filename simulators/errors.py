"""Errors of the benchmark layer.

    ShiftbenchInputError        bad input from a user: a file, a line, a flag; the CLI exits 2
    └── DatasetError            a dataset file that does not load or validate
    ToolError                   a tool refused a call; becomes an observation the model sees, never a crash
"""

from __future__ import annotations

from pathlib import Path

__all__ = ["DatasetError", "ShiftbenchInputError", "ToolError"]


class ShiftbenchInputError(Exception):
    """Input a user can fix. The message says what is wrong and what to do."""


class DatasetError(ShiftbenchInputError):
    def __init__(self, path: Path | str, message: str, line: int | None = None) -> None:
        self.path = Path(path)
        self.line = line
        self.reason = message
        where = f"{self.path}:{line}" if line is not None else str(self.path)
        super().__init__(f"{where}: {message}")


class ToolError(Exception):
    """Raised by a domain tool; the agent sees `Error: <message>` as the observation."""
