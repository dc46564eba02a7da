"""A Docker engine for the image builds and the tests, started when none answers.

``ensure()`` returns the environment (``DOCKER_HOST``, ``DOCKER_CONFIG`` with the
buildx plugin, ``BUILDX_NO_DEFAULT_ATTESTATIONS``) of the first engine that
answers, in this order:

1. ``$DOCKER_HOST``, when it is set and answers: used as it is;
2. the host's engine at ``/var/run/docker.sock``;
3. the project's private engine: containerd + dockerd (containerd image store,
   BuildKit), unix sockets only, ``--bridge=none --iptables=false``. When it
   does not answer it is started, detached (own session, stdio to its logs), so
   it outlives the command that started it; ``stop()`` ends it. One start at a
   time (fcntl lock): concurrent callers wait for it and share it.

Inside a Bazel action or test no process outlives the spawn: Bazel's
process-wrapper is a subreaper and kills every descendant left when the spawn
ends. There (an ancestor is ``process-wrapper`` or ``linux-sandbox``), when
none of the three answers, ``ensure()`` starts a *scoped* engine instead: one
for this process and its children, in a slot of ``<dir>/scoped/`` (its data
root, hence BuildKit's cache, is reused by the next spawn that takes the slot),
stopped cleanly when the process exits. ``python3 -m tools.engine start`` (or
``bazel run //tools/engine -- start``) keeps one engine running for every build
and test instead, which is faster.

``private=True`` skips 1 and 2 (CI uses it: an engine it may prune).
``ROCM_PYTORCH_ENGINE_AUTOSTART=0`` never starts the private engine: when
nothing answers, ``ensure()`` raises EngineError instead. The
private engine's state lives in ``$ROCM_PYTORCH_ENGINE_DIR``, else
``<home>/.cache/rocm-pytorch-images/engine`` with home from the password
database, never ``$HOME`` (Bazel tests set HOME to a temporary directory, and a
build, a test and a shell of one user must all find the same engine)::

    docker.sock        the engine's API: DOCKER_HOST=unix://<dir>/docker.sock
    daemon.json, containerd.toml   written on every start
    containerd/        containerd's sockets; its data in data/, its state in run/
    docker/, exec/     dockerd's data root and exec root
    docker-config/     DOCKER_CONFIG: cli-plugins/docker-buildx, and the user's
                       config.json linked in (registry credentials)
    bin/               docker, skopeo, crane wrappers for a host that lacks them
    registry/          the optional loopback registry (CI's $REGISTRY)
    scoped/N/          the scoped engines' slots (same layout; N/slot.lock held by its user)
    log/               containerd.log, dockerd.log, registry.log, launch.log,
                       starts.log (one line per start)
    lock               serialises start and stop across processes

Binaries: ``dockerd`` and ``containerd`` on PATH or in /usr/sbin, /usr/bin
(inside ``bazel`` those are the sid tree's); else the sid tree that
``tools/bootstrap.sh`` installed, through its ``rocm-pytorch-sid-run``.
"""

from __future__ import annotations

import atexit
import contextlib
import fcntl
import http.client
import os
import re
import shlex
import shutil
import socket
import ssl
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from tools import daemon, places, registryd
from tools.engine.errors import EngineError

