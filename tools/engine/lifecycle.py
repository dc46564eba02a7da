"""The private engine's lifecycle: start, wait until it answers, stop; lasting or scoped.

The private engine is containerd + dockerd (containerd image store,
BuildKit), unix sockets only, ``--bridge=none --iptables=false``, started by
a launcher script in the binaries' namespace (through the sid tree's runner
when they are the tree's), detached: it outlives the command that started it.
A *lasting* engine lives in the state dir until ``stop``; a *scoped* one
(inside a Bazel action or test, where nothing outlives the spawn) lives in a
slot of ``<dir>/scoped/`` and ends with the process that started it. One
start at a time: callers hold the state dir's lock (tools/process/daemon.py).
"""

from __future__ import annotations

import atexit
import contextlib
import fcntl
import os
import re
import shlex
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

from tools import envvars, places
from tools.engine import binaries, ping
from tools.engine.binaries import Tools
from tools.engine.errors import EngineError
from tools.engine.state import DIR_ENV, Paths, host_socket
from tools.process import daemon

TIMEOUT_ENV = "ROCM_PYTORCH_ENGINE_START_TIMEOUT"
AUTOSTART_ENV = "ROCM_PYTORCH_ENGINE_AUTOSTART"
DOCKERD_ARGS_ENV = "ROCM_PYTORCH_DOCKERD_ARGS"
SCOPED_SLOTS = 16
START_TIMEOUT = 60.0
STOP_TIMEOUT = 30.0
LOG_TAIL = 25
# unix socket paths are at most 107 bytes; dockerd's longest is
# <exec-root>/libnetwork/<12 hex>.sock, and the exec root is <dir>/exec
SOCKET_SLACK = len("/exec/libnetwork/0123456789ab.sock")

Log = Callable[[str], None]


def ensure_private(p: Paths, log: Log) -> None:
    """Make the lasting private engine answer: started (once, under the lock) if it does not."""
    if ping.answers(p.host):  # the common case: running; no lock needed
        return
    check_start(p)  # before the lock, which writes the state dir

    def start() -> bool:
        tools = binaries.find_tools()
        stop_engine(p, log)  # leftovers of an engine that no longer answers
        if daemon.in_bazel_spawn():
            log("warning: inside a Bazel action or test this engine ends with it")
        _start_engine(p, tools, log)
        return True

    # another caller may have started it while we waited for the lock
    daemon.start_once(p.lock, lambda: ping.answers(p.host) or None, start)


# base dir -> (slot, its held lock): the scoped engine of this process
_SCOPED: dict[str, tuple[Paths, object]] = {}


def is_scoped_host(p: Paths, host: str) -> bool:
    return host.startswith(f"unix://{p.root}/scoped/")


def ensure_scoped(p: Paths, log: Log) -> Paths:
    """An engine for this process and its children, in a free slot; stopped at exit."""
    held = _SCOPED.get(str(p.root))
    if held and ping.answers(held[0].host):
        return held[0]
    check_start(p, extra=len("/scoped/99"))
    tools = binaries.find_tools()
    for n in range(SCOPED_SLOTS):
        slot = Paths(p.root / "scoped" / str(n))
        slot.root.mkdir(parents=True, exist_ok=True)
        f = (slot.root / "slot.lock").open("a")
        try:
            fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            f.close()
            continue
        break
    else:
        raise EngineError(
            f"all {SCOPED_SLOTS} scoped engine slots in {p.root / 'scoped'} are in use; start one"
            " engine for all of them: `python3 -m tools.engine start`"
        )
    t0 = time.monotonic()
    try:
        stop_engine(slot, lambda _m: None)  # leftovers of a spawn that was killed
        _start_engine(slot, tools, lambda _m: None)
    except BaseException:
        f.close()
        raise
    log(
        f"no Docker engine answers: started one for this Bazel action or test only"
        f" ({time.monotonic() - t0:.1f}s, {slot.root}); `python3 -m tools.engine start`"
        " keeps one running for all of them, which is faster"
    )
    _SCOPED[str(p.root)] = (slot, f)
    atexit.register(_stop_scoped, str(p.root))
    return slot


