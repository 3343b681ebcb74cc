"""Where a method came from, exactly enough that a published number names the code behind it.

A `MethodSource` says how the spec was found (registry, module, file, entry point, the reference
adapter), what it points at, and a sha256 of the source: the file for a file, the whole top-level
package tree (every `.py` below it) for a module in a package, the module's own file otherwise. For a
shiftbench method the hash covers its module (or its subpackage, `methods/tabular/`); the rest of
shiftbench is the run's code version. An installed package adds its distribution and version.
"""

from __future__ import annotations

import functools
import hashlib
import sys
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from importlib import metadata
from pathlib import Path
from types import ModuleType

from simulators.protocol import JSON

__all__ = ["MethodSource", "distribution_of", "source_hash"]

ORIGINS = ("registry", "module", "file", "entry_point", "adapter")
"""How a spec was found; `adapter`: a class of the reference's interface (`slb:...`), from a module or file."""


@dataclass(frozen=True)
class MethodSource:
    origin: str
    """One of ORIGINS."""
    spec: str
    """The spec as the run recorded it (a file's path made absolute)."""
    target: str
    """What it resolved to: `module:NAME`, `/abs/file.py:NAME`, an entry point's value."""
    source_sha256: str
    source_files: int
    distribution: str = ""
    """`name version` of the installed package that holds it, if any."""

    def to_json(self) -> dict[str, JSON]:
        return asdict(self)


def source_hash(module: ModuleType, registry: bool = False) -> tuple[str, int]:
    """(sha256, number of files) of the code a method's module stands for."""
    files = _source_files(module, registry)
    digest = hashlib.sha256()
    root = _common_root(files)
    for path in files:
        digest.update(path.relative_to(root).as_posix().encode() + b"\0")
        digest.update(path.read_bytes() + b"\0")
    return digest.hexdigest(), len(files)


def distribution_of(module: ModuleType) -> str:
    """`name version` of the distribution whose files hold the module's top-level package; "" if none."""
    top = module.__name__.split(".")[0]
    names = _distributions_by_package(tuple(sys.path)).get(top, [])
    for name in names:
        try:
            return f"{name} {metadata.version(name)}"
        except metadata.PackageNotFoundError:
            continue
    return ""


@functools.lru_cache(maxsize=4)
def _distributions_by_package(import_path: tuple[str, ...]) -> Mapping[str, list[str]]:
    """Top-level package -> the distributions that hold it, for this import path. Reading it parses every
    installed distribution's metadata (0.1-0.2 s, more in a large environment), and a run resolves its
    methods several times: once per import path is enough (a folder put on the path is seen)."""
    return metadata.packages_distributions()


def _source_files(module: ModuleType, registry: bool) -> list[Path]:
    own = Path(module.__file__ or "")
    if not own.is_file():
        return []
    parts = module.__name__.split(".")
    is_package = own.name == "__init__.py"
    if registry:
        # methods/rag.py alone; methods/tabular/retail.py stands for the methods/tabular/ package.
        return _tree(own.parent) if is_package or len(parts) > 2 else [own]
    if len(parts) == 1 and not is_package:
        return [own]  # a single-file module
    top = own.parent
    for _ in range(len(parts) - (1 if is_package else 2)):
        top = top.parent
    return _tree(top)


def _tree(folder: Path) -> list[Path]:
    return sorted(p for p in folder.rglob("*.py") if "__pycache__" not in p.parts)


def _common_root(files: list[Path]) -> Path:
    if not files:
        return Path("/")
    root = files[0].parent
    while not all(root in f.parents for f in files):
        root = root.parent
    return root
