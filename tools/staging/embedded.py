"""The embedded staging registry: Debian's docker-registry on 127.0.0.1, one per user.

State lives in ``$ROCM_PYTORCH_STAGING_DIR``, else ``<cache dir>/staging``
(tools/places.py: ``$XDG_CACHE_HOME/rocm-pytorch-images``, else
``$HOME/.cache/rocm-pytorch-images``; the account's home where Bazel took
HOME away, in actions and tests)::

    data/          the registry's storage (filesystem driver, deletes enabled)
    config.yml     written on every start
    registry.log   the registry's output (warnings and errors)
    port           the port, chosen once and reused on every restart
    pid            the running registry's pid
    lock           serialises start/stop/gc across processes (fcntl)

The port is part of every embedded descriptor, so it never changes by
itself: the first start takes ``$ROCM_PYTORCH_STAGING_PORT``, else the first
free port of 5480-5579, and records it. ``$ROCM_PYTORCH_STAGING_PORT`` also
moves a stopped registry to another port.

The registry is started detached (tools/process/registryd.py, tools/process/daemon.py: own
session, nobody's child, stdio to the log), so it outlives the command that
started it;
``stop`` ends it. Inside a Bazel action or test nothing outlives the spawn
(see tools/process/daemon.py): a registry a build starts there ends with that action,
and the next one that needs it starts it again. ``bazel run //tools/staging
-- start`` keeps one running for every build.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from tools import envvars, places
from tools.process import daemon, registryd
from tools.staging.errors import StagingError

DEFAULT_PORT = 5480
LAST_PORT = 5579
PORT_ENV = "ROCM_PYTORCH_STAGING_PORT"
DIR_ENV = "ROCM_PYTORCH_STAGING_DIR"
BIN_ENV = "ROCM_PYTORCH_REGISTRY_BIN"
PORT_RELEASE_WAIT = 3.0
LOG_TAIL = 20


@dataclass(frozen=True)
class Paths:
    root: Path

    @property
    def data(self) -> Path:
        return self.root / "data"

    @property
    def config(self) -> Path:
        return self.root / "config.yml"

    @property
    def log(self) -> Path:
        return self.root / "registry.log"

    @property
    def port(self) -> Path:
        return self.root / "port"

    @property
    def pid(self) -> Path:
        return self.root / "pid"

    @property
    def lock(self) -> Path:
        return self.root / "lock"

    @property
    def repositories(self) -> Path:
        return self.data / "docker/registry/v2/repositories"

    @property
    def instance(self) -> Path:
        return self.root / "instance"

    @property
    def registry(self) -> registryd.Registry:
        """The registry process these files belong to (start, probe, stop)."""
        return registryd.Registry(
            what="the staging registry",
            owner="tools/staging",
            config=self.config,
            pid_file=self.pid,
            port_file=self.port,
            log=self.log,
            error=StagingError,
        )


def instance_id(p: Paths | None = None) -> str:
    """This state dir's identity (made once, kept): descriptors record it, so a push can tell
    the embedded registry an image was built into (perhaps moved to another port) from
    another checkout's or state dir's."""
    p = p or paths()
    try:
        return p.instance.read_text().strip()
    except FileNotFoundError:
        places.write_atomic(p.instance, secrets.token_hex(8) + "\n")
        return p.instance.read_text().strip()


def state_dir() -> Path:
    """$ROCM_PYTORCH_STAGING_DIR, else <cache dir>/staging (tools/places.py)."""
    return places.state_dir(DIR_ENV, "staging")


def paths() -> Paths:
    return Paths(state_dir())


def locked(p: Paths, waiting: str = "") -> contextlib.AbstractContextManager[None]:
    """Hold the state dir's lock (blocking): one start/stop/gc at a time (``waiting``: said
    on stderr if it must wait)."""
    return daemon.locked(p.lock, waiting)


# -- public API ----------------------------------------------------------------


def ensure_running() -> int:
    """Start the embedded registry unless it runs and answers; return its port.

    Idempotent and safe to call from many processes at once.
    """
    p = paths()
    check_port(p)
    return daemon.start_once(p.lock, p.registry.serving, lambda: _start_scoped(p))


def check_port(p: Paths | None = None) -> None:
    """``StagingError`` when ``$ROCM_PYTORCH_STAGING_PORT`` names another port than the one
    the running registry of this state dir answers on: the setting moves a stopped
    registry only, and a build must not quietly use the other port."""
    p = p or paths()
    wanted, recorded = _env_port(), daemon.read_int(p.port)
    if not wanted or not recorded or wanted == recorded or not p.registry.answering():
        return
    raise StagingError(
        f"{PORT_ENV}={wanted}, but the staging registry of {p.root} runs on"
        f" 127.0.0.1:{recorded}: stop it (`python3 -m tools.staging stop`) to move it to"
        f" {wanted}, or unset {PORT_ENV} (or set it to {recorded})"
    )


def _start_scoped(p: Paths) -> int:
    """Start it; inside a Bazel action, test or persistent worker, say when it ends."""
    port = _start_fresh(p)
    if daemon.in_persistent_worker():
        until = (
            "for this Bazel worker only: it ends with the worker (`bazel shutdown`, a changed"
            " tool, Bazel's memory limit), and the next build starts it again"
        )
    elif daemon.in_bazel_spawn():
        until = (
            "for this Bazel action or test only: Bazel ends it with the action, and the next"
            " build starts it again"
        )
    else:
        return port
    print(
        f"staging: started the embedded registry (127.0.0.1:{port}) {until};"
        " `bazel run //tools/staging -- start` keeps it running for every build",
        file=sys.stderr,
        flush=True,
    )
    return port


def current_port() -> int:
    """The port the registry has or will take, without starting anything."""
    p = paths()
    return daemon.read_int(p.port) or _env_port() or DEFAULT_PORT


def stop() -> int | None:
    """Stop the registry (TERM, then KILL after a timeout); the pid it had, or None."""
    p = paths()
    with locked(p):
        return p.registry.stop()


def status() -> dict:
    """What the embedded registry is doing and holds (reads files; starts nothing)."""
    p = paths()
    pid, port = p.registry.pid(), daemon.read_int(p.port)
    running = bool(pid and port and registryd.answers(port))
    repos = list_repositories(p)
    return {
        "registry": f"127.0.0.1:{port or current_port()}/staging",
        "embedded": True,
        "running": running,
        "pid": pid if running else None,
        "port": port,
        "state_dir": str(p.root),
        "storage_bytes": storage_bytes(p),
        "repositories": len(repos),
        "tags": sum(len(list_tags(p, r)) for r in repos),
        "log": str(p.log),
    }


NO_SPACE = "no space left on device"


def log_offset(p: Paths | None = None) -> int:
    """Where the registry's log ends now (``out_of_space`` reads what follows)."""
    try:
        return (p or paths()).log.stat().st_size
    except OSError:
        return 0


