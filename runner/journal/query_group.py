"""What every group of named queries is written against: `_rows(sql, params)`, one statement and one round
trip. `Reader` (runner.journal.reader) supplies it over its read-only connection; the groups kept apart
by concern (`ViewQueries`, `CallQueries`, `RetryQueries`) are mixins of it, declared once here.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from typing import Any

__all__ = ["QueryGroup"]


class QueryGroup(ABC):
    @abstractmethod
    async def _rows(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        """The rows of one statement (Reader's, over its connection)."""