DIR_ENV = "ROCM_PYTORCH_ENGINE_DIR"
HOST_SOCKET_ENV = "ROCM_PYTORCH_HOST_DOCKER_SOCKET"  # tests point it elsewhere
TIMEOUT_ENV = "ROCM_PYTORCH_ENGINE_START_TIMEOUT"
AUTOSTART_ENV = "ROCM_PYTORCH_ENGINE_AUTOSTART"
SCOPE_ENV = "ROCM_PYTORCH_ENGINE_SCOPE"  # lasting | scoped: overrides the detection
SCOPED_SLOTS = 16
DOCKERD_ARGS_ENV = "ROCM_PYTORCH_DOCKERD_ARGS"
REGISTRY_PORT_ENV = "ROCM_PYTORCH_ENGINE_REGISTRY_PORT"
HOST_SOCKET = "/var/run/docker.sock"
RUNNER = "rocm-pytorch-sid-run"  # tools/bootstrap.sh's: runs a command with the tree's /usr
START_TIMEOUT = 60.0
STOP_TIMEOUT = 30.0
REGISTRY_PORTS = range(5100, 5200)
LOG_TAIL = 25
# unix socket paths are at most 107 bytes; dockerd's longest is
# <exec-root>/libnetwork/<12 hex>.sock, and the exec root is <dir>/exec
SOCKET_SLACK = len("/exec/libnetwork/0123456789ab.sock")
SEARCH_DIRS = ("/usr/local/sbin", "/usr/local/bin", "/usr/sbin", "/usr/bin", "/sbin", "/bin")
PLUGIN_DIRS = (
    "/usr/local/lib/docker/cli-plugins",
    "/usr/local/libexec/docker/cli-plugins",
    "/usr/lib/docker/cli-plugins",
    "/usr/libexec/docker/cli-plugins",
)
TREE_BUILDX = "/usr/libexec/docker/cli-plugins/docker-buildx"
LAUNCH_PATH = ":".join(SEARCH_DIRS)

Log = Callable[[str], None]


def _stderr(message: str) -> None:
    print(f"engine: {message}", file=sys.stderr, flush=True)


# -- where things are ---------------------------------------------------------


@dataclass(frozen=True)
class Paths:
    root: Path

    @property
    def socket(self) -> Path:
        return self.root / "docker.sock"

    @property
    def host(self) -> str:
        return f"unix://{self.socket}"

    @property
    def daemon_json(self) -> Path:
        return self.root / "daemon.json"

    @property
    def containerd_toml(self) -> Path:
        return self.root / "containerd.toml"

    @property
    def containerd_socket(self) -> Path:
        return self.root / "containerd" / "containerd.sock"

    @property
    def docker_config(self) -> Path:
        return self.root / "docker-config"

    @property
    def bin(self) -> Path:
        return self.root / "bin"

    @property
    def log(self) -> Path:
        return self.root / "log"

    @property
    def lock(self) -> Path:
        return self.root / "lock"

    @property
    def registry(self) -> registryd.Registry:
        """The optional loopback registry: its config, data and port in registry/."""
        return registryd.Registry(
            what="the loopback registry",
            owner="tools/engine",
            config=self.root / "registry" / "config.yml",
            pid_file=self.pid_file("registry"),
            port_file=self.root / "registry" / "port",
            log=self.log / "registry.log",
            error=EngineError,
        )

    def pid_file(self, name: str) -> Path:
        return self.root / f"{name}.pid"


def state_dir() -> Path:
    """$ROCM_PYTORCH_ENGINE_DIR, else <home>/.cache/rocm-pytorch-images/engine (passwd home)."""
    return places.state_dir(DIR_ENV, "engine")


def paths() -> Paths:
    return Paths(state_dir())


def host_socket() -> Path:
    return Path(os.environ.get(HOST_SOCKET_ENV) or HOST_SOCKET)


@dataclass(frozen=True)
class Tools:
    """How to run the engine's binaries: directly, or through the sid tree's runner."""

    prefix: tuple[str, ...]  # () or (runner,)
    dockerd: str
    containerd: str
    where: str  # for messages

    def argv(self, *args: str) -> list[str]:
        return [*self.prefix, *args]


def _which(name: str) -> str | None:
    found = shutil.which(name)
    if found:
        return found
    for d in SEARCH_DIRS:
        candidate = os.path.join(d, name)
        if os.access(candidate, os.X_OK):
            return candidate
    return None


