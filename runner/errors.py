"""Errors of the runner.

    InfrastructureError        the provider side failed (after its retries); the episode is re-queued,
    │                          never scored as an agent failure
    ├── RateLimited            429 / overloaded
    ├── ProviderTimeout        an attempt or the whole call ran out of time
    └── ProviderError          any other failure of the provider or the connection
    RunAborted                 the run cannot go on (an episode failed too often); resumable
"""

from __future__ import annotations

from simulators.model_api import Usage

__all__ = ["InfrastructureError", "ProviderError", "ProviderTimeout", "RateLimited", "RunAborted", "sole_error"]


class InfrastructureError(Exception):
    """`usage` and `attempts`: what the failed attempts consumed (a provider may bill tokens of a call
    that then failed), so it is priced and journaled; `cost_usd` is set once it has been priced."""

    def __init__(self, message: str = "", *, usage: Usage | None = None, attempts: int = 1) -> None:
        super().__init__(message)
        self.usage = usage or Usage()
        self.attempts = attempts
        self.cost_usd = 0.0


class RateLimited(InfrastructureError):
    pass


class ProviderTimeout(InfrastructureError):
    pass


class ProviderError(InfrastructureError):
    pass


class RunAborted(Exception):
    """Stops the run cleanly with a reason; the journal stays resumable."""


def sole_error(error: BaseException) -> BaseException:
    """The one error inside (nested) one-member exception groups, as task groups wrap what their body
    raised; a group of several stays a group."""
    while isinstance(error, BaseExceptionGroup) and len(error.exceptions) == 1:
        error = error.exceptions[0]
    return error
