"""Errors the engine tool reports to a user: what went wrong, then the fix."""

from __future__ import annotations


class EngineError(Exception):
    """No Docker engine could be used or started; the message says why and what to do."""
