"""Writing a user's output file whole or not at all: a crash or a bad path never leaves half a file."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from simulators.errors import ShiftbenchInputError

__all__ = ["shared_mode", "write_atomically"]


def write_atomically(path: Path, text: str, flag: str) -> None:
    """Write `text` to a temporary file beside `path`, then rename it over `path`. `flag` names the
    option the path came from, for the one-line error."""
    path = Path(path)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    except OSError as exc:
        raise ShiftbenchInputError(f"{flag} {path}: cannot write there ({exc.strerror}); "
                                   "choose a writable folder") from exc
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as file:
            file.write(text)
        os.chmod(temporary, shared_mode())  # mkstemp makes it private; a report is meant to be shared
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def shared_mode() -> int:
    """The mode a plain `open` would give a new file under the user's umask."""
    mask = os.umask(0)
    os.umask(mask)
    return 0o666 & ~mask
