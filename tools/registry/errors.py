"""Errors the registry tool reports to a user (one line, no traceback)."""


class RegistryError(Exception):
    """A failure talking to a registry, with what was asked and the fix."""


class RetryableStatus(RegistryError):
    """A 5xx or 429 answer: worth another try after a backoff."""

    def __init__(self, message: str, retry_after: float | None = None) -> None:
        super().__init__(message)
        self.retry_after = retry_after