def out_of_space(since: int, p: Paths | None = None) -> str | None:
    """One line, if the registry logged a full disk after offset ``since``: the registry
    answers a client only `blob upload invalid` or HTTP 500, and says why in its log."""
    p = p or paths()
    try:
        with p.log.open("rb") as f:
            if f.seek(0, os.SEEK_END) >= since:  # else rotated meanwhile: read it all
                f.seek(since)
            else:
                f.seek(0)
            text = f.read().decode(errors="replace")
    except OSError:
        return None
    if NO_SPACE not in text:
        return None
    port = daemon.read_int(p.port)
    return (
        f"the embedded staging registry (127.0.0.1:{port}) is out of disk: its log says"
        f" '{NO_SPACE}' ({p.log}; storage {p.data}); free space with `bazel run"
        " //tools/staging -- gc` (`--dry-run` first shows what goes), or on that file"
        " system, then build again"
    )


def collect_garbage(p: Paths, *, delete_untagged: bool) -> None:
    """Reclaim disk: stop, `docker-registry garbage-collect`, start again (same port).

    The caller holds ``locked(p)`` throughout (gc.run), so builds that call
    ``ensure_running`` or take a lease wait instead of restarting the registry
    under the collector; and it checked that no build holds a lease.
    """
    if not daemon.read_int(p.port) or not p.data.is_dir():
        return  # never started: nothing to collect
    cmd = [*registry_argv(), "garbage-collect", str(p.config)]
    p.registry.stop()
    p.registry.write_config(daemon.read_int(p.port))
    if delete_untagged:
        cmd.insert(len(cmd) - 1, "--delete-untagged")
    proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        tail = (proc.stdout + proc.stderr).splitlines()[-LOG_TAIL:]
        raise StagingError(
            f"`{' '.join(cmd)}` failed (exit {proc.returncode}); the registry is"
            " stopped (the next build or `start` starts it); its output:\n" + "\n".join(tail)
        )
    _start_fresh(p, move=False)  # stopped above: nothing answers


