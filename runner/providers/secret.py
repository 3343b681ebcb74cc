"""API keys held so that they cannot leak by accident.

A key lives in a `Secret` whose repr and str are masked, so a key never shows up in an exception
message, a traceback's locals, a log line or a dataclass repr. It reaches the wire only through
`HeaderAuth`, which writes it into the outgoing request at send time (httpx masks only the
`Authorization` header in reprs, not `x-api-key`, so the client never holds it as a default header).
Text that comes back from a provider (an error body may echo the key) goes through `redact`.
"""

from __future__ import annotations

from collections.abc import Generator

import httpx

__all__ = ["HeaderAuth", "Secret"]

_MASK = "****"


class Secret:
    __slots__ = ("_value",)

    def __init__(self, value: str) -> None:
        self._value = value

    def reveal(self) -> str:
        return self._value

    def redact(self, text: str) -> str:
        """`text` with every occurrence of the key masked."""
        return text.replace(self._value, _MASK) if self._value else text

    def __repr__(self) -> str:
        return f"Secret('{_MASK}')"

    __str__ = __repr__


class HeaderAuth(httpx.Auth):
    """Sets one header to the key (`Authorization: Bearer <key>` or `x-api-key: <key>`) per request."""

    def __init__(self, header: str, secret: Secret, prefix: str = "") -> None:
        self._header = header
        self._secret = secret
        self._prefix = prefix

    def auth_flow(self, request: httpx.Request) -> Generator[httpx.Request, httpx.Response, None]:
        if self._secret.reveal():
            request.headers[self._header] = self._prefix + self._secret.reveal()
        yield request

    def __repr__(self) -> str:
        return f"HeaderAuth({self._header!r}, {self._secret!r})"
