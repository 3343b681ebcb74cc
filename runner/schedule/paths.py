"""Where a run may write, checked before anything is written.

A user's path is taken only for what it was given for: `--journal` must be a journal file or an absent
path in a folder that can hold it; `data build --out` writes only into an absent path, an empty folder,
or an earlier built-in suite (and says so when it replaces one). The checks create nothing;
`write_suite` then writes the suite so that a failure (a full disk) is one line and leaves nothing,
and so does a Ctrl-C while it is built (`interruptible`). A run without `--dataset` reads the built-in
suite, built on first use (`resolve_dataset`).
"""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from runner.common.files import folders_for, location_problem, write_failure
from runner.common.home import DEFAULT_HOME
from runner.config.settings import SweepConfig
from simulators.dataset import Dataset, load_dataset
from simulators.errors import ShiftbenchInputError
from simulators.protocol import SCENARIOS
from simulators.suite import build_suite

__all__ = ["build_suite_if_needed", "check_journal_target", "check_suite_target", "dataset_root", "interruptible",
           "is_builtin_suite", "resolve_dataset", "suite_root", "write_suite"]

_SQLITE_HEADER = b"SQLite format 3\x00"
_SUITE_TOP = {"data", "environments"}


def check_journal_target(path: Path, flag: str = "--journal") -> None:
    """A journal file to open, or an absent path whose folder exists (or can be made) and is writable."""
    if path.is_dir():
        raise ShiftbenchInputError(f"{flag} {path}: is a folder; give a journal file path, "
                                   f"e.g. {path / 'journal.sqlite'}")
    if path.exists():
        # An empty file is a journal a run created and was killed in before SQLite wrote its first page
        # (SQLite itself opens it as a new database): starting again there must work.
        # SQLite's import only where a journal is named
        from runner.journal import recover_hint, refuse_foreign_database, refuse_read_only_journal

        if not path.is_file() or not (_is_sqlite(path) or path.stat().st_size == 0):
            hint = f"; {recover_hint(path)}" if path.is_file() else ""
            raise ShiftbenchInputError(f"{flag} {path}: exists and is not a shiftbench journal; give a journal "
                                       f"file or a new path{hint}")

        refuse_read_only_journal(path, flag)
        if path.stat().st_size:
            refuse_foreign_database(path)
        return
    problem = location_problem(path.parent)
    if problem is not None:
        raise ShiftbenchInputError(f"{flag} {path}: {problem}; pass --journal PATH in a writable folder")


def check_suite_target(path: Path, flag: str = "--out") -> str:
    """Where the built-in suite may be written; returns what will happen there, for the user."""
    if not path.exists() and not path.is_symlink():
        problem = location_problem(path.parent)
        if problem is not None:
            raise ShiftbenchInputError(f"{flag} {path}: {problem}; choose a writable folder")
        return f"writing the built-in suite to {path}"
    if path.is_symlink() or not path.is_dir():
        raise ShiftbenchInputError(f"{flag} {path}: is not a folder; give an absent path or an empty folder")
    entries = sorted(p.name for p in path.iterdir())
    if not entries:
        return f"writing the built-in suite into the empty folder {path}"
    if is_builtin_suite(path):
        return f"replacing the earlier built-in suite in {path}"
    found = next((name for name in entries if name not in _SUITE_TOP), entries[0])
    raise ShiftbenchInputError(f"{flag} {path}: holds files that are not a built-in suite ('{found}'); "
                               "nothing was changed: give an absent path or an empty folder")


def write_suite(root: Path, seed: int, flag: str = "--out") -> str:
    """Build the suite into `root` (checked with `check_suite_target` first) and return its fingerprint. The
    dataset is staged and renamed into place whole (`simulators.dataset.write_dataset`); on a failure the
    staging goes, and so does any folder made for it."""
    with folders_for(root, flag):
        try:
            return build_suite(root, seed)
        except OSError as exc:
            raise write_failure(flag, root, exc) from exc


@contextmanager
def interruptible() -> Iterator[None]:
    """Ctrl-C raises KeyboardInterrupt at once inside the block, as in a plain script.

    The suite is built synchronously inside the event loop, whose own SIGINT handler only asks the main
    task to stop at its next await: the build went on to the end and the run started anyway (issue 30).
    Raised inside the build, the interrupt removes its staging folder, so no partial suite is left."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    before = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, before)


def is_builtin_suite(path: Path) -> bool:
    """The layout a built-in suite has and nothing else: data/<scenario>/ and environments/<scenario>/."""
    if {p.name for p in path.iterdir()} - _SUITE_TOP:
        return False
    for top in _SUITE_TOP:
        folder = path / top
        if folder.exists() and (not folder.is_dir() or {p.name for p in folder.iterdir()} - set(SCENARIOS)):
            return False
    return (path / "data").is_dir()


def _is_sqlite(path: Path) -> bool:
    try:
        with path.open("rb") as handle:
            head = handle.read(len(_SQLITE_HEADER))
    except OSError:
        return False
    return head == _SQLITE_HEADER


# --- the built-in suite, built on first use ----------------------------------------------------------

def resolve_dataset(config: SweepConfig, say: Callable[[str], None]) -> Dataset:
    """The configured dataset, or the built-in suite (built on first use)."""
    return load_dataset(build_suite_if_needed(config, say), only=config.scenarios)


def suite_root(config: SweepConfig) -> Path:
    return (DEFAULT_HOME / "suites" / f"seed-{config.seed}").resolve()


def dataset_root(config: SweepConfig) -> Path | None:
    """The dataset to read: the configured one, or the built-in suite once built; None: not built yet."""
    if config.dataset:
        return Path(config.dataset).resolve()
    root = suite_root(config)
    return root if (root / "data").is_dir() else None


def build_suite_if_needed(config: SweepConfig, say: Callable[[str], None]) -> Path:
    root = dataset_root(config)
    if root is not None:
        return root
    root = suite_root(config)
    absent = _absent_folders(root)
    try:
        check_suite_target(root, "the built-in suite's folder")
        say(f"Building the built-in suite (seed {config.seed}) in {root} ...")
        with interruptible():  # called by other commands too (`methods check`), not only inside start_sweep
            write_suite(root, config.seed, "the built-in suite's folder")
    except BaseException:
        # Wherever a Ctrl-C lands, the folders this build made and left empty go too (an empty
        # .shiftbench was once left behind in CI); a folder holding anything is kept.
        for folder in absent:
            with contextlib.suppress(OSError):
                folder.rmdir()
        raise
    return root


def _absent_folders(root: Path) -> list[Path]:
    """`root` and the folders above it that do not exist yet, innermost first."""
    absent, folder = [], root.absolute()
    while not folder.exists() and folder != folder.parent:
        absent.append(folder)
        folder = folder.parent
    return absent
