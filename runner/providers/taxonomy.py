"""The one classification of provider failures, and the one policy that follows from each class.

Every failure is classified once, where it enters (`runner.providers.failures`), into a `Failure`;
the class alone decides everything downstream:

    class              retried   breaker   once the call has failed for good        examples
    rejected request   no        no        the run stops; the request is shown      400, 422, other 4xx
    auth               no        no        the run stops: check the key             401, 403
    not found          no        no        the run stops: check model id / URL      404, a wrong URL scheme
    rate limited       yes       no        re-queue while attempts are left         429
    overloaded         yes       yes       re-queue while attempts are left         503, 529
    server error       yes       yes       re-queue while attempts are left         500, 502, 504, 409
    timeout            yes       yes       re-queue while attempts are left         408, connect/stall timeouts
    transport          yes       yes       re-queue while attempts are left         refused / dropped connections
    malformed reply    yes       yes       re-queue while attempts are left         garbled JSON, cut streams
    context too long   no        no        the episode ends (end reason `context_length`)
    content filtered   no        no        the episode ends (end reason `content_filter`)
    endpoint down      no        -         the run stops: resume later               the breaker's verdict

"Retried" is the client's own retry loop; attempts for one request body are bounded across every
layer together (`runner.providers.ledger`). "Breaker" failures count toward the endpoint's circuit
breaker (`runner.providers.breaker`). A request rejected once is never sent again with the same body.

The error types the rest of the runner catches live here too, each carrying its `Failure`:

    InfrastructureError        the provider side failed; never scored as an agent failure
    ├── RateLimited            rate limited, overloaded
    ├── ProviderTimeout        timeout
    └── ProviderError          every other class

To teach the taxonomy a new provider quirk, add a rule to `runner.providers.failures` (statuses and
message patterns map to classes there); a new class needs a row in `POLICIES` and nothing else.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Literal

from simulators.model_api import Usage

__all__ = [
    "POLICIES",
    "Failure",
    "InfrastructureError",
    "Policy",
    "ProviderError",
    "ProviderTimeout",
    "RateLimited",
    "error_type",
    "infrastructure_error",
]


class Failure(StrEnum):
    REJECTED = "rejected request"
    AUTH = "auth"
    NOT_FOUND = "not found"
    RATE_LIMITED = "rate limited"
    OVERLOADED = "overloaded"
    SERVER_ERROR = "server error"
    TIMEOUT = "timeout"
    TRANSPORT = "transport"
    MALFORMED = "malformed reply"
    CONTEXT_TOO_LONG = "context too long"
    CONTENT_FILTERED = "content filtered"
    ENDPOINT_DOWN = "endpoint down"


Outcome = Literal["requeue", "stop_run", "end_episode"]


@dataclass(frozen=True)
class Policy:
    retry: bool
    """The client tries the same request again (within the request's attempt bound)."""
    trips_breaker: bool
    """Counts toward the endpoint's consecutive failures; anything else shows the endpoint answers."""
    outcome: Outcome
    """What happens once the call has failed for good: run the episode again later (while its request
    has attempts left), stop the run, or end the episode the way a model limit would."""
    advice: str
    """What the user should do, shown after the provider's message."""
    end_reason: str = ""
    """For `end_episode`: the episode's end reason."""


_LATER = "resume later (`{resume}`), when the provider is back"
"""`{resume}` in an advice: the command that continues the run, filled in by `headline` (the run id and
the `--journal` it needs are the runner's to know, not the provider's)."""

POLICIES: dict[Failure, Policy] = {
    Failure.REJECTED: Policy(False, False, "stop_run", "the provider refused this request, so it is not sent again; "
                             "fix what its message names (model id, max_tokens, extra_body) and start a new run"),
    Failure.AUTH: Policy(False, False, "stop_run", "check the API key in the model's environment variable "
                         "(and its permissions), then `{resume}`"),
    Failure.NOT_FOUND: Policy(False, False, "stop_run", "check the model id and the endpoint's base_url"),
    Failure.RATE_LIMITED: Policy(True, False, "requeue", "the provider's rate limit held too long; " + _LATER
                                 + ", or lower concurrency / requests_per_minute"),
    Failure.OVERLOADED: Policy(True, True, "requeue", _LATER),
    Failure.SERVER_ERROR: Policy(True, True, "requeue", _LATER),
    Failure.TIMEOUT: Policy(True, True, "requeue", _LATER),
    Failure.TRANSPORT: Policy(True, True, "requeue", _LATER),
    Failure.MALFORMED: Policy(True, True, "requeue", _LATER),
    Failure.CONTEXT_TOO_LONG: Policy(False, False, "end_episode", "the episode ends as it stands",
                                     end_reason="context_length"),
    Failure.CONTENT_FILTERED: Policy(False, False, "end_episode", "the episode ends as it stands",
                                     end_reason="content_filter"),
    Failure.ENDPOINT_DOWN: Policy(False, False, "stop_run", _LATER),
}


class InfrastructureError(Exception):
    """The provider side failed (after the retries its class allows).

    `usage` and `attempts`: what the failed attempts consumed (a provider may bill tokens of a call
    that then failed), so it is priced and journaled; `cost_usd` is set once it has been priced.
    `attempts_left`: attempts its request body may still make (0: the bound is spent, or the class is
    never retried), which decides whether re-running the episode can help."""

    failure: Failure = Failure.SERVER_ERROR

    def __init__(self, message: str = "", *, usage: Usage | None = None, attempts: int = 1,
                 failure: Failure | None = None, attempts_left: int = 0) -> None:
        super().__init__(message)
        if failure is not None:
            self.failure = failure
        self.usage = usage or Usage()
        self.attempts = attempts
        self.attempts_left = attempts_left
        self.cost_usd = 0.0
        self.replica = ""
        """The replica of a pooled endpoint the last attempt went to; empty for one endpoint."""
        self.retried: tuple[str, ...] = ()
        """The failure class of each of its failed attempts, the last one included."""

    @property
    def policy(self) -> Policy:
        return POLICIES[self.failure]

    def headline(self, resume: str = "shiftbench resume RUN_ID") -> str:
        """One line: the class, the provider's own message, the advice; `resume`: the command that continues
        the run, as it must be typed (its id, and `--journal PATH` for a journal other than the default)."""
        return f"{self.failure} ({self}); {self.policy.advice.format(resume=resume)}"


class RateLimited(InfrastructureError):
    failure = Failure.RATE_LIMITED


class ProviderTimeout(InfrastructureError):
    failure = Failure.TIMEOUT


class ProviderError(InfrastructureError):
    failure = Failure.SERVER_ERROR


def error_type(failure: Failure) -> type[InfrastructureError]:
    if failure in (Failure.RATE_LIMITED, Failure.OVERLOADED):
        return RateLimited
    if failure is Failure.TIMEOUT:
        return ProviderTimeout
    return ProviderError


def infrastructure_error(failure: Failure, message: str, *, usage: Usage | None = None, attempts: int = 1,
                         attempts_left: int = 0) -> InfrastructureError:
    return error_type(failure)(message, usage=usage, attempts=attempts, failure=failure, attempts_left=attempts_left)