def _stop_scoped(key: str) -> None:
    slot, f = _SCOPED.pop(key, (None, None))
    if slot is not None:
        with contextlib.suppress(Exception):
            stop_engine(slot, lambda _m: None)
        f.close()  # type: ignore[attr-defined]


def start_timeout() -> float:
    """``$ROCM_PYTORCH_ENGINE_START_TIMEOUT`` seconds, else START_TIMEOUT (``EngineError``
    for a value that is not seconds > 0)."""
    return envvars.seconds(TIMEOUT_ENV, START_TIMEOUT, error=EngineError)


def check_start(p: Paths, extra: int = 0) -> None:
    """What a start needs before anything is written: autostart allowed, settings it can
    read, root, short paths."""
    start_timeout()
    if not envvars.switch(AUTOSTART_ENV, True, error=EngineError):
        given = os.environ.get("DOCKER_HOST", "").strip()
        raise EngineError(
            f"no Docker engine answers (DOCKER_HOST={given or '(unset)'}, nothing at"
            f" {host_socket()}, no private engine at {p.socket}) and"
            f" {AUTOSTART_ENV}={os.environ[AUTOSTART_ENV].strip()}"
            " forbids starting one: start an engine and point DOCKER_HOST at it, or unset"
            f" {AUTOSTART_ENV}"
        )
    _check_dir(p, extra)
    if os.geteuid() != 0:
        raise EngineError(
            f"no Docker engine answers (DOCKER_HOST unset or silent, nothing at"
            f" {host_socket()}) and the private engine runs dockerd as root: run this as"
            " root, or start Docker and point DOCKER_HOST at it"
        )


def _check_dir(p: Paths, extra: int = 0) -> None:
    limit = 107 - SOCKET_SLACK - extra
    if len(str(p.root)) > limit:
        raise EngineError(
            f"the engine's state dir {p.root} is {len(str(p.root))} characters long; unix"
            f" socket paths under it would pass 107 bytes: set {DIR_ENV} to a path of at"
            f" most {limit} characters"
        )


def _containerd_config(p: Paths, tools: Tools) -> str:
    proc = subprocess.run(
        tools.argv(tools.containerd, "--version"), capture_output=True, text=True, check=False
    )
    m = re.search(r"\sv?(\d+)\.\d+\.\d+", proc.stdout)
    v3 = bool(m and int(m.group(1)) >= 2)
    disabled = ["io.containerd.grpc.v1.cri", "io.containerd.internal.v1.opt"]
    if v3:
        disabled += [
            "io.containerd.cri.v1.images",
            "io.containerd.cri.v1.runtime",
            "io.containerd.podsandbox.controller.v1.podsandbox",
            "io.containerd.nri.v1.nri",
        ]
    return "\n".join(
        [
            "# written by tools/engine on every start",
            f"version = {3 if v3 else 2}",
            f"root = '{p.root / 'containerd' / 'data'}'",
            f"state = '{p.root / 'containerd' / 'run'}'",
            "disabled_plugins = [" + ", ".join(f"'{d}'" for d in disabled) + "]",
            "[grpc]",
            f"  address = '{p.containerd_socket}'",
            "[ttrpc]",
            f"  address = '{p.containerd_socket}.ttrpc'",
            "",
        ]
    )


# Runs in the tools' namespace (through the runner when the tree's): containerd,
# then dockerd once containerd's socket is up; they must share one mount
# namespace (dockerd mounts the snapshots that containerd's shims run). Its $0,
# LAUNCHER, and the state dir name its forks until they exec a daemon.
_LAUNCH_ENGINE = r"""
S=$1 T=$2 CONTAINERD=$3 DOCKERD=$4
shift 4
"$CONTAINERD" --config "$S/containerd.toml" </dev/null >>"$S/log/containerd.log" 2>&1 &
c=$!
echo "$c" >"$S/containerd.pid"
i=0
until [ -S "$S/containerd/containerd.sock" ]; do
  if ! kill -0 "$c" 2>/dev/null; then
    echo "containerd (pid $c) exited before its socket was up"
    exit 3
  fi
  i=$((i + 1))
  [ "$i" -le $((T * 10)) ] || { echo "containerd's socket did not appear within ${T}s"; exit 1; }
  sleep 0.1
done
"$DOCKERD" "$@" </dev/null >>"$S/log/dockerd.log" 2>&1 &
echo "$!" >"$S/dockerd.pid"
"""
LAUNCHER = "engine-launch"
DAEMONS = ("containerd", "dockerd")  # in the order they start
START_ATTEMPTS = 2


