"""Mirrors: where image builds fetch apt packages, Python packages and git sources.

Settings (tools/mirrors/settings.py) come from a file of the build host, not
from the build graph; an image build resolves them against this host's
configuration (host.py) and hands them to BuildKit as secrets (secrets.py),
which the Dockerfiles in docker/ mount in every RUN step that reaches the
network. The compiler cache of the native builds ([compiler_cache]) is such a
setting too: secrets of the RUN steps that compile, in no image and no cache
key. `python3 -m tools.mirrors show|check|render` (cli.py).
"""

from tools.mirrors.secrets import SECRETS, Resolved, buildx_args, render, resolve
from tools.mirrors.settings import (
    HOST,
    STANDIN_ARCHIVE,
    CompilerCache,
    MirrorError,
    Settings,
    load,
)

__all__ = [
    "HOST",
    "SECRETS",
    "STANDIN_ARCHIVE",
    "CompilerCache",
    "MirrorError",
    "Resolved",
    "Settings",
    "buildx_args",
    "load",
    "render",
    "resolve",
]
