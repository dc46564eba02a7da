"""How a push stops: its deadline (`push --timeout`), SIGINT and SIGTERM.

The deadline is a value (``Deadline``) that starts when the push starts
(tools/registry/cli.py makes it as `push` begins, the PushOptions carry it);
``interruptible`` turns the first of a signal or the deadline into
``Interrupted`` or ``OutOfTime`` in the push's thread, between two requests,
and ignores every later one. After a stop, ``out_of_time`` is its one line and
``landed`` asks whether the tag PUT in flight at a signal landed.
"""

from __future__ import annotations

import signal
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from tools.oci.client import Limits, RegistryClient, oldest_in_flight
from tools.oci.errors import RegistryError

if TYPE_CHECKING:
    from tools.registry.plan import PlannedImage

STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)
LANDED_CHECK = 2.0  # seconds to ask whether the tag PUT in flight at a signal landed


class Interrupted(BaseException):
    """SIGINT or SIGTERM during a push: stop now (nothing may catch it as an error)."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


class OutOfTime(BaseException):
    """The push's deadline (--timeout) passed: stop now, like an interrupt."""


@dataclass(frozen=True)
class Deadline:
    """``seconds`` from ``start`` (time.monotonic(); default: when it is made)."""

    seconds: float
    start: float = field(default_factory=time.monotonic)

    def left(self) -> float:
        return self.seconds - (time.monotonic() - self.start)


@contextmanager
def interruptible(deadline: Deadline | None = None) -> Iterator[None]:
    """Within: SIGINT and SIGTERM raise Interrupted, and once ``deadline`` has passed,
    OutOfTime (SIGALRM); after the first of them all are ignored."""
    got = []

    def stop(signum, _frame) -> None:
        got.append(signum)
        signal.setitimer(signal.ITIMER_REAL, 0)
        for s in (*STOP_SIGNALS, signal.SIGALRM):
            signal.signal(s, signal.SIG_IGN)
        if signum == signal.SIGALRM:
            raise OutOfTime()
        raise Interrupted(signum)

    before = {s: signal.signal(s, stop) for s in (*STOP_SIGNALS, signal.SIGALRM)}
    if deadline is not None:
        signal.setitimer(signal.ITIMER_REAL, max(deadline.left(), 1e-3))
    try:
        yield
    finally:
        if not got:
            signal.setitimer(signal.ITIMER_REAL, 0)
            for s, handler in before.items():
                signal.signal(s, handler)


def out_of_time(deadline: Deadline) -> str:
    """The one line of a push stopped by its deadline: the request it was waiting for."""
    timeout = deadline.seconds
    waiting = oldest_in_flight()
    if waiting:
        where, host, waited = waiting
        return (
            f"no answer from {host} within --timeout {timeout:g} s, the push's deadline"
            f" ({where}: waited {waited:.1f} s); check the registry, or raise --timeout"
        )
    return (
        f"the push did not finish within --timeout {timeout:g} s, its deadline;"
        " check the registry, or raise --timeout"
    )


def landed(image: PlannedImage, tag: str, insecure: bool, ca_file: Path | None) -> bool:
    """Whether ``tag``, whose PUT was in flight when the push stopped, is in the registry
    on ``image``'s digest: asked once, for at most LANDED_CHECK seconds (a read; nothing
    is written)."""
    client = RegistryClient(
        image.host,
        insecure=insecure,
        ca_file=ca_file,
        retries=0,
        limits=Limits(timeout=LANDED_CHECK, read_timeout=LANDED_CHECK),
    )
    try:
        return client.manifest_digest(image.name, tag) == image.load_descriptor().digest
    except RegistryError:
        return False
    finally:
        client.close()
