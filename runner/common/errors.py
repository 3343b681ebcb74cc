"""The run's own error, and unwrapping task groups' errors.

`RunAborted`: the run cannot go on (a failure class that stops it, a damaged journal); the journal
stays resumable. Provider failures (`InfrastructureError` and its kinds, never scored as an agent's)
are `runner.providers.taxonomy`'s.
"""

from __future__ import annotations

__all__ = ["RunAborted", "sole_error"]


class RunAborted(Exception):
    """Stops the run cleanly with a reason; the journal stays resumable."""


def sole_error(error: BaseException) -> BaseException:
    """The one error inside (nested) one-member exception groups, as task groups wrap what their body
    raised; a group of several stays a group."""
    while isinstance(error, BaseExceptionGroup) and len(error.exceptions) == 1:
        error = error.exceptions[0]
    return error
