"""Where this user's engine, staging and mirrors are: the client's settings, outside cache keys.

The actions that talk to Docker (ImageBuild, UpstreamBuild, ImageLayout)
need to know where *this* user's engine socket, docker config, staging
state and mirror settings are. Those paths differ from machine to machine
and say nothing about an image's bytes, so they must not be in an action's
key: with `--action_env=DOCKER_HOST` a second machine sharing the remote
cache and the staging registry re-ran every image build, because its socket
path differed.

So they travel beside the key instead. `tools/workspace_status.sh`, which
Bazel runs with the client's environment before every build, prints them as
volatile status keys (``ROCM_PYTORCH_CLIENT_<NAME> value``); no action
declares volatile-status.txt, so they are in no key. The actions run
unsandboxed in the execution root, where Bazel has just written that file,
and ``apply()`` puts the values into their environment (a variable the
action already has wins). Unset variables are not printed: the tools then
use their defaults (tools/engine's discovery, the per-user staging, the
per-user mirrors file), as a shell would.

    python3 -m tools.client_env status [--start-staging]   # the lines workspace_status.sh prints

``--start-staging`` then starts the embedded staging registry unless it runs
(quietly; ROCM_PYTORCH_STAGING_AUTOSTART=0 turns that off): workspace_status.sh
does both with one interpreter.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping, MutableMapping
from pathlib import Path

PREFIX = "ROCM_PYTORCH_CLIENT_"

# The client's variables the Docker actions read (docs/engine.md).
NAMES = (
    "DOCKER_HOST",
    "DOCKER_CONFIG",
    "BUILDX_NO_DEFAULT_ATTESTATIONS",
    "ROCM_PYTORCH_ENGINE_DIR",
    "ROCM_PYTORCH_ENGINE_AUTOSTART",
    "ROCM_PYTORCH_STAGING_DIR",
    "ROCM_PYTORCH_STAGING_PORT",
    "ROCM_PYTORCH_MIRRORS",
)

# Relative to the execution root, the working directory of every local action.
STATUS_FILE = Path("bazel-out/volatile-status.txt")


def status_lines(environ: Mapping[str, str] | None = None) -> list[str]:
    """The volatile status lines for the set ones of ``NAMES`` (one-line values only)."""
    environ = os.environ if environ is None else environ
    return [
        f"{PREFIX}{name} {environ[name]}"
        for name in NAMES
        if environ.get(name) and "\n" not in environ[name]
    ]


def read(path: Path = STATUS_FILE) -> dict[str, str]:
    """The client's variables a status file holds; {} without one (outside Bazel)."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError:
        return {}
    out = {}
    for line in text.splitlines():
        key, _, value = line.partition(" ")
        name = key.removeprefix(PREFIX)
        if key.startswith(PREFIX) and name in NAMES and value:
            out[name] = value
    return out


def apply(
    path: Path = STATUS_FILE, environ: MutableMapping[str, str] | None = None
) -> dict[str, str]:
    """Put the client's variables of ``path`` into ``environ`` (default: this process's)
    where it lacks them; returns what it set. Only in an execution root (a Bazel
    action's working directory): from a workspace, `bazel-out/` is the last build's."""
    environ = os.environ if environ is None else environ
    if not path.is_absolute() and Path.cwd().parent.name != "execroot":
        return {}
    added = {k: v for k, v in read(path).items() if k not in environ}
    environ.update(added)
    return added


def start_staging() -> None:
    """Start the embedded staging registry unless it runs; never fails, prints nothing."""
    if os.environ.get("ROCM_PYTORCH_STAGING_AUTOSTART", "1") == "0":
        return
    sys.stdout.flush()
    quiet = os.open(os.devnull, os.O_WRONLY)
    os.dup2(quiet, 1)  # the status lines are out; the registry's own words are not status
    os.dup2(quiet, 2)
    try:
        from tools.staging import embedded

        embedded.ensure_running()
    except Exception:
        pass


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv in (["--help"], ["-h"]):
        print(__doc__.strip())
        return 0
    if argv not in (["status"], ["status", "--start-staging"]):
        print("usage: python3 -m tools.client_env status [--start-staging]", file=sys.stderr)
        return 2
    for line in status_lines():
        print(line)
    sys.stdout.flush()
    if "--start-staging" in argv:
        start_staging()
    return 0


if __name__ == "__main__":
    sys.exit(main())
