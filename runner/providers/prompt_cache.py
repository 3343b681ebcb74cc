"""What a request tells a provider's prompt cache about its stream.

Both hints are keyed by the request's `cache_scope` (the stream and the call's purpose, set by the
runner's client stack):

- OpenAI's `prompt_cache_key`: a short stable hash of the scope, so the requests of one stream (which
  share their prefix up to the method's context) are routed to the same cache. Sent only where the
  endpoint accepts it (on by default for OpenAI; `prompt_cache_key = true` in a sweep file's endpoint).
- Anthropic's cache TTL, chosen per stream from how often its requests come (`StreamCadence`): a
  cache entry lives 5 minutes from its last use (a read refreshes it) unless written for an hour at
  2 x input instead of 1.25 x. A stream runs on 5-minute marks until two of its requests in a row are
  more than `SLOW_GAP_S` (4 minutes: a margin under the 5, for the request's own send time) apart;
  from then on its marks ask for one hour, for the rest of the run. Such a gap means its episodes
  wait that long for each other (serialized behind a slow model, or behind learning calls), so a
  5-minute entry would expire between them and every episode would write its prefix again.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Literal

__all__ = ["FIVE_MINUTES", "ONE_HOUR", "SLOW_GAP_S", "CacheTtl", "StreamCadence", "prompt_cache_key"]

CacheTtl = Literal["5m", "1h"]
FIVE_MINUTES: CacheTtl = "5m"
ONE_HOUR: CacheTtl = "1h"
SLOW_GAP_S = 240.0


def prompt_cache_key(scope: str) -> str:
    """A stable, short, opaque key per stream: the same on every run and resume, never the names."""
    return "sb-" + hashlib.sha256(scope.encode()).hexdigest()[:16]


@dataclass
class StreamCadence:
    """The cache TTL of each stream, from the gaps between its requests (see the module docstring).
    `fixed` ("5m" or "1h") skips the measurement: an endpoint's `cache_ttl` setting."""

    fixed: CacheTtl | None = None
    slow_gap_s: float = SLOW_GAP_S
    clock: Callable[[], float] = time.monotonic
    _last: dict[str, float] = field(default_factory=dict)
    _slow: set[str] = field(default_factory=set)

    def ttl(self, scope: str) -> CacheTtl:
        """The TTL for a request of `scope` sent now (and the request counted)."""
        if self.fixed is not None:
            return self.fixed
        now = self.clock()
        last = self._last.get(scope)
        self._last[scope] = now
        if last is not None and now - last > self.slow_gap_s:
            self._slow.add(scope)
        return ONE_HOUR if scope in self._slow else FIVE_MINUTES
