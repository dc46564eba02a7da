"""The steps of an image build's log: BuildKit's plain progress (``--progress=plain``).

BuildKit numbers each vertex of the build and prints its name once, then its output
and its end, each line after the vertex's number::

    #12 [pytorch-build 3/7] RUN --mount=... /opt/build/build-pytorch.sh ...
    #12 45.67 [1/9125] Building CXX object ...
    #12 DONE 412.3s          (it ran)
    #12 CACHED               (BuildKit reused an earlier run of it)
    #12 ERROR: process "/bin/sh -c ..." did not complete successfully: exit code: 1
    #12 CANCELED             (another step failed first)

A step of a Dockerfile stage is named ``[STAGE I/N] INSTRUCTION`` (``stage-K`` for an
unnamed stage), its instruction as BuildKit acts on it: continuation lines joined, the
build args it reads expanded. The internal vertices (``[internal] load build
definition from Dockerfile.base``) and the named contexts (``[context rocm-runtime]
...``) are no stage's steps. This module reads that list; tools/rehearsal/coverage.py
matches RUN steps to the RUN instructions of docker/, tools/imagebuild/executed.py
says which RUNs executed and why.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

_VERTEX = re.compile(r"^#(\d+) \[([^\] ]+) (\d+)/(\d+)\] (\S.*)$")
_STATUS = re.compile(r"^#(\d+) (DONE|CACHED|ERROR|CANCELED)\b(?: (\d+(?:\.\d+)?)s\b)?")
_OUTPUT = re.compile(r"^#(\d+) (\d+(?:\.\d+)?) ")
_DEFINITION = re.compile(r"load build definition from (\S+)")
_STATES = {"DONE": "ran", "CACHED": "cached", "ERROR": "failed", "CANCELED": "canceled"}


@dataclass(frozen=True)
class Step:
    """One step of a stage, as the log tells it.

    ``status``: ``ran`` (DONE), ``cached``, ``failed`` (ERROR), ``canceled``, or
    ``unknown`` when the log ends before the step does. ``seconds``: DONE's, else the
    time of the step's last output line (a failed step's), else None.
    """

    vertex: int
    stage: str
    index: int
    total: int
    text: str  # white space collapsed
    status: str
    seconds: float | None

    @property
    def keyword(self) -> str:
        return self.text.split(" ", 1)[0].upper()

    @property
    def executed(self) -> bool:
        """It ran in this build (to its end or not), not taken from BuildKit's cache."""
        return self.status in ("ran", "failed")


def normal(text: str) -> str:
    """``text`` with its white space collapsed (BuildKit keeps a continuation's indent)."""
    return " ".join(text.split())


def definition(log: str) -> str | None:
    """The Dockerfile's file name the log's build read, or None."""
    m = _DEFINITION.search(log)
    return Path(m.group(1)).name if m else None


def steps(log: str) -> list[Step]:
    """Every step of a stage in ``log``, in the order BuildKit started them."""
    names: dict[int, tuple[str, int, int, str]] = {}
    status: dict[int, str] = {}
    done: dict[int, float] = {}
    last: dict[int, float] = {}
    for line in log.splitlines():
        m = _VERTEX.match(line)
        if m:
            vid = int(m.group(1))
            names.setdefault(vid, (m.group(2), int(m.group(3)), int(m.group(4)), m.group(5)))
            continue
        m = _STATUS.match(line)
        if m:
            vid = int(m.group(1))
            status[vid] = _STATES[m.group(2)]
            if m.group(3):
                done[vid] = float(m.group(3))
            continue
        m = _OUTPUT.match(line)
        if m:
            last[int(m.group(1))] = float(m.group(2))
    return [
        Step(
            vertex=vid,
            stage=stage,
            index=index,
            total=total,
            text=normal(text),
            status=status.get(vid, "unknown"),
            seconds=done.get(vid, last.get(vid)),
        )
        for vid, (stage, index, total, text) in names.items()
    ]
