"""`--method-env NAME` (sweep key `method_env`): names of environment variables, never values (a value
is read from the runner's environment when a worker starts, so no secret is written to the journal)."""

from __future__ import annotations

import re
from collections.abc import Iterable

from simulators.errors import ShiftbenchInputError

__all__ = ["check_env_names"]

_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def check_env_names(names: Iterable[str], where: str) -> tuple[str, ...]:
    """The variable names, each checked to be one."""
    checked = []
    for name in names:
        if not isinstance(name, str) or not _NAME.fullmatch(name):
            raise ShiftbenchInputError(f"{where}: {name!r} is not an environment variable's name (give the name "
                                       "only, e.g. --method-env HF_HOME; its value is read from your environment)")
        checked.append(name)
    return tuple(checked)
