"""Where the engine's binaries are: the host's, else the sid tree's through its runner.

``dockerd`` and ``containerd`` on PATH or in /usr/sbin, /usr/bin (inside
``bazel`` those are the sid tree's); else the sid tree that
``tools/bootstrap.sh`` installed, through its ``rocm-pytorch-sid-run``. The
same holds for the docker-registry and the docker, skopeo and crane wrappers.
"""

from __future__ import annotations

import os
import re
import shutil
from dataclasses import dataclass
from pathlib import Path

from tools.engine.errors import EngineError

RUNNER = "rocm-pytorch-sid-run"  # tools/bootstrap.sh's: runs a command with the tree's /usr
SEARCH_DIRS = ("/usr/local/sbin", "/usr/local/bin", "/usr/sbin", "/usr/bin", "/sbin", "/bin")


@dataclass(frozen=True)
class Tools:
    """How to run the engine's binaries: directly, or through the sid tree's runner."""

    prefix: tuple[str, ...]  # () or (runner,)
    dockerd: str
    containerd: str
    where: str  # for messages

    def argv(self, *args: str) -> list[str]:
        return [*self.prefix, *args]


def which(name: str) -> str | None:
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


def in_tree(tree: Path, *names: str) -> bool:
    return all(os.access(tree / n.lstrip("/"), os.X_OK) for n in names)


def find_tools() -> Tools:
    """dockerd and containerd from PATH (or /usr/sbin, /usr/bin), else from the sid tree."""
    dockerd, containerd, runc = which("dockerd"), which("containerd"), which("runc")
    if dockerd and containerd and runc:
        return Tools((), dockerd, containerd, f"{dockerd}")
    found = runner()
    if found:
        exe, tree = found
        if in_tree(tree, "/usr/sbin/dockerd", "/usr/bin/containerd", "/usr/sbin/runc"):
            return Tools((exe,), "/usr/sbin/dockerd", "/usr/bin/containerd", f"the tree {tree}")
    missing = [
        n for n, p in (("dockerd", dockerd), ("containerd", containerd), ("runc", runc)) if not p
    ]
    where = f"nor in the sid tree {found[1]}" if found else f"and there is no `{RUNNER}`"
    raise EngineError(
        f"cannot start the private Docker engine: {', '.join(missing)} not found on PATH,"
        f" in /usr/sbin or /usr/bin, {where}. Run `tools/bootstrap.sh` as root or with sudo"
        " (it installs Debian's docker.io, containerd, runc and docker-buildx in its sid tree),"
        " or install"
        " them (`apt-get install docker.io containerd runc docker-buildx`), or point"
        " DOCKER_HOST at a running engine"
    )


def tool(name: str, tree_path: str) -> list[str] | None:
    """argv prefix that runs ``name``: the host's, else the tree's through the runner."""
    found = which(name)
    if found:
        return [found]
    r = runner()
    if r and in_tree(r[1], tree_path):
        return [r[0], tree_path]
    return None
