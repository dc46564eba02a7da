"""Where docker credential helpers are looked for: no HTTP library, so the image
builder (and the benches, under the host's python3) use it without the client."""

from __future__ import annotations

import os
from collections.abc import Mapping

HELPER_PATH_ENV = "ROCM_PYTORCH_HELPER_PATH"


def helper_path(environ: Mapping[str, str] | None = None) -> str:
    """PATH of ``environ`` (default: this process's), then the directories of the client's
    PATH that hold docker credential helpers (``$ROCM_PYTORCH_HELPER_PATH``, which a build's
    client settings carry: images/private/client_settings.bzl): where a build looks for
    `docker-credential-<name>` as the user's shell and the push would. Actions run with
    Bazel's fixed PATH, which has no ~/.local/bin or cloud SDK directory."""
    environ = os.environ if environ is None else environ
    path = [d for d in environ.get("PATH", "").split(":") if d]
    extra = [d for d in environ.get(HELPER_PATH_ENV, "").split(":") if d and d not in path]
    return ":".join(path + extra)
