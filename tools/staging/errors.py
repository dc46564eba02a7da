"""Errors the staging tools report to a user: one line, what went wrong and the fix."""

from __future__ import annotations


class StagingError(Exception):
    """A staging problem; the message names the bad input and the fix ("<what>; <fix>")."""


class UnreachableError(StagingError):
    """A staging registry that does not answer (the CLI exits 1, not 2)."""
