"""Where the tools keep their files, and how they write one.

A user's state (the engine's, staging's, the mirrors' settings, caches)
lives under ``<home>/.cache/rocm-pytorch-images/``, with home from the
password database, never ``$HOME``: Bazel actions run without HOME and tests
with HOME in a temporary directory, and a build, a test and a shell of one
user must all find the same files. A path a user types is relative to where
they typed it, also under ``bazel run``.

Two things follow ``$HOME`` instead, as the docker CLI does: the docker config
(``$DOCKER_CONFIG``, else ``$HOME/.docker``) and the builders cache
(``$XDG_CACHE_HOME/rocm-pytorch-images/builders``, else ``$HOME/.cache/...``),
which records what that docker config's builder selection and engine are.
The Docker actions get the client's HOME and XDG_CACHE_HOME with its other
settings (tools/client_env.py), so a build follows the shell's; without HOME
both are the account's, where the docker CLI looks too.
"""

from __future__ import annotations

import os
import pwd
from collections.abc import Mapping
from pathlib import Path

CACHE_DIR = (".cache", "rocm-pytorch-images")


def home() -> str:
    """The account's home from the password database (not $HOME, which Bazel tests change)."""
    try:
        return pwd.getpwuid(os.getuid()).pw_dir
    except KeyError:
        return os.path.expanduser("~")


def user_home(environ: Mapping[str, str] | None = None) -> str:
    """``$HOME`` when set (where the docker CLI finds its config), else the account's."""
    environ = os.environ if environ is None else environ
    return environ.get("HOME") or home()


def cache_home() -> Path:
    """``$XDG_CACHE_HOME``, else ``<user_home>/.cache``: the builders cache's parent.

    ValueError (one line) for a relative XDG_CACHE_HOME, which the XDG base directory
    spec calls invalid: a typo must not send the cache somewhere else unsaid.
    """
    configured = os.environ.get("XDG_CACHE_HOME")
    if configured:
        if not os.path.isabs(configured):
            raise ValueError(
                f"XDG_CACHE_HOME={configured} is not an absolute path (the XDG base directory"
                " spec calls it invalid); make it absolute or unset it"
            )
        return Path(configured)
    return Path(user_home(), ".cache")


def user_path(text: str) -> Path:
    """A path the user typed: under `bazel run`, relative to where they typed it."""
    path = Path(text)
    base = os.environ.get("BUILD_WORKING_DIRECTORY")
    return Path(base) / path if base and not path.is_absolute() else path


def log_file(path: str) -> Path | None:
    """A build's log file ``path`` with `~` as the account's home (not $HOME: actions run
    without it), its directory made; None for ""."""
    if not path:
        return None
    if path.startswith("~/"):
        path = home() + path[1:]
    log = Path(path)
    log.parent.mkdir(parents=True, exist_ok=True)
    return log


def state_dir(env: str, name: str) -> Path:
    """``$env`` (made absolute), else <home>/.cache/rocm-pytorch-images/<name>."""
    configured = os.environ.get(env)
    if configured:
        return Path(configured).absolute()
    return Path(home()).joinpath(*CACHE_DIR, name)


def write_atomic(path: Path, text: str, mode: int | None = None) -> None:
    """Write ``text`` to ``path`` (its directory made) through a temporary file of this
    process renamed over it: a reader, or a writer in another process, never sees half."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}")
    tmp.unlink(missing_ok=True)
    # created with ``mode`` (umask aside): a secret is never readable, not even for a moment
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600 if mode is None else mode)
    with os.fdopen(fd, "w") as f:
        f.write(text)
    tmp.chmod(0o644 if mode is None else mode)
    tmp.replace(path)


def put(path: Path, text: str, mode: int = 0o644) -> None:
    """Write ``text`` atomically (``write_atomic``), only when the file differs."""
    try:
        if path.read_text() == text and (path.stat().st_mode & 0o777) == mode:
            return
    except OSError:
        pass
    write_atomic(path, text, mode)
