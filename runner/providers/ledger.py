"""Attempts per request body, counted across every layer that may send it again.

The client's retry loop, an episode run again by the engine, a resumed judge or learner: each may
send the same body. The ledger is the one count they all consult before an attempt goes out, so
a lasting outage costs at most `max_attempts` attempts per body, not retries times re-runs, and a
request the provider rejected is never sent again with the same body, by anyone.

Only failed attempts count, and only bodies that failed are remembered (a success forgets its body:
its answer is in the response cache), so the ledger stays small over an overnight sweep, and two units
that happen to send the same body at once (blind and an empty rag context, say) do not use each
other's attempts up.

An endpoint pool (`runner.providers.pool`) re-sends an attempt whose replica refused or dropped the
connection to another replica inside the same attempt: that failover is not counted here (each replica
at most once per attempt), so a body makes at most `max_attempts` counted attempts and at most that many
times the number of replicas sends. The ledger's key is the pool's (its first replica's URL), not the
replica's, so the bound is pool-wide.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

from runner.providers.failures import AttemptFailed
from runner.providers.taxonomy import POLICIES, Failure

__all__ = ["DEFAULT_MAX_ATTEMPTS", "RequestLedger", "request_key"]

DEFAULT_MAX_ATTEMPTS = 6


def request_key(url: str, payload: bytes) -> str:
    return hashlib.sha256(url.encode() + b"\0" + payload).hexdigest()


@dataclass
class _Entry:
    attempts: int = 0
    last: Failure | None = None
    last_message: str = ""


class RequestLedger:
    def __init__(self, max_attempts: int = DEFAULT_MAX_ATTEMPTS) -> None:
        if max_attempts < 1:
            raise ValueError(f"max_attempts must be at least 1, got {max_attempts}")
        self.max_attempts = max_attempts
        self._entries: dict[str, _Entry] = {}
        self.refused = 0
        """Attempts not sent because the body was rejected before or its bound was spent."""

    def admit(self, key: str) -> None:
        """Let an attempt of `key` go out, or raise a final `AttemptFailed` instead of sending it."""
        entry = self._entries.get(key)
        if entry is None:
            return
        if entry.last is not None and not POLICIES[entry.last].retry:
            self.refused += 1
            raise AttemptFailed(entry.last, f"{entry.last_message} (refused before: not sent again)", final=True)
        if entry.attempts >= self.max_attempts:
            self.refused += 1
            raise AttemptFailed(entry.last or Failure.SERVER_ERROR,
                                f"{entry.last_message} (this request used all {self.max_attempts} of its "
                                "attempts: not sent again)", final=True)

    def failed(self, key: str, failure: AttemptFailed) -> None:
        if failure.final:
            return
        entry = self._entries.setdefault(key, _Entry())
        entry.attempts += 1
        entry.last, entry.last_message = failure.failure, failure.message

    def succeeded(self, key: str) -> None:
        self._entries.pop(key, None)

    def used(self, key: str) -> int:
        """Failed attempts of `key` so far."""
        entry = self._entries.get(key)
        return entry.attempts if entry else 0

    def left(self, key: str) -> int:
        entry = self._entries.get(key)
        if entry is not None and entry.last is not None and not POLICIES[entry.last].retry:
            return 0
        return max(0, self.max_attempts - self.used(key))
