"""Errors wheelhouse reports to a user: one line, what went wrong and the fix."""

from __future__ import annotations


class WheelhouseError(Exception):
    """A user error (bad input, a refused mix, a missing image); the CLI exits 2."""

    def __init__(self, what: str, fix: str = "") -> None:
        self.what = what
        self.fix = fix
        super().__init__(str(self))

    def __str__(self) -> str:
        return f"{self.what}; {self.fix}" if self.fix else self.what
