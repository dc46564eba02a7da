"""The docker CLI's side: a DOCKER_CONFIG with buildx, wrappers, `export` lines.

``docker_config`` gives the engine's users a DOCKER_CONFIG whose
cli-plugins has buildx (the host's, else the sid tree's through its runner)
and the user's config.json (registry credentials) linked in; ``cli_wrappers``
writes docker, skopeo and crane wrappers for a host that lacks them;
``env_lines`` prints what `eval "$(python3 -m tools.engine env)"` reads.
"""

from __future__ import annotations

import os
import shlex
from pathlib import Path

from tools import places
from tools.engine import binaries, state

PLUGIN_DIRS = (
    "/usr/local/lib/docker/cli-plugins",
    "/usr/local/libexec/docker/cli-plugins",
    "/usr/lib/docker/cli-plugins",
    "/usr/libexec/docker/cli-plugins",
)
TREE_BUILDX = "/usr/libexec/docker/cli-plugins/docker-buildx"


def unpointed_env(environ: dict[str, str] | None = None) -> dict[str, str]:
    """``environ`` (default os.environ) without what points the docker CLI or this module
    at an engine (DOCKER_HOST, DOCKER_CONFIG, $ROCM_PYTORCH_ENGINE_DIR): the environment
    of `python3 -m tools.engine --dir DIR ...` for a second engine beside the caller's."""
    drop = ("DOCKER_HOST", "DOCKER_CONFIG", state.DIR_ENV)
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
    runners = dict.fromkeys(
        [*([runner_exe] if runner_exe else []), f"/usr/local/bin/{binaries.RUNNER}"]
    )
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


def docker_config(p: state.Paths) -> str:
    """$DOCKER_CONFIG when it has buildx, else ours: the buildx wrapper, plus the user's
    config.json (credentials) linked in."""
    given = os.environ.get("DOCKER_CONFIG")
    if given and os.access(Path(given) / "cli-plugins" / "docker-buildx", os.X_OK):
        return given
    if given and Path(given).resolve() == p.docker_config.resolve():
        given = None
    d = p.docker_config
    wrapper = d / "cli-plugins" / "docker-buildx"
    r = binaries.runner()
    # inside `bazel` the runner is out of sight: keep what a host-side call wrote
    if r or not _startswith(wrapper, f"#!/bin/sh\n{BUILDX_MARK}\n"):
        places.put(wrapper, _buildx_wrapper(r[0] if r else None), 0o755)
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


def cli_wrappers() -> str | None:
    """A bin dir with docker/skopeo/crane wrappers for the tools the host lacks, or None."""
    p = state.paths()
    r = binaries.runner()
    if not r:
        return None
    wrote = False
    for name, tree_path in (
        ("docker", "/usr/bin/docker"),
        ("skopeo", "/usr/bin/skopeo"),
        ("crane", "/usr/bin/crane"),
    ):
        if binaries.which(name) or not binaries.in_tree(r[1], tree_path):
            continue
        places.put(
            p.bin / name,
            f"#!/bin/sh\n# written by tools/engine: the sid tree's {name}\n"
            f'exec {shlex.quote(r[0])} {tree_path} "$@"\n',
            0o755,
        )
        wrote = True
    return str(p.bin) if wrote or p.bin.is_dir() else None


def env_lines(env: dict[str, str], extra_path: str | None = None) -> str:
    """``export`` lines for ``eval "$(python3 -m tools.engine env)"``."""
    lines = [f"export {k}={shlex.quote(v)}" for k, v in env.items()]
    if extra_path:
        q = shlex.quote(extra_path)
        lines.append(f'case ":$PATH:" in *:{q}:*) ;; *) export PATH="$PATH":{q} ;; esac')
    return "\n".join(lines) + "\n"


def _startswith(path: Path, prefix: str) -> bool:
    try:
        return path.read_text(errors="replace").startswith(prefix)
    except OSError:
        return False
