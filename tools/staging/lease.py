"""Leases: a running build's claim on what it reads from and writes to staging.

Every image build holds one for as long as it runs::

    <state dir>/leases/<pid>-<random>.json   {"pid", "started", "what", "digests", "tags"}

``digests`` are the manifests it reads (its parents, its upstream) and, once
pushed, the one it wrote; ``tags`` are the staging tags it pushes
(``staging/pytorch:c-…``), known before the push starts. The builder holds an
fcntl lock on its own lease file, so the kernel drops the claim when the
process ends, however it ends (SIGKILL from Bazel's process-wrapper
included): a lease file nobody holds is stale and is removed by whoever
finds it.

`gc` keeps everything a live lease names, and does not restart the embedded
registry (the disk reclamation step) while any build holds one. A lease is
taken under the state dir's start/stop lock, which gc holds from reading the
leases until the registry answers again: a build either is seen by gc, or
starts after gc is done.

Leases live on this host: a shared staging registry's builds on other hosts
are not visible here (see `gc`'s help).
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import secrets
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from tools.staging import embedded


@dataclass
class Lease:
    """One build's claim; ``add`` names more as the build learns them."""

    path: Path
    what: str
    digests: list[str] = field(default_factory=list)
    tags: list[str] = field(default_factory=list)
    started: float = field(default_factory=time.time)
    _file: object = None

    def add(self, *, digests: Iterable[str] = (), tags: Iterable[str] = ()) -> None:
        """Name more (under the state dir's lock: gc never reads a lease half written)."""
        with embedded.locked(embedded.paths()):
            self._add(digests, tags)

    def _add(self, digests: Iterable[str], tags: Iterable[str]) -> None:
        self.digests += [d for d in digests if d and d not in self.digests]
        self.tags += [t for t in tags if t and t not in self.tags]
        self._write()

    def _write(self) -> None:
        data = {
            "pid": os.getpid(),
            "started": self.started,
            "what": self.what,
            "digests": self.digests,
            "tags": self.tags,
        }
        f = self._file
        f.seek(0)
        f.truncate()
        f.write(json.dumps(data, indent=1) + "\n")
        f.flush()


@dataclass(frozen=True)
class Held:
    """A live lease as gc reads it."""

    pid: int
    what: str
    started: float
    digests: frozenset[str]
    tags: frozenset[str]  # "name:tag"


def directory(p: embedded.Paths | None = None) -> Path:
    return (p or embedded.paths()).root / "leases"


@contextlib.contextmanager
def hold(what: str, *, digests: Iterable[str] = (), tags: Iterable[str] = ()) -> Iterator[Lease]:
    """Hold a lease for the duration of the ``with`` block (see the module docstring)."""
    p = embedded.paths()
    leases = directory(p)
    leases.mkdir(parents=True, exist_ok=True)
    name = f"{os.getpid()}-{secrets.token_hex(4)}"
    part, final = leases / f"{name}.part", leases / f"{name}.json"
    waiting = "staging: waiting for a gc (or a start or stop) of the embedded staging registry"
    with embedded.locked(p, waiting):  # not while gc reads leases and restarts the registry
        f = part.open("w")
        fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)  # a new file: nobody else has it
        lease = Lease(final, what, _file=f)
        lease._add(digests, tags)
        part.rename(final)  # visible to gc only once it is locked and written
    try:
        yield lease
    finally:
        with contextlib.suppress(OSError):
            final.unlink()
        f.close()


def live(p: embedded.Paths | None = None) -> list[Held]:
    """The leases running builds hold; stale ones (their process gone) are removed.

    Call it holding the state dir's lock (``embedded.locked``), as gc does: leases are
    taken and written under it."""
    out = []
    leases = directory(p)
    for path in sorted(leases.glob("*.json")) if leases.is_dir() else []:
        try:
            f = path.open("r")
        except OSError:
            continue  # released meanwhile
        with f:
            try:
                fcntl.flock(f, fcntl.LOCK_SH | fcntl.LOCK_NB)
            except BlockingIOError:
                # held, but unreadable (not ours?): still a running build; it names nothing
                out.append(_read(f) or Held(0, path.name, 0.0, frozenset(), frozenset()))
                continue
            with contextlib.suppress(OSError):
                path.unlink()  # nobody holds it: its build is gone
    return out


def _read(f) -> Held | None:
    try:
        data = json.loads(f.read())
        return Held(
            pid=int(data["pid"]),
            what=str(data.get("what", "")),
            started=float(data.get("started", 0.0)),
            digests=frozenset(data.get("digests", [])),
            tags=frozenset(data.get("tags", [])),
        )
    except (ValueError, KeyError, TypeError):
        return None
