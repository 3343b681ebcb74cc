"""oracle: told the active window's policy (the upper reference). The one method that sees hidden
information, by design: the runner hands it the scenario's bulletins and nothing else does."""

from __future__ import annotations

from methods.base import BulletinLookup, MethodSetup, MethodSpec, NonLearning
from simulators.protocol import TaskView

__all__ = ["ORACLE", "OracleMethod"]

HEADER = "## Current policy bulletin\nThe following is the policy in force right now. It overrides the documents."


class OracleMethod(NonLearning):
    def __init__(self, bulletins: BulletinLookup) -> None:
        self._bulletins = bulletins

    def context(self, task: TaskView) -> str:
        return f"{HEADER}\n\n{self._bulletins(task.timestamp).strip()}"


def _build(setup: MethodSetup) -> OracleMethod:
    if setup.bulletins is None:
        raise ValueError("the oracle method needs the scenario's bulletins")
    return OracleMethod(setup.bulletins)


ORACLE = MethodSpec(name="oracle", summary="Told the active window's policy bulletin (upper reference).",
                    uses_model=False, learns=False, build=_build, sees_bulletin=True)
