"""What providers' response headers say about waiting and about rate limits.

Two dialects:
    OpenAI-style    `x-ratelimit-{limit,remaining,reset}-{requests,tokens}`, resets as durations
                    ("1s", "6m0s", "20ms")
    Anthropic       `anthropic-ratelimit-{requests,tokens,input-tokens,output-tokens}-{limit,remaining,reset}`,
                    resets as RFC 3339 instants
and `Retry-After` (seconds or an HTTP date; `retry-after-ms` where sent). Instants are turned into
seconds from `now` (wall-clock epoch seconds), which callers inject so tests need no real dates.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime

__all__ = ["LimitReading", "parse_duration", "read_limits", "server_wait"]

_DURATION_PART = re.compile(r"(\d+(?:\.\d+)?)(ms|h|m|s)")
_UNIT_SECONDS = {"h": 3600.0, "m": 60.0, "s": 1.0, "ms": 0.001}
_KINDS = ("requests", "tokens")


@dataclass(frozen=True)
class LimitReading:
    """One limit as the server reported it; any part may be missing."""

    limit: float | None = None
    remaining: float | None = None
    reset_s: float | None = None


def parse_duration(text: str) -> float | None:
    """Go-style durations as OpenAI sends them ("1s", "6m0s", "1h2m3.5s", "20ms"); a bare number is seconds."""
    text = text.strip()
    if _is_number(text):
        return max(0.0, float(text))
    parts = _DURATION_PART.findall(text)
    if not parts or "".join(n + u for n, u in parts) != text:
        return None
    return sum(float(n) * _UNIT_SECONDS[u] for n, u in parts)


def server_wait(headers: Mapping[str, str], now: float) -> float | None:
    """How long the server asked us to wait before retrying, if it said so."""
    asked = _retry_after(headers, now)
    if asked is not None:
        return asked
    readings = read_limits(headers, now).values()
    exhausted = [r.reset_s for r in readings if r.reset_s is not None and r.remaining == 0]
    resets = exhausted or [r.reset_s for r in readings if r.reset_s is not None]
    return max(resets) if resets else None


def read_limits(headers: Mapping[str, str], now: float) -> dict[str, LimitReading]:
    """The requests and tokens limits the response reports, by kind; kinds not reported are absent."""
    found: dict[str, LimitReading] = {}
    for kind in _KINDS:
        reading = _openai_reading(headers, kind) or _anthropic_reading(headers, kind, now)
        if reading is not None:
            found[kind] = reading
    return found


def _retry_after(headers: Mapping[str, str], now: float) -> float | None:
    millis = headers.get("retry-after-ms")
    if millis is not None and _is_number(millis):
        return max(0.0, float(millis) / 1000)
    value = headers.get("retry-after")
    if value is None:
        return None
    if _is_number(value):
        return max(0.0, float(value))
    return _seconds_until_http_date(value, now)


def _openai_reading(headers: Mapping[str, str], kind: str) -> LimitReading | None:
    limit = _number(headers.get(f"x-ratelimit-limit-{kind}"))
    remaining = _number(headers.get(f"x-ratelimit-remaining-{kind}"))
    reset_text = headers.get(f"x-ratelimit-reset-{kind}")
    reset = parse_duration(reset_text) if reset_text is not None else None
    if limit is None and remaining is None and reset is None:
        return None
    return LimitReading(limit, remaining, reset)


def _anthropic_reading(headers: Mapping[str, str], kind: str, now: float) -> LimitReading | None:
    # `tokens` is the most restrictive token limit in effect; older responses only split input/output.
    names = (kind,) if kind == "requests" else ("tokens", "input-tokens")
    for name in names:
        prefix = f"anthropic-ratelimit-{name}-"
        limit = _number(headers.get(prefix + "limit"))
        remaining = _number(headers.get(prefix + "remaining"))
        reset_text = headers.get(prefix + "reset")
        reset = _seconds_until_rfc3339(reset_text, now) if reset_text is not None else None
        if limit is not None or remaining is not None or reset is not None:
            return LimitReading(limit, remaining, reset)
    return None


def _seconds_until_http_date(value: str, now: float) -> float | None:
    try:
        instant = parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if instant.tzinfo is None:  # "-0000" means UTC with no zone information
        instant = instant.replace(tzinfo=UTC)
    return max(0.0, instant.timestamp() - now)


def _seconds_until_rfc3339(value: str, now: float) -> float | None:
    try:
        instant = datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
    except ValueError:
        return None
    if instant.tzinfo is None:
        return None
    return max(0.0, instant.timestamp() - now)


def _number(value: str | None) -> float | None:
    return float(value) if value is not None and _is_number(value) else None


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return text.strip().lower() not in {"nan", "inf", "-inf", "infinity", "-infinity"}
