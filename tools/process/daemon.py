"""The long-running processes of the tools: pid files, start once, stop.

tools/engine (the private Docker engine) and tools/process/registryd.py (the
engine's loopback registry and the embedded staging registry) run their
daemons the same way, and this module is that way:

- state in ``$<ENV>``, else ``<home>/.cache/rocm-pytorch-images/<name>``
  (tools/places.py: ``state_dir``);
- one start or stop at a time across processes, and a daemon that already
  answers is shared, not started again: ``locked``, ``start_once``;
- started detached, nobody's child, in its own session, stdin from
  /dev/null and its output appended to its log: ``spawn`` (one process, its
  pid), ``run_detached`` (a launcher whose children outlive it);
- a pid file names the daemon only while that process is alive and its
  command line names the daemon's config (a recycled pid is not ours):
  ``ours``, ``running``; waiting for it to answer or die at start:
  ``wait_ready``; SIGTERM, then SIGKILL: ``terminate``;
- loopback ports: ``free_port``, ``port_free`` (a registry's probe is
  tools/process/registryd.py's).

Inside a Bazel action or test no process outlives the spawn, however it is
detached: Bazel's process-wrapper (Bazel 7.7.1, process-wrapper-legacy.cc)
makes itself a child subreaper (``prctl(PR_SET_CHILD_SUBREAPER)``), so every
orphaned descendant is re-parented to it rather than to init, and when the
spawn's main process exits it SIGKILLs and reaps its children
(``/proc/thread-self/children``) until none is left. A double fork, a new
session (``setsid``) or process group and closed file descriptors change
nothing; linux-sandbox ends the spawn's PID namespace. ``in_bazel_spawn``
tells the callers, so they can scope what they start to the spawn.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TypeVar

from tools.process import worker

T = TypeVar("T")

SPAWN_WRAPPERS = (b"process-wrapper", b"linux-sandbox")  # Bazel's; they kill orphans

# Runs the daemon and exits, so the daemon is nobody's child (no zombie when it
# ends, no ResourceWarning in the caller) and leads its own session.
_LAUNCHER = """
import subprocess, sys
log = open(sys.argv[1], "ab")
p = subprocess.Popen(sys.argv[2:], stdin=subprocess.DEVNULL, stdout=log,
                     stderr=subprocess.STDOUT, start_new_session=True, close_fds=True)
print(p.pid)
"""


@contextlib.contextmanager
def locked(lock: Path, waiting: str = "") -> Iterator[None]:
    """Hold ``lock`` (an fcntl lock on that file, blocking): one start or stop at a time.

    ``waiting``, when given, goes to stderr if another process holds it now.
    Not re-entrant: a process that holds it must not take it again.
    """
    lock.parent.mkdir(parents=True, exist_ok=True)
    with lock.open("a") as f:
        try:
            fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            if waiting:
                print(waiting, file=sys.stderr, flush=True)
            fcntl.flock(f, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


def start_once(lock: Path, answering: Callable[[], T | None], start: Callable[[], T]) -> T:
    """What ``answering()`` gives when the daemon runs, else ``start()``, under ``lock``.

    Concurrent callers wait for one start and share the daemon it started.
    """
    with locked(lock):
        found = answering()
        return found if found is not None else start()


# -- starting -------------------------------------------------------------------------


def spawn(argv: list[str], log: Path, *, env: dict[str, str] | None = None) -> int:
    """Start ``argv`` detached (own session, nobody's child, cwd /, stdin /dev/null, output
    appended to ``log``); its pid. Raises OSError when it cannot be launched."""
    log.parent.mkdir(parents=True, exist_ok=True)
    try:
        out = subprocess.run(
            [sys.executable, "-I", "-c", _LAUNCHER, str(log), *argv],
            capture_output=True,
            text=True,
            env=env,
            cwd="/",
            timeout=30,
            check=False,
        )
    except subprocess.TimeoutExpired:
        raise OSError(f"could not launch {argv[0]}: the launcher did not return") from None
    if out.returncode != 0 or not out.stdout.strip().isdigit():
        why = (out.stderr.strip().splitlines() or ["no output"])[-1]
        raise OSError(f"could not launch {argv[0]}: {why}")
    pid = int(out.stdout)
    _await_exec(pid)
    return pid


def _await_exec(pid: int, within: float = 5.0) -> None:
    """Wait until ``pid`` shows its new command line. The launcher learns of the exec when
    the kernel closes its close-on-exec pipe, which happens before the new program's
    arguments are in place: for that moment /proc/PID/cmdline is empty, and ``ours``
    would call a daemon that has just started someone else's (seen on a loaded host)."""
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        try:
            if Path(f"/proc/{pid}/cmdline").read_bytes() or not alive(pid):
                return  # started, or gone already (its caller finds out by its own checks)
        except OSError:
            return
        time.sleep(0.01)