def runner() -> tuple[str, Path] | None:
    """tools/bootstrap.sh's runner and the sid tree it runs in, when installed."""
    exe = shutil.which(RUNNER) or f"/usr/local/bin/{RUNNER}"
    try:
        text = Path(exe).read_text(errors="replace")
    except OSError:
        return None
    m = re.search(r"^P=(/\S+)$", text, re.M)
    return (exe, Path(m.group(1))) if m else None


def _in_tree(tree: Path, *names: str) -> bool:
    return all(os.access(tree / n.lstrip("/"), os.X_OK) for n in names)


def find_tools() -> Tools:
    """dockerd and containerd from PATH (or /usr/sbin, /usr/bin), else from the sid tree."""
    dockerd, containerd, runc = _which("dockerd"), _which("containerd"), _which("runc")
    if dockerd and containerd and runc:
        return Tools((), dockerd, containerd, f"{dockerd}")
    found = runner()
    if found:
        exe, tree = found
        if _in_tree(tree, "/usr/sbin/dockerd", "/usr/bin/containerd", "/usr/sbin/runc"):
            return Tools((exe,), "/usr/sbin/dockerd", "/usr/bin/containerd", f"the tree {tree}")
    missing = [
        n for n, p in (("dockerd", dockerd), ("containerd", containerd), ("runc", runc)) if not p
    ]
    where = f"nor in the sid tree {found[1]}" if found else f"and there is no `{RUNNER}`"
    raise EngineError(
        f"cannot start the private Docker engine: {', '.join(missing)} not found on PATH,"
        f" in /usr/sbin or /usr/bin, {where}. Run `sudo tools/bootstrap.sh` (it installs"
        " Debian's docker.io, containerd, runc and docker-buildx in its sid tree), or install"
        " them (`apt-get install docker.io containerd runc docker-buildx`), or point"
        " DOCKER_HOST at a running engine"
    )


def _tool(name: str, tree_path: str) -> list[str] | None:
    """argv prefix that runs ``name``: the host's, else the tree's through the runner."""
    found = _which(name)
    if found:
        return [found]
    r = runner()
    if r and _in_tree(r[1], tree_path):
        return [r[0], tree_path]
    return None


# -- does an engine answer? ---------------------------------------------------


def get_unix(path: str, url: str, timeout: float) -> tuple[int, bytes] | None:
    """GET ``url`` from the Engine API on the unix socket ``path``: (status, body), or None
    when nothing answers there."""
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
            s.settimeout(timeout)
            s.connect(path)
            s.sendall(f"GET {url} HTTP/1.0\r\nHost: docker\r\n\r\n".encode())
            data = b""
            while chunk := s.recv(65536):
                data += chunk
    except OSError:
        return None
    head, _, body = data.partition(b"\r\n\r\n")
    try:
        return int(head.split(b"\r\n", 1)[0].split(b" ")[1]), body
    except (IndexError, ValueError):
        return None


def _ping_unix(path: str, timeout: float) -> bool:
    answer = get_unix(path, "/_ping", timeout)
    return answer is not None and answer[0] == 200 and answer[1].strip() == b"OK"


def _ping_tcp(host: str, timeout: float) -> bool:
    hostport = re.sub(r"^(tcp|https?)://", "", host).split("/", 1)[0]
    name, _, port = hostport.rpartition(":")
    if not name:
        name, port = hostport, "2375"
    tls = bool(os.environ.get("DOCKER_TLS_VERIFY")) or host.startswith("https://") or port == "2376"
    try:
        if tls:
            certs = Path(os.environ.get("DOCKER_CERT_PATH") or Path.home() / ".docker")
            ctx = ssl.create_default_context(
                cafile=str(certs / "ca.pem") if (certs / "ca.pem").exists() else None
            )
            if (certs / "cert.pem").exists():
                ctx.load_cert_chain(certs / "cert.pem", certs / "key.pem")
            conn: http.client.HTTPConnection = http.client.HTTPSConnection(
                name, int(port), timeout=timeout, context=ctx
            )
        else:
            conn = http.client.HTTPConnection(name, int(port), timeout=timeout)
        try:
            conn.request("GET", "/_ping")
            r = conn.getresponse()
            return r.status == 200 and r.read().strip() == b"OK"
        finally:
            conn.close()
    except (OSError, ValueError, http.client.HTTPException):
        return False


