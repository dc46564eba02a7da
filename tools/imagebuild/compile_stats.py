"""What the compiler cache did in an image's build, read from its BuildKit log.

Every script that compiles (docker/scripts/build-env.sh, ``rocm_pytorch_cc_stats``)
ends with one line on the compiler cache, in the step's output::

    compiler cache: ccache (local): 812 hits, 20 misses, 97.6 % hits
    compiler cache: sccache (sccache-webdav at http://cache:8080/cc): 0 hits, 120 misses, 0.0 % hits
    compiler cache: ccache (local): no compiles
    compiler cache: ccache (local): no stats (ccache --show-log-stats failed (exit 139))
    compiler cache: none

BuildKit's plain progress puts each line of a step's output after the step's
number and its seconds (``#12 1234.5 compiler cache: ...``); a step that came
from BuildKit's cache (``#12 CACHED``) prints nothing, so its compiles are not
counted. This module owns the line's format on the Python side: ``parse_line``
reads one line, ``summed`` adds up the lines of a log (an image's build may run
several compiling steps, MAGMA's, AOTriton's and torch's for one).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# `#N SECONDS ` in front of a step's output line (BuildKit's plain progress)
_STEP_PREFIX = re.compile(r"^#\d+ \d+(?:\.\d+)? ")
# Anywhere in a line: BuildKit appends a step's output to its last line when that
# had no newline yet. Not build-env.sh's first line, `build-env: compiler cache:
# ccache (...)`, which says which cache a step uses, not what it did.
LINE = re.compile(
    r"(?<!build-env: )compiler cache: "
    r"(?:(?P<none>none)"
    r"|(?P<launcher>ccache|sccache) \((?P<where>.+?)\): "
    r"(?:(?P<hits>\d+) hits, (?P<misses>\d+) misses, \d+\.\d % hits"
    r"|(?P<no_compiles>no compiles)"
    r"|no stats \((?P<reason>.*)\)))"
    r"[ \t\r]*$"
)


@dataclass(frozen=True)
class Line:
    """One step's line: its launcher (``none``: no cache), where its cache is
    (``local``, ``BACKEND at ENDPOINT``), and its counts; hits and misses are None
    when it could not read them (``reason`` says why) or there is no cache."""

    launcher: str
    where: str | None
    hits: int | None
    misses: int | None
    reason: str | None = None


@dataclass(frozen=True)
class Stats:
    """The compiles of an image's build: hits and misses of all its steps' lines."""

    hits: int
    misses: int
    lines: int  # the lines that carried counts ("no compiles": 0 and 0)

    @property
    def compiles(self) -> int:
        return self.hits + self.misses

    @property
    def rate(self) -> float | None:
        """Hits per compile in per cent, None without compiles."""
        return 100 * self.hits / self.compiles if self.compiles else None


def parse_line(text: str) -> Line | None:
    """The compiler cache line in ``text`` (a log line, with or without BuildKit's
    ``#N SECONDS`` in front), or None."""
    m = LINE.search(_STEP_PREFIX.sub("", text, count=1))
    if not m:
        return None
    if m["none"]:
        return Line("none", None, None, None)
    if m["hits"] is not None:
        return Line(m["launcher"], m["where"], int(m["hits"]), int(m["misses"]))
    if m["no_compiles"]:
        return Line(m["launcher"], m["where"], 0, 0)
    return Line(m["launcher"], m["where"], None, None, m["reason"])


def lines(log: str) -> list[Line]:
    """Every compiler cache line of a build log, in order."""
    return [x for x in map(parse_line, log.splitlines()) if x is not None]


def summed(log: str) -> Stats | None:
    """The hits and misses of every line of ``log`` that has them, added up; None when
    none has (no step compiled, every compiling step came from BuildKit's cache, the
    image was a staging hit, or no step could read its cache's counts)."""
    counted = [x for x in lines(log) if x.hits is not None and x.misses is not None]
    if not counted:
        return None
    return Stats(
        hits=sum(x.hits or 0 for x in counted),
        misses=sum(x.misses or 0 for x in counted),
        lines=len(counted),
    )