def run_detached(argv: list[str], log: Path, *, env: dict[str, str], timeout: float) -> int:
    """Run a launcher (``argv``) in its own session, cwd /, stdin /dev/null, output appended
    to ``log``, and wait for it: what it starts in the background outlives it. Its exit
    status; OSError when it cannot run or does not end within ``timeout``."""
    log.parent.mkdir(parents=True, exist_ok=True)
    with log.open("ab") as out:
        try:
            return subprocess.run(
                argv,
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=subprocess.STDOUT,
                start_new_session=True,
                close_fds=True,
                env=env,
                cwd="/",
                timeout=timeout,
                check=False,
            ).returncode
        except subprocess.TimeoutExpired as e:
            raise OSError(f"could not launch {argv[0]}: {e}") from None


def wait_ready(
    ready: Callable[[], bool],
    exited: Callable[[], str | None],
    deadline: float,
    *,
    interval: float = 0.05,
) -> str | None:
    """Poll until ``ready()``: None then; what ``exited()`` says (a daemon died at start) as
    soon as it says something. TimeoutError past ``deadline`` (time.monotonic())."""
    while True:
        died = exited()
        if died:
            return died
        if ready():
            return None
        if time.monotonic() > deadline:
            raise TimeoutError
        time.sleep(interval)


def serve(
    argv: list[str],
    log: Path,
    recorded: tuple[Path, Path],
    port: int,
    ready: Callable[[], bool],
    *,
    env: dict[str, str] | None = None,
    timeout: float = 20.0,
) -> str | None:
    """Start the server ``argv`` on ``port`` (``spawn``), write its pid and port to
    ``recorded`` (pid file, port file) and wait for ``ready()``: None then, else why not
    (it exited, or did not answer within ``timeout`` seconds)."""
    from tools import places

    pid = spawn(argv, log, env=env)
    places.write_atomic(recorded[0], f"{pid}\n")
    places.write_atomic(recorded[1], f"{port}\n")
    try:
        return wait_ready(
            ready, lambda: None if alive(pid) else "exited", time.monotonic() + timeout
        )
    except TimeoutError:
        return f"did not answer within {timeout:.0f} s"


def answering(
    recorded: tuple[Path, Path], config: Path, serves: Callable[[int], bool]
) -> int | None:
    """The port of the server whose pid and port ``recorded`` holds, if it is still ours
    (started with ``config``) and ``serves(port)``; else None."""
    pid, port = read_int(recorded[0]), read_int(recorded[1])
    if pid and port and ours(pid, config) and serves(port):
        return port
    return None


def in_persistent_worker() -> bool:
    """Whether this is a persistent worker of Bazel's (tools/process/worker.py): what it starts
    lives as long as the worker, not as one action."""
    return os.environ.get(worker.ENV) == "1"


