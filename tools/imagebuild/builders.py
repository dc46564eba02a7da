"""Which BuildKit builds an image: the local engine, a buildx builder or a docker context.

`--builders=ARCH=BUILDER,...` reaches tools/imagebuild as `--builder NAME`
(empty: the local engine tools/engine finds or starts). ``resolve`` turns the
name into a ``Builder``: how to address it on the docker command line and what
it is (driver, endpoints, BuildKit version of each node and, for engines, the
Docker engine version). That identity goes into the image's content key and
its descriptor, so an image built by an upgraded or re-pointed builder gets a
new key instead of passing for the old one.

A name is looked up as a docker context first (`docker --context NAME buildx
build`: buildx refuses `--builder CONTEXT` while DOCKER_HOST is set), then as a
buildx builder (`docker buildx build --builder NAME`: docker-container,
remote, kubernetes drivers). Unknown names and builders that do not answer
fail in one line, within ``timeout()`` seconds, naming the builder and the
arch.

The local engine on a unix socket is asked over the Engine API (GET /version,
milliseconds) instead of two docker CLI runs (0.3 s quiet, 1 s on a busy
host, per image): what `docker buildx inspect` said of it is kept in a small
cache file keyed by the engine's /version answer, the socket and the CLI's
buildx selection. An upgraded engine, another socket or another
`docker buildx use` gives another key, so the CLI is asked again. Only the
docker driver is cached: its BuildKit is the engine's, so the engine's
version answer pins it.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

from tools import engine, envvars, places
from tools.oci.credhelpers import helper_path

TIMEOUT_ENV = "ROCM_PYTORCH_BUILDER_TIMEOUT"
DEFAULT_TIMEOUT = 20.0
LOCAL = ""  # the builder name of the local engine


class BuilderError(Exception):
    """A builder that does not exist or does not answer; one line, with the fix."""


@dataclass(frozen=True)
class Builder:
    """A resolved builder: how to address it and what it is."""

    name: str  # LOCAL for the local engine
    kind: str  # "local" | "context" | "buildx"
    driver: str
    endpoints: tuple[str, ...] = ()
    buildkit: tuple[str, ...] = ()  # BuildKit version of each node
    engine: str = ""  # Docker engine version (docker driver), else ""
    env: dict[str, str] = field(default_factory=dict, compare=False)

    def docker_args(self) -> list[str]:
        """Global docker CLI flags (before the subcommand)."""
        return ["--context", self.name] if self.kind == "context" else []

    def build_args(self) -> list[str]:
        """`docker buildx build` flags."""
        return ["--builder", self.name] if self.kind == "buildx" else []

    def identity(self) -> dict:
        """What the content key and the descriptor record (no host-local socket paths
        for the local engine: a scoped engine and a lasting one are the same builder)."""
        return {
            "name": self.name or "local",
            "driver": self.driver,
            "endpoints": list(self.endpoints),
            "buildkit": list(self.buildkit),
            "engine": self.engine,
        }

    def key(self) -> str:
        return json.dumps(self.identity(), sort_keys=True, separators=(",", ":"))


# Where the docker CLI looks for its plugins after <config dir>/cli-plugins, in order.
PLUGIN_DIRS = (
    "/usr/local/lib/docker/cli-plugins",
    "/usr/local/libexec/docker/cli-plugins",
    "/usr/lib/docker/cli-plugins",
    "/usr/libexec/docker/cli-plugins",
)


def buildx_binary(env: dict[str, str]) -> str | None:
    """The docker-buildx plugin the docker CLI would run with ``env``, or None: the same
    search (config.json's cliPluginsExtraDirs, <config>/cli-plugins, the system dirs).

    Run on its own (`docker-buildx build ...`, buildx's standalone mode) it
    builds as `docker buildx build` does, with the same DOCKER_HOST and
    DOCKER_CONFIG, without the docker CLI's start and its plugin check (a
    second start of buildx): 0.07 s of every image build here.
    """
    config = env.get("DOCKER_CONFIG") or os.path.join(places.user_home(env), ".docker")
    try:
        with open(os.path.join(config, "config.json"), encoding="utf-8") as f:
            extra = json.load(f).get("cliPluginsExtraDirs") or []
    except FileNotFoundError:
        extra = []
    except (OSError, ValueError, AttributeError):
        return None  # a config the docker CLI reads its own way: let it run the plugin
    if not isinstance(extra, list):
        return None
    for d in (*map(str, extra), os.path.join(config, "cli-plugins"), *PLUGIN_DIRS):
        path = os.path.join(d, "docker-buildx")
        if os.path.isfile(path) and os.access(path, os.X_OK):
            return path
    return None


def timeout() -> float:
    """``$ROCM_PYTORCH_BUILDER_TIMEOUT`` seconds, else DEFAULT_TIMEOUT; a value that is
    not seconds > 0 is a ``BuilderError`` naming it, never the default."""
    return envvars.seconds(TIMEOUT_ENV, DEFAULT_TIMEOUT, error=BuilderError)


def _run(docker: str, argv: list[str], env: dict[str, str], limit: float) -> tuple[int, str]:
    """Run `docker ARGV`; (exit code, stdout + stderr); 124 on timeout."""
    try:
        proc = subprocess.run(
            [docker, *argv],
            capture_output=True,
            text=True,
            env=env,
            timeout=limit,
            check=False,
        )
    except subprocess.TimeoutExpired:
        return 124, f"no answer within {limit:g} s"
    except OSError as e:
        return 127, str(e)
    return proc.returncode, proc.stdout + proc.stderr


def _first_error(text: str) -> str:
    for line in text.splitlines():
        line = line.strip()
        if line and not line.startswith("WARNING") and not line.startswith("Warning"):
            return line.removeprefix("ERROR: ").removeprefix("error: ")
    return "no output"


def parse_inspect(text: str) -> dict:
    """The fields of `docker buildx inspect` text: name, driver, error and the nodes
    (endpoint, status, buildkit, error)."""
    out: dict = {"name": "", "driver": "", "error": "", "nodes": []}
    node: dict | None = None
    for raw in text.splitlines():
        key, sep, value = raw.partition(":")
        if not sep:
            continue
        key, value = key.strip(), value.strip()
        if key == "Nodes":
            continue
        if key == "Name" and node is None and not out["name"]:
            out["name"] = value
        elif key == "Name":
            node = {"name": value, "endpoint": "", "status": "", "buildkit": "", "error": ""}
            out["nodes"].append(node)
        elif key == "Driver" and node is None:
            out["driver"] = value
        elif key == "Error" and node is None:
            out["error"] = value
        elif node is not None and key == "Endpoint":
            node["endpoint"] = value
        elif node is not None and key == "Status":
            node["status"] = value
        elif node is not None and key == "BuildKit version":
            node["buildkit"] = value
        elif node is not None and key == "Error":
            node["error"] = value
    return out


def known(docker: str, env: dict[str, str], limit: float | None = None) -> list[str]:
    """Builder and context names here (`docker buildx ls`, `docker context ls`)."""
    limit = timeout() if limit is None else limit
    names: list[str] = []
    for argv in (
        ["buildx", "ls", "--format", "{{.Name}}"],
        ["context", "ls", "--format", "{{.Name}}"],
    ):
        code, text = _run(docker, argv, env, limit)
        if code == 0:
            names += [n.strip() for n in text.splitlines() if re.fullmatch(r"[\w.+-]+", n.strip())]
    return sorted(dict.fromkeys(names))


def _context_endpoint(docker: str, name: str, env: dict[str, str], limit: float) -> str | None:
    """The docker endpoint of context NAME, or None when there is no such context."""
    code, text = _run(
        docker, ["context", "inspect", name, "--format", "{{.Endpoints.docker.Host}}"], env, limit
    )
    if code == 124:  # the local CLI itself did not answer
        raise BuilderError(f"docker context inspect {name}: {text}")
    if code != 0:
        return None
    return text.strip().splitlines()[0] if text.strip() else ""


def _down(name: str, arch: str, why: str) -> BuilderError:
    return BuilderError(
        f"builder {name} (for arch {arch}) is down or unreachable: {why}; start it, or map"
        f" {arch} to another builder in --builders="
    )


def _unknown(name: str, arch: str, docker: str, env: dict[str, str]) -> BuilderError:
    names = known(docker, env)
    return BuilderError(
        f"builder {name} (for arch {arch}) is not a buildx builder or docker context here;"
        f" known: {', '.join(names) or '(none)'} (`docker buildx ls`); create it"
        f" (`docker context create {name} --docker host=...` or `docker buildx create"
        f" --name {name} ...`) or fix --builders="
    )


def _engine_version(docker: str, pre: list[str], env: dict[str, str], limit: float) -> str:
    code, text = _run(docker, [*pre, "version", "--format", "{{.Server.Version}}"], env, limit)
    return text.strip() if code == 0 else ""


def docker_env(name: str) -> dict[str, str]:
    """The docker CLI environment of builder ``name``: for LOCAL the engine tools/engine
    finds or starts (EngineError when there is none), else ``named_env``."""
    # the docker CLI finds the user's credential helpers as the user's shell does
    environ = dict(os.environ, PATH=helper_path())
    if name == LOCAL:
        return dict(environ, **engine.ensure())
    return named_env(environ, places.user_home())


def named_env(environ: dict[str, str], home: str) -> dict[str, str]:
    """The docker CLI environment for a named builder: the user's DOCKER_CONFIG (where
    `docker context create` and `docker buildx create` put it; <home>/.docker without one)."""
    env = dict(environ)
    env.setdefault("DOCKER_CONFIG", os.path.join(home, ".docker"))
    env["BUILDX_NO_DEFAULT_ATTESTATIONS"] = "1"
    return env


def _local_cache_file(env: dict[str, str], cache: Path, limit: float, arch: str) -> Path | None:
    """The cache file of the local engine's identity (it answered: checked here), or None
    when it is not on a unix socket (the CLI is asked instead)."""
    host = env.get("DOCKER_HOST", "")
    if not host.startswith("unix://"):
        return None
    answer = engine.get_unix(host.removeprefix("unix://"), "/version", limit)
    if answer is None or answer[0] != 200:
        raise _down("local engine", arch, f"{host} does not answer GET /version")
    config = Path(env.get("DOCKER_CONFIG") or Path(places.user_home(env), ".docker"))
    try:
        current = (config / "buildx" / "current").read_bytes()
    except OSError:
        current = b""
    h = hashlib.sha256(b"local-builder-v1\0" + host.encode())
    for part in (env.get("BUILDX_BUILDER", "").encode(), current, answer[1]):
        h.update(b"\0" + part)
    return cache / f"local-{h.hexdigest()[:32]}.json"


def _cached(path: Path, env: dict[str, str]) -> Builder | None:
    try:
        data = json.loads(path.read_text())
        return Builder(
            name=LOCAL,
            kind="local",
            driver=data["driver"],
            buildkit=tuple(data["buildkit"]),
            engine=data["engine"],
            env=env,
        )
    except (OSError, ValueError, KeyError, TypeError):
        return None


def _keep(path: Path, b: Builder) -> None:
    """Write the cache file atomically (a parallel build may read it); best effort."""
    if b.driver != "docker":
        return
    kept = {"driver": b.driver, "buildkit": list(b.buildkit), "engine": b.engine}
    try:
        places.write_atomic(path, json.dumps(kept))
    except OSError:
        pass


def resolve(
    name: str, arch: str, docker: str, env: dict[str, str], cache: Path | None = None
) -> Builder:
    """The builder NAME (LOCAL: the engine ``env`` points at), checked to answer.

    ``env`` is the environment the docker CLI runs with (DOCKER_CONFIG holds the
    contexts and buildx builders). ``cache``: a directory for the local engine's
    identity (see the module's doc); None asks the CLI every time. Raises
    BuilderError in one line.
    """
    limit = timeout()
    kept = _local_cache_file(env, cache, limit, arch) if name == LOCAL and cache else None
    if kept is not None:
        b = _cached(kept, env)
        if b is None:
            b = _resolve(name, arch, docker, env, limit)
            _keep(kept, b)
        return b
    return _resolve(name, arch, docker, env, limit)


def _resolve(name: str, arch: str, docker: str, env: dict[str, str], limit: float) -> Builder:
    """``resolve`` through the docker CLI."""
    what = name or "local engine"
    if name == LOCAL:
        pre: list[str] = []
        inspect = ["buildx", "inspect"]
    else:
        try:
            endpoint = _context_endpoint(docker, name, env, limit)
        except BuilderError as e:
            raise _down(what, arch, str(e)) from None
        pre = ["--context", name] if endpoint is not None else []
        # a buildx builder (docker-container, remote, kubernetes) boots on inspect, as a build would
        inspect = [*pre, "buildx", "inspect", *([] if pre else ["--bootstrap", name])]
    code, text = _run(docker, inspect, env, limit)
    if code == 124:
        raise _down(what, arch, text)
    if code != 0:
        if name and f'no builder "{name}" found' in text:
            raise _unknown(name, arch, docker, env)
        raise _down(what, arch, _first_error(text))
    info = parse_inspect(text)
    if info["error"]:
        raise _down(what, arch, info["error"])
    nodes = info["nodes"]
    if not nodes:
        raise _down(what, arch, "it has no nodes")
    for node in nodes:
        if node["error"]:
            raise _down(what, arch, f"node {node['name']}: {node['error']}")
    driver = info["driver"] or "docker"
    engine_version = ""
    if driver == "docker":
        engine_version = _engine_version(docker, pre, env, limit)
        if not engine_version:
            raise _down(what, arch, "its Docker engine does not answer `docker version`")
    kind = "local" if name == LOCAL else ("context" if pre else "buildx")
    endpoints: tuple[str, ...] = ()
    if kind == "context":
        endpoints = (endpoint or "",)
    elif kind == "buildx":
        endpoints = tuple(n["endpoint"] for n in nodes)
    return Builder(
        name=name,
        kind=kind,
        driver=driver,
        endpoints=endpoints,
        buildkit=tuple(n["buildkit"] or "unknown" for n in nodes),
        engine=engine_version,
        env=env,
    )
