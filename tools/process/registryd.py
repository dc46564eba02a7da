"""A distribution registry (Debian's docker-registry) on 127.0.0.1: start, probe, stop.

Two registries run this way: the embedded staging registry
(tools/staging/embedded.py: one per user, its port part of every descriptor)
and the private engine's optional loopback registry (tools/engine: CI's and
the benches' $REGISTRY). Each owner says where its files are (``Registry``),
chooses the binary and the port, and holds its state dir's lock around a
start or stop (tools/process/daemon.py ``start_once``, ``locked``). This module
writes the config, starts the process detached (tools/process/daemon.py ``spawn``:
it outlives the caller), waits until it answers ``GET /v2/`` or dies, keeps
its log bounded, and stops it. A pid file names the registry only while that
process runs with this config (a recycled pid is not ours).
"""

from __future__ import annotations

import contextlib
import os
import secrets
import shutil
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from tools import places
from tools.process import daemon

REGISTRY_API = ("docker-distribution-api-version", "registry/2.0")
START_TIMEOUT = 20.0
STOP_TIMEOUT = 10.0
KILL_WAIT = 5.0
LOG_ROTATE_BYTES = 10 << 20
LOG_TAIL = 20


def answers(port: int, timeout: float = 2.0) -> bool:
    """Whether a distribution registry answers ``GET /v2/`` on 127.0.0.1:port."""
    import http.client  # here: every image build imports this module, few ask

    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        conn.request("GET", "/v2/")
        response = conn.getresponse()
        response.read()
        return response.getheader(REGISTRY_API[0], "") == REGISTRY_API[1]
    except (OSError, http.client.HTTPException):
        return False
    finally:
        conn.close()


def first_free(ports: range) -> int | None:
    """The first port of ``ports`` that 127.0.0.1 can bind now, or None."""
    return next((port for port in ports if daemon.port_free(port)), None)


@dataclass(frozen=True)
class Registry:
    """One registry's files, and how it is named in messages and errors.

    ``what`` names it in messages ("the staging registry"); ``owner`` is the
    tool that writes its config; ``error`` is the exception its owner raises.
    Its storage is ``data/`` beside the config.
    """

    what: str
    owner: str
    config: Path
    pid_file: Path
    port_file: Path
    log: Path
    error: Callable[[str], Exception]

    @property
    def data(self) -> Path:
        return self.config.parent / "data"

    def pid(self) -> int | None:
        """The pid of the running registry (alive, started with this config), else None."""
        return daemon.running(self.pid_file, self.config)

    def recorded_port(self) -> int | None:
        """The port of the last start (the port file), running or not."""
        return daemon.read_int(self.port_file)

    def answering(self) -> int | None:
        """The port of this registry when it runs and answers there, else None."""
        port = self.recorded_port()
        return port if port and self.pid() and answers(port) else None

    def serving(self) -> int | None:
        """``answering()``, for a caller about to use it: its log is kept bounded meanwhile
        (a registry may run for weeks)."""
        port = self.answering()
        if port:
            self.trim_log()
        return port

    def write_config(self, port: int) -> None:
        """The config for 127.0.0.1:``port``, with a new HTTP secret (hence 0600)."""
        config = "\n".join(
            [
                f"# written by {self.owner} on every start: edits are lost",
                "version: 0.1",
                "log:",
                "  level: warn",
                "  accesslog: {disabled: true}",
                "storage:",
                f"  filesystem: {{rootdirectory: {self.data}}}",
                "  delete: {enabled: true}",
                "  maintenance:",
                "    uploadpurging: {enabled: true, age: 24h, interval: 6h, dryrun: false}",
                "http:",
                f"  addr: 127.0.0.1:{port}",
                f"  secret: {secrets.token_hex(16)}",
                "",
            ]
        )
        places.write_atomic(self.config, config, 0o600)

    def start(self, argv: list[str], port: int, *, env: dict[str, str] | None = None) -> int:
        """Start ``argv serve CONFIG`` on 127.0.0.1:``port``, detached, and wait until it
        answers; its pid. Raises ``error`` with its log's last lines when it cannot be
        launched, exits at start or does not answer in time; then nothing is left running.
        """
        self.data.mkdir(parents=True, exist_ok=True)
        self.write_config(port)
        self.port_file.write_text(f"{port}\n")
        self.trim_log()
        try:
            pid = daemon.spawn([*argv, "serve", str(self.config)], self.log, env=env)
        except OSError as e:
            raise self.error(f"{e}; see {self.log}") from None
        self.pid_file.write_text(f"{pid}\n")
        try:
            died = daemon.wait_ready(
                lambda: answers(port),
                lambda: None if daemon.alive(pid) else "exited",
                time.monotonic() + START_TIMEOUT,
            )
        except TimeoutError:
            self._terminate(pid)
            self.pid_file.unlink(missing_ok=True)
            raise self.error(
                f"{self.what} did not answer on 127.0.0.1:{port} within"
                f" {START_TIMEOUT:.0f} s; see its log ({self.log}):\n{self.tail()}"
            ) from None
        if died:
            self.pid_file.unlink(missing_ok=True)
            raise self.error(
                f"{self.what} exited at start (port {port});"
                f" fix what its log says ({self.log}):\n{self.tail()}"
            )
        return pid

    def stop(self) -> int | None:
        """Stop it (SIGTERM, then SIGKILL after a timeout); the pid it had, or None."""
        pid = self.pid()
        if pid:
            self._terminate(pid)
        self.pid_file.unlink(missing_ok=True)
        return pid

    def trim_log(self) -> None:
        """Keep the log bounded: past the limit, move its text to <log>.1 and empty it.

        The registry appends (O_APPEND), so truncating in place is safe while it runs.
        """
        with contextlib.suppress(OSError):
            if self.log.stat().st_size > LOG_ROTATE_BYTES:
                shutil.copyfile(self.log, self.log.with_suffix(".log.1"))
                os.truncate(self.log, 0)

    def tail(self) -> str:
        return daemon.tail(self.log, LOG_TAIL)

    def _terminate(self, pid: int) -> None:
        daemon.terminate(
            pid, STOP_TIMEOUT, kill_wait=KILL_WAIT, error=self.error, what="registry pid"
        )
