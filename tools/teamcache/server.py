"""The team cache server: Debian's nginx on 127.0.0.1, WebDAV over one data dir.

State lives in ``$ROCM_PYTORCH_TEAMCACHE_DIR``, else ``<cache dir>/teamcache``
(tools/places.py: ``$XDG_CACHE_HOME/rocm-pytorch-images``, else
``$HOME/.cache/rocm-pytorch-images``)::

    data/          what it serves: ac/ and cas/ (Bazel), sccache/, ccache/
    nginx.conf     written on every start (nginx.conf.template beside this file)
    error.log      nginx's errors and its output at start
    access.log     one line per request: method, path, status, request bytes
    tmp/           nginx's upload buffers
    port           the port, chosen on the first start and kept
    nginx.pid      the running nginx's pid (nginx writes it)
    lock           one start or stop at a time (fcntl)

The port is in every build host's settings, so it does not move by itself:
``$ROCM_PYTORCH_TEAMCACHE_PORT``, else the recorded one, else 5380; a port
another process holds stops the start in one line naming that process.

nginx is ``$ROCM_PYTORCH_TEAMCACHE_NGINX``, else nginx on PATH or in /usr/sbin
(inside ``bazel``: the sid tree's), else the sid tree's through
``rocm-pytorch-sid-run`` (tools/bootstrap.sh installs both). It runs detached
(tools/process/daemon.py: own session, nobody's child), so it outlives the command
that started it; ``stop`` ends it, and only it: a pid counts as ours while its
command line names this state dir's nginx.conf.
"""

from __future__ import annotations

import contextlib
import http.client
import os
import shutil
import string
import time
from dataclasses import dataclass
from pathlib import Path

from tools import envvars, places
from tools.engine import binaries
from tools.process import daemon

DIR_ENV = "ROCM_PYTORCH_TEAMCACHE_DIR"
PORT_ENV = "ROCM_PYTORCH_TEAMCACHE_PORT"
NGINX_ENV = "ROCM_PYTORCH_TEAMCACHE_NGINX"
DEFAULT_PORT = 5380
TREE_NGINX = "/usr/sbin/nginx"
TEMPLATE = Path(__file__).resolve().parent / "nginx.conf.template"
SECTIONS = ("ac", "cas", "sccache", "ccache")  # the served dirs, made at start
START_TIMEOUT = 20.0
STOP_TIMEOUT = 10.0
PORT_RELEASE_WAIT = 3.0
LOG_ROTATE_BYTES = 10 << 20
LOG_TAIL = 15
INSTALL = (
    "run tools/bootstrap.sh (its sid tree has Debian's nginx), or `apt-get install nginx`,"
    f" or set {NGINX_ENV} to an nginx binary"
)


class TeamCacheError(Exception):
    """A problem the user fixes: one line naming the bad input and the fix."""


@dataclass(frozen=True)
class Paths:
    root: Path

    @property
    def data(self) -> Path:
        return self.root / "data"

    @property
    def conf(self) -> Path:
        return self.root / "nginx.conf"

    @property
    def error_log(self) -> Path:
        return self.root / "error.log"

    @property
    def access_log(self) -> Path:
        return self.root / "access.log"

    @property
    def tmp(self) -> Path:
        return self.root / "tmp"

    @property
    def port(self) -> Path:
        return self.root / "port"

    @property
    def pid(self) -> Path:
        return self.root / "nginx.pid"

    @property
    def lock(self) -> Path:
        return self.root / "lock"


@dataclass(frozen=True)
class Running:
    """A team cache that answers: its port and pid, and whether this call started it."""

    port: int
    pid: int
    started: bool

    @property
    def url(self) -> str:
        return url(self.port)


def url(port: int) -> str:
    return f"http://127.0.0.1:{port}"


def state_dir() -> Path:
    """$ROCM_PYTORCH_TEAMCACHE_DIR (absolute), else <cache dir>/teamcache; SettingError for a
    relative one (tools/places.py)."""
    return places.state_dir(DIR_ENV, "teamcache")


def paths() -> Paths:
    return Paths(state_dir())


# -- public API ------------------------------------------------------------------------


