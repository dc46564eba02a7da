"""Errors of talking to a registry, as the tools report them (one line, no traceback, no secret)."""

from __future__ import annotations

import json
import re
from typing import Any, NamedTuple

_SECRETS = [
    # userinfo of a URL: https://user:password@host
    (re.compile(r"(\b[a-z][a-z0-9+.-]*://)[^/@\s]+@", re.I), r"\1***@"),
    # credentials and signatures in a query string (tokens, presigned storage URLs)
    (
        re.compile(
            r"([?&](?:[a-z_-]*token|password|passwd|secret|sig|signature"
            r"|x-amz-(?:signature|credential|security-token))=)[^&\s]+",
            re.I,
        ),
        r"\1***",
    ),
    # Authorization header values
    (re.compile(r"\b(Basic|Bearer)\s+[\w.~+/=-]+", re.I), r"\1 ***"),
]


def redact(text: str) -> str:
    """``text`` with URL userinfo, token query parameters and Authorization values hidden."""
    for pattern, replacement in _SECRETS:
        text = pattern.sub(replacement, text)
    return text


class RegistryError(Exception):
    """A failure talking to a registry, with what was asked and the fix.

    Printed redacted (see ``redact``), whoever prints it.
    """

    def __str__(self) -> str:
        return redact(super().__str__())


class Transient(RegistryError):
    """Worth another try after a backoff (``retry_after`` seconds, if the registry said)."""

    def __init__(self, message: str, retry_after: float | None = None) -> None:
        super().__init__(message)
        self.retry_after = retry_after


class RetryableStatus(Transient):
    """A 5xx or 429 answer."""


class Dropped(Transient):
    """``where`` (the request) lost its connection: dropped, reset or timed out (``timeout``)."""

    def __init__(self, where: str, detail: str, timeout: bool = False) -> None:
        super().__init__(f"{where}: {detail}")
        self.where = where
        self.detail = detail
        self.timeout = timeout


class ErrorEntry(NamedTuple):
    """One error of a registry's error body (OCI distribution spec): ``code`` such as
    MANIFEST_UNKNOWN, a ``message``, and an optional ``detail`` of any JSON type."""

    code: str
    message: str = ""
    detail: Any = None

    def line(self) -> str:
        """`CODE: message (detail)`, as messages show it."""
        detail = self.detail
        if detail and not isinstance(detail, str):
            detail = json.dumps(detail)
        return f"{self.code}: {self.message}" + (f" ({detail})" if detail else "")


def parse_errors(body: bytes | str) -> tuple[ErrorEntry, ...]:
    """The errors of an error body, `{"errors": [{"code", "message", "detail"}, ...]}`;
    () when the body is not one (HTML from a proxy, empty, other JSON)."""
    try:
        entries = json.loads(body)["errors"]
        return tuple(
            ErrorEntry(str(e["code"]), str(e.get("message") or ""), e.get("detail"))
            for e in entries
        )
    except (ValueError, KeyError, TypeError, AttributeError):
        return ()


class BadStatus(RegistryError):
    """An answer with an HTTP ``status`` the request does not accept, and the ``errors``
    its body gave (``parse_errors``): match on ``codes``, never on the message."""

    def __init__(self, message: str, status: int, errors: tuple[ErrorEntry, ...] = ()) -> None:
        super().__init__(message)
        self.status = status
        self.errors = errors

    @property
    def codes(self) -> tuple[str, ...]:
        return tuple(e.code for e in self.errors)


class Unreachable(RegistryError):
    """``host`` did not answer (refused, unknown name, reset, timed out); ``detail`` says how."""

    def __init__(self, message: str, host: str, detail: str) -> None:
        super().__init__(message)
        self.host = host
        self.detail = redact(detail)


class NotFound(RegistryError):
    """A 404 for a manifest, blob or repository that was expected to be there."""
