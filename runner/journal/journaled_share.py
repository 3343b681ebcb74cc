"""How far a run's episodes are journaled, read from another process (bench/memory_flat.py polls it)."""

from __future__ import annotations

import sqlite3
from pathlib import Path

__all__ = ["journaled_share"]


def journaled_share(journal: Path) -> float | None:
    """Journaled episodes over units, or None while the journal or its units do not exist yet."""
    if not journal.exists():
        return None
    try:
        with sqlite3.connect(f"file:{journal}?mode=ro", uri=True, timeout=0.2) as db:
            units = db.execute("SELECT count(*) FROM units").fetchone()[0]
            done = db.execute("SELECT count(*) FROM episodes").fetchone()[0]
    except sqlite3.Error:
        return None
    return done / units if units else None