def start(p: Paths | None = None, port: int | None = None) -> Running:
    """Start the team cache unless it runs and answers; idempotent, safe from many processes.

    ``port`` (else ``$ROCM_PYTORCH_TEAMCACHE_PORT``, else the recorded port, else 5380) is
    where a new one listens; a running one keeps its port.
    """
    p = p or paths()
    writable(p)
    with daemon.locked(p.lock):
        found = answering(p)
        if found:
            trim_logs(p)
            return found
        return _start(p, port)


def stop(p: Paths | None = None) -> int | None:
    """Stop it (SIGTERM, then SIGKILL); the pid it had, or None when it was not running."""
    p = p or paths()
    if not p.root.is_dir():
        return None
    with daemon.locked(p.lock):
        pid = running_pid(p)
        if pid:
            daemon.terminate(pid, STOP_TIMEOUT, error=TeamCacheError, what="nginx pid")
        p.pid.unlink(missing_ok=True)
        return pid


def status(p: Paths | None = None) -> dict:
    """What it is doing and holds (reads files; starts nothing)."""
    p = p or paths()
    pid, port = running_pid(p), recorded_port(p)
    up = bool(pid and port and answers(port))
    if up:
        trim_logs(p)
    return {
        "url": url(port or env_port() or DEFAULT_PORT),
        "running": up,
        "pid": pid if up else None,
        "port": port,
        "dir": str(p.root),
        "data_bytes": data_bytes(p),
        "log": str(p.error_log),
        "access_log": str(p.access_log),
    }


def answering(p: Paths) -> Running | None:
    """The running team cache of ``p`` when it answers, else None."""
    pid, port = running_pid(p), recorded_port(p)
    if pid and port and answers(port):
        return Running(port, pid, started=False)
    return None


def running_pid(p: Paths) -> int | None:
    """The pid of this state dir's nginx master (alive, started with its nginx.conf)."""
    pid = daemon.read_int(p.pid)
    return pid if pid and ours(pid, p.conf) else None


def ours(pid: int, conf: Path) -> bool:
    """``pid`` is alive and its command line names ``conf``. nginx rewrites its title
    ("nginx: master process /usr/sbin/nginx -c CONF"): one string, so look inside it."""
    if not daemon.alive(pid):
        return False
    try:
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return False
    return str(conf).encode() in cmdline


def recorded_port(p: Paths) -> int | None:
    return daemon.read_int(p.port)


def env_port() -> int | None:
    return envvars.port(PORT_ENV, error=TeamCacheError)


