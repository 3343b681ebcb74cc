"""Real bad media for tests (bench/media.py makes them): each helper skips the test, saying why, where the
machine does not allow it (no mount permission, no mknod)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import AbstractContextManager, ExitStack, contextmanager
from pathlib import Path
from typing import TypeVar

import pytest

from bench import media
from bench.media import FULL_DEVICE, NULL_DEVICE, fifo, fill, snapshot, unix_socket

__all__ = ["FULL_DEVICE", "NULL_DEVICE", "device", "fifo", "fill", "hazards", "read_only_view", "small_disk",
           "snapshot", "unix_socket"]

T = TypeVar("T")


@contextmanager
def _or_skip(made: AbstractContextManager[T]) -> Iterator[T]:
    """Enter `made`, skipping the test if the machine refuses the medium; leave it as it leaves."""
    with ExitStack() as stack:
        try:
            entered = stack.enter_context(made)
        except media.Unavailable as exc:
            pytest.skip(str(exc))
        yield entered


def read_only_view(folder: Path) -> AbstractContextManager[Path]:
    """`folder` seen through a read-only bind mount (EROFS for every writer, root included)."""
    return _or_skip(media.read_only_view(folder))


def small_disk(where: Path, kilobytes: int) -> AbstractContextManager[Path]:
    """A tmpfs of `kilobytes` mounted at `where` (made here): a disk that really fills."""
    return _or_skip(media.small_disk(where, kilobytes))


def hazards(folder: Path) -> AbstractContextManager[dict[str, Path]]:
    """Every kind of path an output file must never replace, side by side in `folder` (bench/media.py)."""
    return _or_skip(media.hazards(folder))


def device(path: Path, numbers: tuple[int, int]) -> Path:
    """A character device node at `path` (a copy of /dev/null or /dev/full, not the machine's own)."""
    try:
        return media.device(path, numbers)
    except media.Unavailable as exc:
        pytest.skip(str(exc))
