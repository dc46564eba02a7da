"""Errors the registry tool reports to a user (one line, no traceback)."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tools.staging.descriptor import Descriptor


class RegistryError(Exception):
    """A failure talking to a registry, with what was asked and the fix."""


class RetryableStatus(RegistryError):
    """A 5xx or 429 answer: worth another try after a backoff."""

    def __init__(self, message: str, retry_after: float | None = None) -> None:
        super().__init__(message)
        self.retry_after = retry_after


class NotFound(RegistryError):
    """A 404 for a manifest or blob that was expected to be there."""


class Lost(RegistryError):
    """The staging registry no longer holds an image (or a blob of it) a descriptor names."""


def lost(d: Descriptor) -> Lost:
    """The one wording for content staging has lost, with the fix."""
    return Lost(
        f"staging has lost {d.label()} {d.digest} ({d.staging_ref}); run"
        " `bazel run //tools/staging -- forget` and build again (it rebuilds what is missing)"
    )
