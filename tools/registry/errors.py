"""Errors the registry tool reports to a user (one line, no traceback)."""

from __future__ import annotations


class RegistryError(Exception):
    """A failure talking to a registry, with what was asked and the fix."""


class RetryableStatus(RegistryError):
    """A 5xx or 429 answer: worth another try after a backoff."""

    def __init__(self, message: str, retry_after: float | None = None) -> None:
        super().__init__(message)
        self.retry_after = retry_after


class BadStatus(RegistryError):
    """An answer with an HTTP ``status`` the request does not accept."""

    def __init__(self, message: str, status: int) -> None:
        super().__init__(message)
        self.status = status


class Unreachable(RegistryError):
    """``host`` did not answer (refused, reset, timed out), retries spent; ``detail`` says how."""

    def __init__(self, message: str, host: str, detail: str) -> None:
        super().__init__(message)
        self.host = host
        self.detail = detail


class NotFound(RegistryError):
    """A 404 for a manifest or blob that was expected to be there."""
