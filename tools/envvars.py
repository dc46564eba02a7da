"""The project's settings in the environment (``ROCM_PYTORCH_*``), read strictly.

A variable that is unset or blank takes its default: the user gave nothing.
A variable that is set to something its reader cannot use stops that reader
in one line naming the variable, its value and what to write instead; it is
never quietly read as the default (``FALSE`` is not "on", ``abc`` is not
"20 seconds").

Every reader raises ``SettingError`` (a ``ValueError``), or the error class
its tool reports in one line (``error=EngineError``, ...): the message is the
same whichever tool reads the variable.
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping


class SettingError(ValueError):
    """A setting the user gave that its reader cannot use: one line, with the fix."""


ON = ("1", "true", "yes", "on")
OFF = ("0", "false", "no", "off")


def _given(name: str, environ: Mapping[str, str] | None) -> str:
    return (os.environ if environ is None else environ).get(name, "").strip()


def switch(
    name: str,
    default: bool,
    environ: Mapping[str, str] | None = None,
    error: type[Exception] = SettingError,
) -> bool:
    """``$name`` as on/off: 1/true/yes/on or 0/false/no/off (any case); ``default`` when
    unset or blank; ``error`` naming the accepted values for anything else."""
    text = _given(name, environ)
    if not text:
        return default
    if text.lower() in ON:
        return True
    if text.lower() in OFF:
        return False
    raise error(
        f"{name}={text!r} is neither on nor off; write 0 or 1 (or false/true, no/yes, off/on)"
    )


def port(
    name: str,
    environ: Mapping[str, str] | None = None,
    error: type[Exception] = SettingError,
) -> int | None:
    """``$name`` as a TCP port (1-65535); None when unset or blank; ``error`` otherwise."""
    text = _given(name, environ)
    if not text:
        return None
    if not (text.isascii() and text.isdigit()) or not 0 < int(text) < 65536:
        raise error(f"{name}={text!r} is not a port number; set it to 1-65535")
    return int(text)


def number_of_seconds(text: str, least: float | None = None) -> float | None:
    """``text`` as a finite number of seconds > 0 (or >= ``least``); None when it is not one
    (``abc``, ``-1``, ``nan``, ``inf``). Also the push tool's options' check."""
    try:
        value = float(text)
    except ValueError:
        return None
    if not math.isfinite(value) or (value <= 0 if least is None else value < least):
        return None
    return value


def seconds(
    name: str,
    default: float,
    environ: Mapping[str, str] | None = None,
    error: type[Exception] = SettingError,
) -> float:
    """``$name`` as a number of seconds > 0; ``default`` when unset or blank;
    ``error`` for anything else (``abc``, ``-1``, ``nan``, ``inf``)."""
    text = _given(name, environ)
    if not text:
        return default
    value = number_of_seconds(text)
    if value is None:
        raise error(f"{name}={text!r} is not a number of seconds; set it to a number > 0")
    return value