def in_bazel_spawn() -> bool:
    """Whether an ancestor is Bazel's process-wrapper or linux-sandbox (a build action or a
    test): they kill every process left over when the spawn ends (see the module doc); or
    this is a persistent worker (tools/process/worker.py), which Bazel ends itself."""
    if in_persistent_worker():
        return True
    pid = os.getpid()
    for _ in range(64):
        try:
            ppid = int(Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[1])
            argv0 = Path(f"/proc/{ppid}/cmdline").read_bytes().split(b"\0", 1)[0]
        except (OSError, IndexError, ValueError):
            return False
        if os.path.basename(argv0) in SPAWN_WRAPPERS:
            return True
        if ppid <= 1:
            return False
        pid = ppid
    return False


# -- pid files and processes -----------------------------------------------------------


def read_int(path: Path) -> int | None:
    """The number in ``path`` (a pid or port file), or None."""
    try:
        text = path.read_text().strip()
    except OSError:
        return None
    return int(text) if text.isdigit() else None


def alive(pid: int) -> bool:
    """Whether ``pid`` runs. A zombie is dead once its other threads are gone (until then
    they hold its sockets and files)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[0]
        if state == "Z":
            return len(os.listdir(f"/proc/{pid}/task")) > 1
    except (OSError, IndexError):
        return False
    return state != "X"


def ours(pid: int, config: Path) -> bool:
    """``pid`` is alive and its command line names ``config`` (a recycled pid is not ours)."""
    if not alive(pid):
        return False
    try:
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    except OSError:
        return False
    return str(config).encode() in cmdline


def running(pid_file: Path, config: Path) -> int | None:
    """The pid in ``pid_file`` when that process is ours (see ``ours``), else None."""
    pid = read_int(pid_file)
    return pid if pid and ours(pid, config) else None


def terminate(
    pid: int,
    wait: float,
    *,
    kill_wait: float = 10.0,
    error: Callable[[str], Exception] = RuntimeError,
    what: str = "pid",
) -> None:
    """SIGTERM, ``wait`` seconds, then SIGKILL (at once when ``wait`` is 0), ``kill_wait``
    seconds; raises ``error`` when ``pid`` is still alive."""
    for sig, seconds in ((signal.SIGTERM, wait), (signal.SIGKILL, kill_wait)):
        if wait == 0 and sig == signal.SIGTERM:
            continue
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, sig)
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            if not alive(pid):
                return
            time.sleep(0.05)
    raise error(f"{what} {pid} does not exit after SIGKILL; end it by hand")


def tail(path: Path, n: int) -> str:
    """The last ``n`` lines of a log (each cut at 400 characters)."""
    try:
        lines = path.read_text(errors="replace").splitlines()[-n:]
    except OSError:
        return "(no log)"
    return "\n".join(line[:400] for line in lines) or "(empty)"


# -- loopback ports ----------------------------------------------------------------------


def free_port() -> int:
    """A loopback port free now (the kernel's pick), for a server a test or check starts."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def port_free(port: int, wait: float = 0.0) -> bool:
    """Whether 127.0.0.1:port can be bound, trying for ``wait`` seconds (a daemon that was
    just killed may hold its socket until its last thread is gone)."""
    deadline = time.monotonic() + wait
    while True:
        with socket.socket() as s:
            s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            try:
                s.bind(("127.0.0.1", port))
                return True
            except OSError:
                if time.monotonic() >= deadline:
                    return False
        time.sleep(0.05)


def port_holder(port: int) -> str | None:
    """Who listens on 127.0.0.1:``port``: `pid N (cmd)` when /proc tells, else None (a
    process of another user, or none)."""
    inodes = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        with contextlib.suppress(OSError):
            for line in Path(table).read_text().splitlines()[1:]:
                fields = line.split()
                if fields[3] == "0A" and int(fields[1].rsplit(":", 1)[1], 16) == port:
                    inodes.add(f"socket:[{fields[9]}]")
    for proc in Path("/proc").glob("[0-9]*"):
        with contextlib.suppress(OSError):
            for fd in (proc / "fd").iterdir():
                with contextlib.suppress(OSError):
                    if os.readlink(fd) in inodes:
                        cmd = (proc / "cmdline").read_bytes().replace(b"\0", b" ").strip()
                        return f"pid {proc.name} ({cmd.decode(errors='replace')[:120]})"
    return None