class _Exited(EngineError):
    """A daemon exited while the engine started: the next attempt may get further (a
    loaded machine), so the start is tried again before it fails."""


def launch_env() -> dict[str, str]:
    """The daemons' environment: ours without the client's Docker settings, a fixed PATH."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("DOCKER_", "BUILDX_"))}
    env["PATH"] = ":".join(binaries.SEARCH_DIRS)
    return env


def _launch(p: Paths, argv: list[str], timeout: float) -> None:
    """Run a launcher script detached (own session; its children outlive it and us)."""
    launch_log = p.log / "launch.log"
    try:
        code = daemon.run_detached(argv, launch_log, env=launch_env(), timeout=timeout + 15)
    except OSError as e:
        raise EngineError(f"could not launch {argv[0]}: {e}") from None
    if code == 3:
        raise _Exited(daemon.tail(launch_log, 1))
    if code != 0:
        raise EngineError(f"the launcher failed (exit {code}): {daemon.tail(launch_log, 5)}")


def _start_engine(p: Paths, tools: Tools, log: Log) -> None:
    """Start containerd and dockerd in ``p`` and wait until the engine answers.

    A daemon that exits while the engine starts (a loaded machine has seen
    containerd go a second after it booted) ends this attempt: what is left
    of it is stopped, the reason and the logs' last lines are said, and the
    start is tried again, START_ATTEMPTS times in all. A start that does not
    answer within the deadline is not tried again.
    """
    timeout = start_timeout()
    for d in ("containerd", "docker", "exec", "log"):
        (p.root / d).mkdir(parents=True, exist_ok=True)
    for name in DAEMONS:
        f = p.log / f"{name}.log"
        if f.exists():
            f.replace(p.log / f"{name}.log.1")
    places.put(p.containerd_toml, _containerd_config(p, tools))
    places.put(
        p.daemon_json,
        '{\n  "features": {"containerd-snapshotter": true},\n  "shutdown-timeout": 10\n}\n',
    )
    dockerd_args = [
        "--config-file", str(p.daemon_json),
        "--data-root", str(p.root / "docker"),
        "--exec-root", str(p.root / "exec"),
        "--pidfile", str(p.root / "exec" / "dockerd.pid"),
        "--host", p.host,
        "--containerd", str(p.containerd_socket),
        "--bridge=none", "--iptables=false", "--ip6tables=false",
        "--ip-forward=false", "--ip-masq=false",
        *shlex.split(os.environ.get(DOCKERD_ARGS_ENV, "")),
    ]  # fmt: skip
    log(f"starting the private Docker engine ({tools.where}; state in {p.root})")
    argv = tools.argv(
        "/bin/sh", "-c", _LAUNCH_ENGINE, LAUNCHER,
        str(p.root), str(int(timeout)), tools.containerd, tools.dockerd, *dockerd_args,
    )  # fmt: skip
    t0 = time.monotonic()
    earlier: list[str] = []
    for attempt in range(1, START_ATTEMPTS + 1):
        for f in (p.socket, p.containerd_socket, *(p.pid_file(n) for n in DAEMONS)):
            f.unlink(missing_ok=True)
        deadline = time.monotonic() + timeout
        try:
            _launch(p, argv, timeout)
            _wait_ready(p, deadline)
            break
        except EngineError as e:
            stop_engine(p, lambda _m: None)
            why = f"attempt {attempt} of {START_ATTEMPTS}: {e}"
            if isinstance(e, _Exited) and attempt < START_ATTEMPTS:
                log(f"the private Docker engine did not start ({why}); its logs:\n{_tails(p)}")
                log("starting it again")
                earlier.append(why)
                continue
            reasons = "; ".join([*earlier, why]) if earlier else str(e)
            raise EngineError(
                f"the private Docker engine did not start ({reasons}); the last lines of its"
                f" logs:\n{_tails(p)}"
            ) from None
    dockerd = daemon.read_int(p.pid_file("dockerd"))
    with (p.log / "starts.log").open("a") as f:
        f.write(
            f"{time.strftime('%Y-%m-%dT%H:%M:%S')} dockerd={dockerd}"
            f" containerd={daemon.read_int(p.pid_file('containerd'))} by pid {os.getpid()}\n"
        )
    log(f"private Docker engine ready in {time.monotonic() - t0:.1f}s: DOCKER_HOST={p.host}")


def _wait_ready(p: Paths, deadline: float) -> None:
    t0 = time.monotonic()
    pids = {name: daemon.read_int(p.pid_file(name)) for name in DAEMONS}

    def exited() -> str | None:
        # alive, not `ours`: the launcher writes a daemon's pid as it forks, and until the
        # child has exec'd (slow on a loaded machine) its command line is still the shell's
        gone = [name for name, pid in pids.items() if pid and not daemon.alive(pid)]
        if not gone:
            return None
        left = [f"{n} (pid {pids[n]}) was still starting" for n in DAEMONS if n not in gone]
        return (
            " and ".join(f"{n} (pid {pids[n]})" for n in gone)
            + f" exited {time.monotonic() - t0:.1f}s after the launch"
            + (f", while {left[0]}" if left else "")
        )

    try:
        died = daemon.wait_ready(
            lambda: ping.answers(p.host, timeout=2.0), exited, deadline, interval=0.1
        )
    except TimeoutError:
        raise EngineError(
            f"no answer at {p.socket} within the deadline ({TIMEOUT_ENV}, default"
            f" {START_TIMEOUT:.0f}s; raise it on a slow machine)"
        ) from None
    if died:
        raise _Exited(died)


def _tails(p: Paths) -> str:
    """The last lines of the daemons' logs."""
    return "\n".join(
        f"--- {f}:\n{daemon.tail(f, LOG_TAIL)}"
        for f in (p.log / f"{name}.log" for name in DAEMONS)
        if f.exists()
    )


