"""Run `docker buildx build --call=...` on the real Dockerfiles, offline.

Nothing can be pulled here, so every FROM reference a build needs is given
as a named build context pointing at a stand-in image in staging (the
`:standin` image of this package, by digest). BuildKit does not follow symlinks in a
build context, and the runfiles tree is made of them, so the context is a
temporary copy of docker/ as real files at its repository-relative path.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from collections.abc import Iterable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

STANDIN_DESCRIPTOR = Path("tests/dockerfiles/standin.json")
# buildx calls are cheap for the client and parallel in the daemon (2 cores).
WORKERS = 4
TIMEOUT = 300


def standin_ref() -> str:
    """``docker-image://<staging>/<repo>@DIGEST`` of the stand-in image."""
    d = json.loads(STANDIN_DESCRIPTOR.read_text())
    host = d["staging"]["registry"].split("/", 1)[0]
    return f"docker-image://{host}/{d['staging']['name']}@{d['digest']}"


def assemble_context(dest: Path, dirs: Iterable[str] = ("docker",)) -> Path:
    """Copy ``dirs`` from the runfiles into ``dest`` as real files; return ``dest``."""
    for d in dirs:
        shutil.copytree(d, dest / d, symlinks=False, dirs_exist_ok=True)
    return dest


@dataclass
class Result:
    """One buildx call: the command, exit code, parsed JSON stdout (or None), stderr."""

    cmd: list[str]
    code: int
    data: dict | None
    stderr: str

    def explain(self, lines: int = 25) -> str:
        tail = "\n".join(
            ln for ln in self.stderr.splitlines() if not ln.startswith("#")
        ).splitlines()[-lines:]
        return f"$ {' '.join(self.cmd)}\nexit {self.code}; stderr (tail):\n" + "\n".join(tail)


def command(
    context: Path,
    dockerfile: str,
    call: str,
    stage: str | None = None,
    build_args: Mapping[str, str] | None = None,
    contexts: Iterable[str] = (),
) -> list[str]:
    """``docker buildx build --call=CALL,format=json`` of ``dockerfile`` in ``context``."""
    cmd = ["docker", "buildx", "build", "--progress=plain", "--network=none"]
    cmd += [f"--call={call},format=json", "--file", str(context / dockerfile)]
    if stage:
        cmd += ["--target", stage]
    for key, value in sorted((build_args or {}).items()):
        cmd += ["--build-arg", f"{key}={value}"]
    ref = standin_ref()
    for name in contexts:
        cmd += ["--build-context", f"{name}={ref}"]
    return [*cmd, str(context)]


def run(cmd: list[str]) -> Result:
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=TIMEOUT, check=False)
    try:
        data = json.loads(proc.stdout) if proc.stdout.strip() else None
    except json.JSONDecodeError:
        data = None
    return Result(cmd, proc.returncode, data, proc.stderr)


def run_all(commands: Mapping[str, list[str]]) -> dict[str, Result]:
    """Run every command, ``WORKERS`` at a time; results by key."""
    with ThreadPoolExecutor(max_workers=WORKERS) as pool:
        futures = {key: pool.submit(run, cmd) for key, cmd in commands.items()}
        return {key: f.result() for key, f in futures.items()}


def docker_env_hint() -> str:
    if not os.environ.get("DOCKER_HOST"):
        return (
            "DOCKER_HOST is unset: start the engine with"
            ' eval "$(python3 -m tools.engine env)" (.bazelrc passes it to tests)'
        )
    return ""
