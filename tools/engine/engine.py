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
nothing answers, ``ensure()`` raises EngineError instead.

The rest of the package: state.py (the state dir's layout), binaries.py
(dockerd, containerd and friends: the host's or the sid tree's), ping.py
(does an engine answer?), lifecycle.py (start and stop a lasting or scoped
private engine), loopback.py (its optional registry), client.py (the
docker CLI's DOCKER_CONFIG, wrappers and `export` lines).
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import sys

from tools.engine import binaries, client, lifecycle, loopback
from tools.engine.errors import EngineError
from tools.engine.lifecycle import Log
from tools.engine.ping import answers
from tools.engine.state import DIR_ENV, Paths, host_socket, paths
from tools.process import daemon

SCOPE_ENV = "ROCM_PYTORCH_ENGINE_SCOPE"  # lasting | scoped: overrides the detection


def _stderr(message: str) -> None:
    print(f"engine: {message}", file=sys.stderr, flush=True)


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
        if given and given != p.host and not private and not lifecycle.is_scoped_host(p, given):
            log(f"DOCKER_HOST={given} does not answer; using the private engine in {p.root}")
        scope = (
            scope
            or os.environ.get(SCOPE_ENV)
            or ("scoped" if daemon.in_bazel_spawn() else "lasting")
        )
        if scope not in ("lasting", "scoped"):
            raise EngineError(f"{SCOPE_ENV}={scope!r}: write lasting or scoped")
        if scope == "scoped" and not answers(p.host):
            env["DOCKER_HOST"] = lifecycle.ensure_scoped(p, log).host
        else:
            lifecycle.ensure_private(p, log)
            env["DOCKER_HOST"] = p.host
        env[DIR_ENV] = str(p.root)
    env["DOCKER_CONFIG"] = client.docker_config(p)
    env["BUILDX_NO_DEFAULT_ATTESTATIONS"] = "1"
    if registry:
        env["REGISTRY"] = f"127.0.0.1:{loopback.ensure(p, log)}"
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
        stopped = loopback.stop(p, log) + lifecycle.stop_engine(p, log)
    for slot in sorted((p.root / "scoped").glob("[0-9]*")):
        with contextlib.suppress(OSError), (slot / "slot.lock").open("a") as f:
            try:  # a slot in use belongs to a running spawn: leave it
                fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                continue
            stopped += lifecycle.stop_engine(Paths(slot), log)
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
        "dockerd pid": lifecycle.running(p, "dockerd", p.daemon_json),
        "containerd pid": lifecycle.running(p, "containerd", p.containerd_toml),
    }
    port = p.registry.answering()
    out["registry"] = f"127.0.0.1:{port}" if port else None
    out["scoped engines"] = sum(
        1
        for slot in (p.root / "scoped").glob("[0-9]*")
        if lifecycle.running(Paths(slot), "dockerd", Paths(slot).daemon_json)
    )
    try:
        out["binaries"] = binaries.find_tools().where
    except EngineError:
        out["binaries"] = None
    if out["DOCKER_HOST answers"]:
        out["uses"] = given
    elif out["host engine answers"]:
        out["uses"] = f"unix://{hs}"
    else:
        out["uses"] = p.host if out["private engine answers"] else None
    return out