def registry_argv() -> list[str]:
    """How to run docker-registry: $ROCM_PYTORCH_REGISTRY_BIN, else the one on PATH, else
    /usr/bin's, else the bootstrap's sid tree's through its runner (rocm-pytorch-sid-run),
    which the host's Python (`python3 -m tools.staging gc`) finds as builds do."""
    configured = os.environ.get(BIN_ENV)
    if configured:
        if not os.access(configured, os.X_OK):
            raise StagingError(
                f"{BIN_ENV}={configured} is not an executable file; point it at"
                " docker-registry or unset it"
            )
        return [configured]
    found = shutil.which("docker-registry")
    if found:
        return [found]
    if os.access("/usr/bin/docker-registry", os.X_OK):
        return ["/usr/bin/docker-registry"]
    from tools.engine import binaries  # the sid tree and its runner

    argv = binaries.tool("docker-registry", "/usr/bin/docker-registry")
    if argv:
        return argv
    raise StagingError(
        "docker-registry not found (not in $" + BIN_ENV + ", on PATH, at"
        " /usr/bin/docker-registry or in the bootstrap's sid tree): run `tools/bootstrap.sh`"
        f" (as root or with sudo), which puts it there, or set {BIN_ENV} to a docker-registry"
    )


# -- storage, read from the filesystem ----------------------------------------


def storage_bytes(p: Paths) -> int:
    total = 0
    for root, _dirs, files in os.walk(p.data):
        for name in files:
            with contextlib.suppress(OSError):
                total += os.lstat(os.path.join(root, name)).st_size
    return total


def list_repositories(p: Paths) -> list[str]:
    """Repository names (e.g. `staging/pytorch`) in the storage tree."""
    if not p.repositories.is_dir():
        return []
    out = []
    for root, dirs, _files in os.walk(p.repositories):
        if "_manifests" in dirs:
            out.append(os.path.relpath(root, p.repositories))
        dirs[:] = [d for d in dirs if not d.startswith("_")]
    return sorted(out)


def list_tags(p: Paths, repository: str) -> dict[str, tuple[str, float]]:
    """tag -> (manifest digest, mtime of its `current/link`) for one repository."""
    tags_dir = p.repositories / repository / "_manifests/tags"
    out = {}
    for link in sorted(tags_dir.glob("*/current/link")):
        with contextlib.suppress(OSError):
            out[link.parent.parent.name] = (link.read_text().strip(), link.stat().st_mtime)
    return out


# -- lifecycle (callers hold the lock) ----------------------------------------


def _start_fresh(p: Paths, *, move: bool = True) -> int:
    """Start it, ending a wedged one first; ``move``: it may take $ROCM_PYTORCH_STAGING_PORT."""
    p.registry.stop()  # ours but not answering: wedged
    port, scanned = _choose_port(p, move=move)
    argv = registry_argv()
    while True:
        try:
            p.registry.start(argv, port)
            return port
        except StagingError:
            # A scanned port another user's staging took between our check and
            # the registry's bind: take the next free one.
            if not scanned or daemon.port_free(port):
                raise
            port = _first_free(port + 1)


def _choose_port(p: Paths, *, move: bool = True) -> tuple[int, bool]:
    """(port, scanned): $ROCM_PYTORCH_STAGING_PORT (when ``move``), else the recorded
    port, else the first free one from DEFAULT_PORT."""
    env, recorded = (_env_port() if move else None), daemon.read_int(p.port)
    port = env or recorded
    if port:
        if not daemon.port_free(port, wait=PORT_RELEASE_WAIT):
            raise StagingError(_taken(port, p, chosen_by_env=bool(env)))
        return port, False
    return _first_free(DEFAULT_PORT), True


def _first_free(start: int) -> int:
    port = registryd.first_free(range(start, LAST_PORT + 1))
    if port:
        return port
    raise StagingError(
        f"no free port in {DEFAULT_PORT}-{LAST_PORT} for the staging registry;"
        f" set {PORT_ENV} to a free port"
    )


def _taken(port: int, p: Paths, *, chosen_by_env: bool) -> str:
    why = f"${PORT_ENV}" if chosen_by_env else f"recorded in {p.port}"
    holder = _port_holder(port)
    return (
        f"staging port {port} ({why}) is taken by {holder}; end that process, or move"
        f" staging: `bazel run //tools/staging -- stop`, then set {PORT_ENV} to a free port"
        " and run `bazel run //tools/staging -- start` (it records the new port;"
        " images built before name the old one and need a rebuild)"
    )


def _env_port() -> int | None:
    return envvars.port(PORT_ENV, error=StagingError)


# -- processes and ports ---------------------------------------------------------


def _port_holder(port: int) -> str:
    """Who listens on ``port``: `pid N (cmd)` when /proc tells, else a description."""
    holder = daemon.port_holder(port)
    if holder:
        return holder
    if registryd.answers(port):
        return "a Docker registry that is not this staging's"
    return "another process (not visible to this user)"
