"""Errors tagconf reports to a user: each names the bad input and the fix."""

from __future__ import annotations

import difflib
from collections.abc import Iterable


class TagconfError(Exception):
    """A user error: bad catalogue or bad command-line input.

    The CLI prints ``str(error)`` on one line and exits non-zero, without a
    traceback.
    """

    def __init__(self, where: str, problem: str, fix: str = "") -> None:
        self.where = where
        self.problem = problem
        self.fix = fix
        super().__init__(str(self))

    def __str__(self) -> str:
        text = f"{self.where}: {self.problem}" if self.where else self.problem
        return f"{text}; {self.fix}" if self.fix else text


class CatalogError(TagconfError):
    """The catalogue file is malformed, incomplete or inconsistent."""


class UsageError(TagconfError):
    """A command-line value is unknown or would make an invalid tag."""


def nearest(value: str, known: Iterable[str]) -> str:
    """Return a "did you mean" hint for ``value`` among ``known``, or ''."""
    known = list(known)
    close = difflib.get_close_matches(value, known, n=1, cutoff=0.5)
    listing = ", ".join(known)
    if close:
        return f"did you mean '{close[0]}'? known: {listing}"
    return f"known: {listing}"