def stop_engine(p: Paths, log: Log) -> list[str]:
    stopped = []
    address = str(p.containerd_socket)
    shims = [pid for pid, cmd in _processes() if "containerd-shim" in cmd and address in cmd]
    for name, want in (("dockerd", p.daemon_json), ("containerd", p.containerd_toml)):
        pid = running(p, name, want)
        if pid:
            log(f"stopping {name} (pid {pid})")
            _terminate(pid, STOP_TIMEOUT)
            stopped.append(f"{name} {pid}")
        p.pid_file(name).unlink(missing_ok=True)
    for shim in shims:  # containers dockerd did not stop (normally none)
        if daemon.alive(shim):
            for child, _cmd in _processes(parent=shim):
                _terminate(child, 0)
            _terminate(shim, 5)
            stopped.append(f"containerd-shim {shim}")
    for f in (p.socket, p.containerd_socket):
        f.unlink(missing_ok=True)
    return stopped


def running(p: Paths, name: str, config: Path) -> int | None:
    """The pid in <name>.pid when that process is the daemon (its command line names
    ``config``) or the launcher's fork that has yet to exec it (a loaded machine can
    keep a fork there for seconds: a stop must end it too), else None."""
    pid = daemon.read_int(p.pid_file(name))
    if pid and (daemon.ours(pid, config) or _launching(p, pid)):
        return pid
    return None


def _launching(p: Paths, pid: int) -> bool:
    """Whether ``pid`` runs the launcher of the engine in ``p`` (a fork before its exec)."""
    return daemon.ours(pid, Path(LAUNCHER)) and daemon.ours(pid, p.root)


def _processes(parent: int | None = None) -> list[tuple[int, str]]:
    out = []
    for d in Path("/proc").glob("[0-9]*"):
        with contextlib.suppress(OSError, IndexError, ValueError):
            if parent is not None:
                stat = (d / "stat").read_text().rpartition(")")[2].split()
                if int(stat[1]) != parent:
                    continue
            cmd = (d / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            out.append((int(d.name), cmd))
    return out


def _terminate(pid: int, wait: float) -> None:
    daemon.terminate(pid, wait, error=EngineError)
