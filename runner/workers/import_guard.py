"""The one-line refusal a method meets when it imports a shiftbench module outside the method face.

The boundary is what enforces the face (shiftbench's source files are out of a worker's reach, so such
an import fails whatever the method does to this check); this finder only makes the failure say what
happened, instead of a bare ModuleNotFoundError or PermissionError deep in importlib.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from importlib.machinery import ModuleSpec
from types import ModuleType

from methods.face import in_face

__all__ = ["FaceGuard", "OutsideFace", "install"]


class OutsideFace(ImportError):
    """A method imported a shiftbench module it may not see."""


class FaceGuard:
    """A meta path finder that refuses shiftbench's modules outside the face."""

    @classmethod
    def find_spec(cls, name: str, path: Sequence[str] | None = None,
                  target: ModuleType | None = None) -> ModuleSpec | None:
        if in_face(name):
            return None
        raise OutsideFace(f"shiftbench's module '{name}' is not part of what a method may import (the method face: "
                          "methods.face lists it, docs/methods.md describes it)", name=name)


def install() -> None:
    if FaceGuard not in sys.meta_path:
        sys.meta_path.insert(0, FaceGuard)
