"""Errors of the runner.

    InfrastructureError        the provider side failed (classified by `runner.providers.taxonomy`,
    │                          whose policy decides retry, re-queue, pause or stop); never scored as
    │                          an agent failure
    ├── RateLimited            429 / overloaded
    ├── ProviderTimeout        an attempt or the whole call ran out of time
    └── ProviderError          any other failure of the provider or the connection
    RunAborted                 the run cannot go on; the journal stays resumable
"""

from __future__ import annotations

from runner.providers.taxonomy import Failure, InfrastructureError, ProviderError, ProviderTimeout, RateLimited

__all__ = ["Failure", "InfrastructureError", "ProviderError", "ProviderTimeout", "RateLimited", "RunAborted",
           "sole_error"]


class RunAborted(Exception):
    """Stops the run cleanly with a reason; the journal stays resumable."""


def sole_error(error: BaseException) -> BaseException:
    """The one error inside (nested) one-member exception groups, as task groups wrap what their body
    raised; a group of several stays a group."""
    while isinstance(error, BaseExceptionGroup) and len(error.exceptions) == 1:
        error = error.exceptions[0]
    return error