def answers(port: int, timeout: float = 2.0) -> bool:
    """Whether this team cache answers on 127.0.0.1:port (its probe answer, 200, on /)."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        conn.request("GET", "/")
        response = conn.getresponse()
        body = response.read(200)
        return response.status == 200 and body.startswith(b"rocm-pytorch team cache")
    except (OSError, http.client.HTTPException):
        return False
    finally:
        conn.close()


def data_bytes(p: Paths) -> int:
    total = 0
    for root, _dirs, files in os.walk(p.data):
        for name in files:
            with contextlib.suppress(OSError):
                total += os.lstat(os.path.join(root, name)).st_size
    return total


def tail(p: Paths) -> str:
    return daemon.tail(p.error_log, LOG_TAIL)


def trim_logs(p: Paths) -> None:
    """Keep the logs bounded: past 10 MiB, move a log's text to <log>.1 and empty it
    (nginx appends, O_APPEND, so truncating in place is safe while it runs)."""
    for log in (p.access_log, p.error_log):
        with contextlib.suppress(OSError):
            if log.stat().st_size > LOG_ROTATE_BYTES:
                shutil.copyfile(log, log.with_name(log.name + ".1"))
                os.truncate(log, 0)


# -- checks -----------------------------------------------------------------------------


def writable(p: Paths) -> None:
    """The state dir can be made and written, else TeamCacheError naming it and the fix."""
    probe = p.root / f".write-test.{os.getpid()}"
    try:
        p.root.mkdir(parents=True, exist_ok=True)
        probe.write_text("")
        probe.unlink()
    except OSError as e:
        raise TeamCacheError(
            f"cannot write the team cache dir {p.root} ({e.strerror or e}); make it a dir you"
            f" can write, or set {DIR_ENV} to the absolute path of one"
        ) from None


def nginx_argv() -> list[str]:
    """How to run nginx: $ROCM_PYTORCH_TEAMCACHE_NGINX, the host's, else the sid tree's."""
    configured = os.environ.get(NGINX_ENV, "").strip()
    if configured:
        if not (os.path.isfile(configured) and os.access(configured, os.X_OK)):
            raise TeamCacheError(
                f"{NGINX_ENV}={configured} is not an executable file; point it at nginx or unset it"
            )
        return [configured]
    argv = binaries.tool("nginx", TREE_NGINX)
    if argv is None:
        raise TeamCacheError(
            f"nginx not found (not on PATH, in /usr/sbin, nor in the sid tree); {INSTALL}"
        )
    return argv


def choose_port(p: Paths, port: int | None) -> tuple[int, str]:
    """(port, why): the argument, else $ROCM_PYTORCH_TEAMCACHE_PORT, else recorded, else 5380."""
    if port:
        return port, "asked for"
    env = env_port()
    if env:
        return env, f"${PORT_ENV}"
    recorded = recorded_port(p)
    if recorded:
        return recorded, f"recorded in {p.port}"
    return DEFAULT_PORT, "the default"


# -- starting ----------------------------------------------------------------------------


def render(p: Paths, port: int, *, as_root: bool) -> str:
    return string.Template(TEMPLATE.read_text()).substitute(
        conf=p.conf,
        data=p.data,
        tmp=p.tmp,
        pid=p.pid,
        error_log=p.error_log,
        access_log=p.access_log,
        port=port,
        user_line="user root;" if as_root else "",
    )


def _start(p: Paths, port: int | None) -> Running:
    """Start nginx (the caller holds the lock and found none answering)."""
    wedged = running_pid(p)
    if wedged:  # ours, but it does not answer
        daemon.terminate(wedged, STOP_TIMEOUT, error=TeamCacheError, what="nginx pid")
    argv = nginx_argv()
    port, why = choose_port(p, port)
    if not daemon.port_free(port, wait=PORT_RELEASE_WAIT):
        holder = daemon.port_holder(port) or "another process"
        raise TeamCacheError(
            f"team cache port {port} ({why}) is taken by {holder}; end that"
            f" process, or set {PORT_ENV} to a free port and start again (then give every"
            " build host the new URL: `python3 -m tools.teamcache settings`)"
        )
    for section in SECTIONS:
        (p.data / section).mkdir(parents=True, exist_ok=True)
    for sub in ("body", "proxy", "fastcgi", "uwsgi", "scgi"):
        (p.tmp / sub).mkdir(parents=True, exist_ok=True)
    # through the runner nginx runs as root (it sudo's when needed)
    as_root = os.geteuid() == 0 or argv[0].endswith(binaries.RUNNER)
    places.write_atomic(p.conf, render(p, port, as_root=as_root))
    trim_logs(p)
    p.pid.unlink(missing_ok=True)
    try:
        launched = daemon.spawn([*argv, "-c", str(p.conf)], p.error_log)
    except OSError as e:
        raise TeamCacheError(f"{e}; {INSTALL}") from None
    places.write_atomic(p.port, f"{port}\n")

    def exited() -> str | None:
        return None if daemon.alive(launched) or running_pid(p) else "exited"

    try:
        died = daemon.wait_ready(
            lambda: answers(port), exited, time.monotonic() + START_TIMEOUT, interval=0.1
        )
    except TimeoutError:
        stop_pid(p, launched)
        raise TeamCacheError(
            f"nginx did not answer on {url(port)} within {START_TIMEOUT:.0f} s; see its log"
            f" ({p.error_log}):\n{tail(p)}"
        ) from None
    if died:
        raise TeamCacheError(
            f"nginx exited at start (port {port}); fix what its log says ({p.error_log}):"
            f"\n{tail(p)}"
        )
    return Running(port, running_pid(p) or launched, started=True)


def stop_pid(p: Paths, launched: int) -> None:
    for pid in {running_pid(p), launched if daemon.alive(launched) else None} - {None}:
        with contextlib.suppress(TeamCacheError):
            daemon.terminate(pid, STOP_TIMEOUT, error=TeamCacheError, what="nginx pid")