def answers(host: str, timeout: float = 3.0) -> bool:
    """Whether the engine at ``host`` (a DOCKER_HOST value) answers GET /_ping."""
    if host.startswith("unix://"):
        return _ping_unix(host.removeprefix("unix://"), timeout)
    if host.startswith(("tcp://", "http://", "https://")):
        return _ping_tcp(host, timeout)
    docker = _which("docker")  # ssh:// and the like: ask the CLI
    if not docker:
        return False
    try:
        proc = subprocess.run(
            [docker, "--host", host, "version", "--format", "{{.Server.Version}}"],
            capture_output=True,
            timeout=max(timeout, 10.0),
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return False
    return proc.returncode == 0


# -- the public API --------------------------------------------------------------


def ensure(
    *,
    private: bool = False,
    registry: bool = False,
    scope: str | None = None,
    log: Log = _stderr,
) -> dict[str, str]:
    """The environment of a Docker engine that answers, starting the private one if needed.

    Keys: DOCKER_HOST, DOCKER_CONFIG (a directory whose cli-plugins has buildx),
    BUILDX_NO_DEFAULT_ATTESTATIONS; ROCM_PYTORCH_ENGINE_DIR when the engine is
    the private one; REGISTRY (127.0.0.1:PORT) with ``registry=True``.
    ``scope``: "lasting" or "scoped" for a private engine this call starts;
    default $ROCM_PYTORCH_ENGINE_SCOPE, else scoped inside a Bazel spawn.
    Raises EngineError with the reason and the fix.
    """
    p = paths()
    env: dict[str, str] = {}
    given = os.environ.get("DOCKER_HOST", "").strip()
    hs = host_socket()
    if not private and given and answers(given):
        env["DOCKER_HOST"] = given
    elif not private and hs.exists() and answers(f"unix://{hs}"):
        if given:
            log(f"DOCKER_HOST={given} does not answer; using the host's engine at {hs}")
        env["DOCKER_HOST"] = f"unix://{hs}"
    else:
        if given and given != p.host and not private and not _is_scoped_host(p, given):
            log(f"DOCKER_HOST={given} does not answer; using the private engine in {p.root}")
        scope = scope or os.environ.get(SCOPE_ENV) or ("scoped" if in_bazel_spawn() else "lasting")
        if scope not in ("lasting", "scoped"):
            raise EngineError(f"{SCOPE_ENV}={scope!r}: write lasting or scoped")
        if scope == "scoped" and not answers(p.host):
            env["DOCKER_HOST"] = _ensure_scoped(p, log).host
        else:
            _ensure_private(p, log)
            env["DOCKER_HOST"] = p.host
        env[DIR_ENV] = str(p.root)
    env["DOCKER_CONFIG"] = _docker_config(p)
    env["BUILDX_NO_DEFAULT_ATTESTATIONS"] = "1"
    if registry:
        env["REGISTRY"] = f"127.0.0.1:{_ensure_registry(p, log)}"
    return env


def apply(env: dict[str, str] | None = None) -> dict[str, str]:
    """``ensure()`` and put its environment into ``os.environ`` (for this process and its
    children); returns it."""
    env = ensure() if env is None else env
    os.environ.update(env)
    return env


def stop(log: Log = _stderr) -> list[str]:
    """Stop the private engine and its registry (never any other engine); what was stopped."""
    p = paths()
    if not p.root.is_dir():
        return []
    with daemon.locked(p.lock):
        stopped = _stop_registry(p, log) + _stop_engine(p, log)
    for slot in sorted((p.root / "scoped").glob("[0-9]*")):
        with contextlib.suppress(OSError), (slot / "slot.lock").open("a") as f:
            try:  # a slot in use belongs to a running spawn: leave it
                fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                continue
            stopped += _stop_engine(Paths(slot), log)
    return stopped


def status() -> dict:
    """Which engine ``ensure()`` would use and what the private one is doing (starts nothing)."""
    p = paths()
    given = os.environ.get("DOCKER_HOST", "").strip()
    hs = host_socket()
    out: dict = {
        "DOCKER_HOST": given or None,
        "DOCKER_HOST answers": bool(given) and answers(given),
        "host engine": str(hs),
        "host engine answers": hs.exists() and answers(f"unix://{hs}"),
        "private engine": str(p.root),
        "private engine answers": answers(p.host),
        "dockerd pid": _running(p, "dockerd", p.daemon_json),
        "containerd pid": _running(p, "containerd", p.containerd_toml),
    }
    port = p.registry.answering()
    out["registry"] = f"127.0.0.1:{port}" if port else None
    out["scoped engines"] = sum(
        1
        for slot in (p.root / "scoped").glob("[0-9]*")
        if _running(Paths(slot), "dockerd", Paths(slot).daemon_json)
    )
    try:
        out["binaries"] = find_tools().where
    except EngineError:
        out["binaries"] = None
    if out["DOCKER_HOST answers"]:
        out["uses"] = given
    elif out["host engine answers"]:
        out["uses"] = f"unix://{hs}"
    else:
        out["uses"] = p.host if out["private engine answers"] else None
    return out


def env_lines(env: dict[str, str], extra_path: str | None = None) -> str:
    """``export`` lines for ``eval "$(python3 -m tools.engine env)"``."""
    lines = [f"export {k}={shlex.quote(v)}" for k, v in env.items()]
    if extra_path:
        q = shlex.quote(extra_path)
        lines.append(f'case ":$PATH:" in *:{q}:*) ;; *) export PATH="$PATH":{q} ;; esac')
    return "\n".join(lines) + "\n"


def cli_wrappers() -> str | None:
    """A bin dir with docker/skopeo/crane wrappers for the tools the host lacks, or None."""
    p = paths()
    r = runner()
    if not r:
        return None
    wrote = False
    for name, tree_path in (
        ("docker", "/usr/bin/docker"),
        ("skopeo", "/usr/bin/skopeo"),
        ("crane", "/usr/bin/crane"),
    ):
        if _which(name) or not _in_tree(r[1], tree_path):
            continue
        _put(
            p.bin / name,
            f"#!/bin/sh\n# written by tools/engine: the sid tree's {name}\n"
            f'exec {shlex.quote(r[0])} {tree_path} "$@"\n',
            0o755,
        )
        wrote = True
    return str(p.bin) if wrote or p.bin.is_dir() else None


# -- the private engine (callers hold the lock) ------------------------------------


in_bazel_spawn = daemon.in_bazel_spawn


def _ensure_private(p: Paths, log: Log) -> None:
    if answers(p.host):  # the common case: running; no lock needed
        return
    _check_start(p)  # before the lock, which writes the state dir

    def start() -> bool:
        tools = find_tools()
        _stop_engine(p, log)  # leftovers of an engine that no longer answers
        if in_bazel_spawn():
            log("warning: inside a Bazel action or test this engine ends with it")
        _start_engine(p, tools, log)
        return True

    # another caller may have started it while we waited for the lock
    daemon.start_once(p.lock, lambda: answers(p.host) or None, start)


# base dir -> (slot, its held lock): the scoped engine of this process
_SCOPED: dict[str, tuple[Paths, object]] = {}


def _is_scoped_host(p: Paths, host: str) -> bool:
    return host.startswith(f"unix://{p.root}/scoped/")


def _ensure_scoped(p: Paths, log: Log) -> Paths:
    """An engine for this process and its children, in a free slot; stopped at exit."""
    held = _SCOPED.get(str(p.root))
    if held and answers(held[0].host):
        return held[0]
    _check_start(p, extra=len("/scoped/99"))
    tools = find_tools()
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
        _stop_engine(slot, lambda _m: None)  # leftovers of a spawn that was killed
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
            _stop_engine(slot, lambda _m: None)
        f.close()  # type: ignore[attr-defined]


def _check_start(p: Paths, extra: int = 0) -> None:
    """What a start needs before anything is written: autostart allowed, root, short paths."""
    if os.environ.get(AUTOSTART_ENV, "").strip() in ("0", "false", "no", "off"):
        given = os.environ.get("DOCKER_HOST", "").strip()
        raise EngineError(
            f"no Docker engine answers (DOCKER_HOST={given or '(unset)'}, nothing at"
            f" {host_socket()}, no private engine at {p.socket}) and {AUTOSTART_ENV}=0"
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
# namespace (dockerd mounts the snapshots that containerd's shims run).
_LAUNCH_ENGINE = r"""
S=$1 T=$2 CONTAINERD=$3 DOCKERD=$4
shift 4
"$CONTAINERD" --config "$S/containerd.toml" </dev/null >>"$S/log/containerd.log" 2>&1 &
c=$!
echo "$c" >"$S/containerd.pid"
i=0
until [ -S "$S/containerd/containerd.sock" ]; do
  kill -0 "$c" 2>/dev/null || { echo "containerd exited at start"; exit 1; }
  i=$((i + 1))
  [ "$i" -le $((T * 10)) ] || { echo "containerd's socket did not appear within ${T}s"; exit 1; }
  sleep 0.1
done
"$DOCKERD" "$@" </dev/null >>"$S/log/dockerd.log" 2>&1 &
echo "$!" >"$S/dockerd.pid"
"""


def _launch_env() -> dict[str, str]:
    """The daemons' environment: ours without the client's Docker settings, a fixed PATH."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("DOCKER_", "BUILDX_"))}
    env["PATH"] = LAUNCH_PATH
    return env


def _launch(p: Paths, argv: list[str], timeout: float) -> None:
    """Run a launcher script detached (own session; its children outlive it and us)."""
    launch_log = p.log / "launch.log"
    try:
        code = daemon.run_detached(argv, launch_log, env=_launch_env(), timeout=timeout + 15)
    except OSError as e:
        raise EngineError(f"could not launch {argv[0]}: {e}") from None
    if code != 0:
        raise EngineError(f"the launcher failed (exit {code}): {daemon.tail(launch_log, 5)}")


def _start_engine(p: Paths, tools: Tools, log: Log) -> None:
    timeout = float(os.environ.get(TIMEOUT_ENV) or START_TIMEOUT)
    for d in ("containerd", "docker", "exec", "log"):
        (p.root / d).mkdir(parents=True, exist_ok=True)
    for name in ("containerd", "dockerd"):
        f = p.log / f"{name}.log"
        if f.exists():
            f.replace(p.log / f"{name}.log.1")
    for f in (p.socket, p.containerd_socket, p.pid_file("dockerd"), p.pid_file("containerd")):
        f.unlink(missing_ok=True)
    _put(p.containerd_toml, _containerd_config(p, tools))
    _put(
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
    t0 = time.monotonic()
    argv = tools.argv(
        "/bin/sh", "-c", _LAUNCH_ENGINE, "engine-launch",
        str(p.root), str(int(timeout)), tools.containerd, tools.dockerd, *dockerd_args,
    )  # fmt: skip
    try:
        _launch(p, argv, timeout)
        _wait_ready(p, t0 + timeout)
    except EngineError as e:
        tails = "\n".join(
            f"--- last lines of {f}:\n{daemon.tail(f, LOG_TAIL)}"
            for f in (p.log / "containerd.log", p.log / "dockerd.log")
            if f.exists()
        )
        _stop_engine(p, lambda _m: None)
        raise EngineError(f"the private Docker engine did not start: {e}\n{tails}") from None
    dockerd = daemon.read_int(p.pid_file("dockerd"))
    with (p.log / "starts.log").open("a") as f:
        f.write(
            f"{time.strftime('%Y-%m-%dT%H:%M:%S')} dockerd={dockerd}"
            f" containerd={daemon.read_int(p.pid_file('containerd'))} by pid {os.getpid()}\n"
        )
    log(f"private Docker engine ready in {time.monotonic() - t0:.1f}s: DOCKER_HOST={p.host}")


def _wait_ready(p: Paths, deadline: float) -> None:
    def exited() -> str | None:
        # alive, not `ours`: the launcher writes a daemon's pid as it forks, and until the
        # child has exec'd (slow on a loaded machine) its command line is still the shell's
        for name in ("containerd", "dockerd"):
            pid = daemon.read_int(p.pid_file(name))
            if pid and not daemon.alive(pid):
                return f"{name} (pid {pid}) exited at start"
        return None

    try:
        died = daemon.wait_ready(
            lambda: answers(p.host, timeout=2.0), exited, deadline, interval=0.1
        )
    except TimeoutError:
        raise EngineError(
            f"no answer at {p.socket} within the deadline ({TIMEOUT_ENV}, default"
            f" {START_TIMEOUT:.0f}s; raise it on a slow machine)"
        ) from None
    if died:
        raise EngineError(died)


def _stop_engine(p: Paths, log: Log) -> list[str]:
    stopped = []
    address = str(p.containerd_socket)
    shims = [pid for pid, cmd in _processes() if "containerd-shim" in cmd and address in cmd]
    for name, want in (("dockerd", p.daemon_json), ("containerd", p.containerd_toml)):
        pid = _running(p, name, want)
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


# -- the optional loopback registry ------------------------------------------------


def _ensure_registry(p: Paths, log: Log) -> int:
    registry = p.registry
    wanted = os.environ.get(REGISTRY_PORT_ENV)

    def answering() -> int | None:
        port = registry.answering()
        return port if port and (not wanted or int(wanted) == port) else None

    def start() -> int:
        port = registry.recorded_port()
        _stop_registry(p, log)
        argv = _tool("docker-registry", "/usr/bin/docker-registry")
        if not argv:
            raise EngineError(
                "docker-registry not found on PATH, in /usr/bin or in the sid tree: run"
                " `sudo tools/bootstrap.sh` or `apt-get install docker-registry`"
            )
        if wanted:
            port = int(wanted)
        elif not port or not daemon.port_free(port):
            port = registryd.first_free(REGISTRY_PORTS)
        if not port or not daemon.port_free(port):
            raise EngineError(
                f"no free port for the loopback registry ({port or 'range 5100-5199 taken'});"
                f" set {REGISTRY_PORT_ENV} to a free port"
            )
        log(f"starting the loopback registry on 127.0.0.1:{port}")
        registry.start(argv, port, env=_launch_env())
        return port

    return daemon.start_once(p.lock, answering, start)


def _stop_registry(p: Paths, log: Log) -> list[str]:
    pid = p.registry.pid()
    if pid:
        log(f"stopping the loopback registry (pid {pid})")
    return [f"registry {pid}"] if p.registry.stop() else []


# -- client configuration -----------------------------------------------------------


def unpointed_env(environ: dict[str, str] | None = None) -> dict[str, str]:
    """``environ`` (default os.environ) without what points the docker CLI or this module
    at an engine (DOCKER_HOST, DOCKER_CONFIG, $ROCM_PYTORCH_ENGINE_DIR): the environment
    of `python3 -m tools.engine --dir DIR ...` for a second engine beside the caller's."""
    drop = ("DOCKER_HOST", "DOCKER_CONFIG", DIR_ENV)
    return {k: v for k, v in (os.environ if environ is None else environ).items() if k not in drop}


def client_config(dest: Path) -> Path:
    """Make ``dest`` a DOCKER_CONFIG of its own, for docker contexts that must not land in
    the caller's: the caller's buildx plugin and credentials (config.json) linked in."""
    given = Path(os.environ.get("DOCKER_CONFIG") or Path(places.home(), ".docker"))
    dest.mkdir(parents=True)
    plugin = given / "cli-plugins" / "docker-buildx"
    if plugin.exists():
        (dest / "cli-plugins").mkdir()
        (dest / "cli-plugins" / "docker-buildx").symlink_to(plugin.resolve())
    if (given / "config.json").exists():
        (dest / "config.json").symlink_to((given / "config.json").resolve())
    return dest


BUILDX_MARK = "# written by tools/engine: buildx for any docker CLI that uses this DOCKER_CONFIG"


def _buildx_wrapper(runner_exe: str | None) -> str:
    """The host's buildx, else the sid tree's through the runner (from the host) or directly
    (inside `bazel`, where /usr is the tree's and the first loop finds it)."""
    runners = dict.fromkeys([*([runner_exe] if runner_exe else []), f"/usr/local/bin/{RUNNER}"])
    return "\n".join(
        [
            "#!/bin/sh",
            BUILDX_MARK,
            f"for b in {' '.join(d + '/docker-buildx' for d in PLUGIN_DIRS)}; do",
            '  if [ -x "$b" ]; then exec "$b" "$@"; fi',
            "done",
            f"for r in {' '.join(shlex.quote(r) for r in runners)}; do",
            f'  if [ -x "$r" ]; then exec "$r" {TREE_BUILDX} "$@"; fi',
            "done",
            'echo "docker-buildx is not installed: run tools/bootstrap.sh, or'
            ' apt-get install docker-buildx" >&2',
            "exit 1",
            "",
        ]
    )


def _docker_config(p: Paths) -> str:
    """$DOCKER_CONFIG when it has buildx, else ours: the buildx wrapper, plus the user's
    config.json (credentials) linked in."""
    given = os.environ.get("DOCKER_CONFIG")
    if given and os.access(Path(given) / "cli-plugins" / "docker-buildx", os.X_OK):
        return given
    if given and Path(given).resolve() == p.docker_config.resolve():
        given = None
    d = p.docker_config
    wrapper = d / "cli-plugins" / "docker-buildx"
    r = runner()
    # inside `bazel` the runner is out of sight: keep what a host-side call wrote
    if r or not _startswith(wrapper, f"#!/bin/sh\n{BUILDX_MARK}\n"):
        _put(wrapper, _buildx_wrapper(r[0] if r else None), 0o755)
    home = places.home()
    user = Path(given) / "config.json" if given else Path(home) / ".docker" / "config.json"
    link = d / "config.json"
    if user.is_file():
        if not (link.is_symlink() and os.readlink(link) == str(user)):
            tmp = d / f".config.json.{os.getpid()}"
            tmp.unlink(missing_ok=True)
            tmp.symlink_to(user)
            tmp.replace(link)
    elif link.is_symlink():
        link.unlink(missing_ok=True)
    return str(d)


# -- small helpers ---------------------------------------------------------------------


def _put(path: Path, text: str, mode: int = 0o644) -> None:
    """Write ``text`` atomically, only when it differs."""
    try:
        if path.read_text() == text and (path.stat().st_mode & 0o777) == mode:
            return
    except OSError:
        pass
    places.write_atomic(path, text, mode)


def _startswith(path: Path, prefix: str) -> bool:
    try:
        return path.read_text(errors="replace").startswith(prefix)
    except OSError:
        return False


def _running(p: Paths, name: str, config: Path) -> int | None:
    return daemon.running(p.pid_file(name), config)


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
