"""The private engine's optional loopback registry (CI's and the benches' $REGISTRY).

Debian's docker-registry on 127.0.0.1 (tools/process/registryd.py), its files in the
engine's state dir: ``registry/`` (config, data, port), ``registry.pid``,
``log/registry.log``. Its port is $ROCM_PYTORCH_ENGINE_REGISTRY_PORT, else
the last one while it is free, else the first free one of 5100-5199.
"""

from __future__ import annotations

from tools import envvars
from tools.engine import binaries, lifecycle
from tools.engine.errors import EngineError
from tools.engine.lifecycle import Log
from tools.engine.state import Paths
from tools.process import daemon, registryd

REGISTRY_PORT_ENV = "ROCM_PYTORCH_ENGINE_REGISTRY_PORT"
REGISTRY_PORTS = range(5100, 5200)


def ensure(p: Paths, log: Log) -> int:
    """The port of the engine's loopback registry, started (once, under the lock) if needed."""
    registry = p.registry
    wanted = envvars.port(REGISTRY_PORT_ENV, error=EngineError)

    def answering() -> int | None:
        port = registry.serving()
        return port if port and (not wanted or wanted == port) else None

    def start() -> int:
        port = registry.recorded_port()
        stop(p, log)
        argv = binaries.tool("docker-registry", "/usr/bin/docker-registry")
        if not argv:
            raise EngineError(
                "docker-registry not found on PATH, in /usr/bin or in the sid tree: run"
                " `tools/bootstrap.sh` as root or with sudo, or `apt-get install docker-registry`"
            )
        if wanted:
            port = wanted
        elif not port or not daemon.port_free(port):
            port = registryd.first_free(REGISTRY_PORTS)
        if not port or not daemon.port_free(port):
            raise EngineError(
                f"no free port for the loopback registry ({port or 'range 5100-5199 taken'});"
                f" set {REGISTRY_PORT_ENV} to a free port"
            )
        log(f"starting the loopback registry on 127.0.0.1:{port}")
        registry.start(argv, port, env=lifecycle.launch_env())
        return port

    return daemon.start_once(p.lock, answering, start)


def stop(p: Paths, log: Log) -> list[str]:
    """Stop the loopback registry; ["registry PID"] when one ran, else []."""
    pid = p.registry.pid()
    if pid:
        log(f"stopping the loopback registry (pid {pid})")
    return [f"registry {pid}"] if p.registry.stop() else []
