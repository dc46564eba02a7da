"""Where the private engine keeps its state, and where the host's engine listens.

The private engine's state lives in ``$ROCM_PYTORCH_ENGINE_DIR``, else
``<cache dir>/engine`` (tools/places.py: ``$XDG_CACHE_HOME/rocm-pytorch-images``,
else ``$HOME/.cache/rocm-pytorch-images``; the account's home where Bazel
took HOME away, in actions and tests)::

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
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from tools import places
from tools.engine.errors import EngineError
from tools.process import registryd

DIR_ENV = "ROCM_PYTORCH_ENGINE_DIR"
HOST_SOCKET_ENV = "ROCM_PYTORCH_HOST_DOCKER_SOCKET"  # tests point it elsewhere
HOST_SOCKET = "/var/run/docker.sock"


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
    """$ROCM_PYTORCH_ENGINE_DIR, else <cache dir>/engine (tools/places.py)."""
    return places.state_dir(DIR_ENV, "engine")


def paths() -> Paths:
    return Paths(state_dir())


def host_socket() -> Path:
    return Path(os.environ.get(HOST_SOCKET_ENV) or HOST_SOCKET)
