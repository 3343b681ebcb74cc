"""Errors of the runner.

    InfrastructureError        the provider side failed (after its retries); the episode is re-queued,
    │                          never scored as an agent failure
    ├── RateLimited            429 / overloaded
    ├── ProviderTimeout        an attempt or the whole call ran out of time
    └── ProviderError          any other failure of the provider or the connection
    RunAborted                 the run cannot go on (an episode failed too often); resumable
"""

from __future__ import annotations

__all__ = ["InfrastructureError", "ProviderError", "ProviderTimeout", "RateLimited", "RunAborted"]


class InfrastructureError(Exception):
    pass


class RateLimited(InfrastructureError):
    pass


class ProviderTimeout(InfrastructureError):
    pass


class ProviderError(InfrastructureError):
    pass


class RunAborted(Exception):
    """Stops the run cleanly with a reason; the journal stays resumable."""
