"""Where the tools keep their files, and how they write one.

A user's state (the engine's, staging's, caches) lives under
``cache_dir()``: ``$XDG_CACHE_HOME/rocm-pytorch-images`` when that is set (an
absolute path, as the XDG spec wants), else ``<home>/.cache/rocm-pytorch-images``;
their settings (the mirrors') under ``config_dir()``, the same with
``$XDG_CONFIG_HOME`` and ``.config``. ``home()`` is ``$HOME``, as for every
other program, except where Bazel took it away: an action runs without HOME
(``--incompatible_strict_action_env``), and a test without it or with its
``$TEST_TMPDIR`` in it (the test runner's stand-in, not the user's); there it
is the account's home from the password database. A path a user types is relative to where
they typed it, also under ``bazel run``; a state dir in the environment
(``ROCM_PYTORCH_*_DIR``) and ``$XDG_*_HOME`` must be absolute (``SettingError``,
tools/envvars.py), since each process that reads them runs somewhere else.

The project's own files are the workspace's (``workspace()``): the clone `bazel
run` was started in, else the checkout these tools are in.

A build's own files are not the user's: BuildKit's log of an image goes to
the execution root's ``bazel-out/logs/`` (images/private/image.bzl), so each
output base (each clone) keeps its own.
"""

from __future__ import annotations

import os
import pwd
from collections.abc import Mapping
from pathlib import Path

from tools.envvars import SettingError

NAME = "rocm-pytorch-images"


def home() -> str:
    """``$HOME`` when it is an absolute path other than the test's ``$TEST_TMPDIR`` (which
    Bazel's test runner puts there in place of the user's), else the account's home from
    the password database (a Bazel action runs without HOME)."""
    given = os.environ.get("HOME", "")
    if os.path.isabs(given) and given != os.environ.get("TEST_TMPDIR"):
        return given
    try:
        return pwd.getpwuid(os.getuid()).pw_dir
    except KeyError:
        raise OSError(
            f"no home: HOME is {given or 'unset'} and uid {os.getuid()} has no passwd entry;"
            " set HOME (or XDG_CACHE_HOME and XDG_CONFIG_HOME)"
        ) from None


def _xdg(env: str, default: tuple[str, ...]) -> Path:
    given = os.environ.get(env, "")
    if given and not os.path.isabs(given):
        # the XDG base directory spec calls it invalid: a typo must not send the
        # state somewhere else unsaid
        raise SettingError(
            f"{env}={given} is not an absolute path (the XDG base directory spec calls it"
            " invalid); make it absolute or unset it"
        )
    base = Path(given) if given else Path(home()).joinpath(*default)
    return base / NAME


def user_home(environ: Mapping[str, str] | None = None) -> str:
    """``$HOME`` of ``environ`` (default: this process's; where the docker CLI finds its
    config), else ``home()``."""
    environ = os.environ if environ is None else environ
    given = environ.get("HOME", "")
    return given if os.path.isabs(given) else home()


def cache_dir() -> Path:
    """``$XDG_CACHE_HOME/rocm-pytorch-images``, else ``<home>/.cache/rocm-pytorch-images``:
    where a user's state and caches live."""
    return _xdg("XDG_CACHE_HOME", (".cache",))


def config_dir() -> Path:
    """``$XDG_CONFIG_HOME/rocm-pytorch-images``, else
    ``<home>/.config/rocm-pytorch-images``: where a user's settings live."""
    return _xdg("XDG_CONFIG_HOME", (".config",))


def workspace() -> Path:
    """The project's workspace (its clone): ``$BUILD_WORKSPACE_DIRECTORY`` under `bazel
    run`, else the checkout these tools are in (this file's, followed through the
    symlinks of Bazel's runfiles and sandboxes to its source): where a script run with
    python3 (bench/, .ci/), ``python3 -m tools.X`` or a test finds the project's files.
    The one way the tools find it."""
    given = os.environ.get("BUILD_WORKSPACE_DIRECTORY")
    return Path(given) if given else Path(__file__).resolve().parents[1]


def user_path(text: str) -> Path:
    """A path the user typed: under `bazel run`, relative to where they typed it."""
    path = Path(text)
    base = os.environ.get("BUILD_WORKING_DIRECTORY")
    return Path(base) / path if base and not path.is_absolute() else path


def log_file(path: str) -> Path | None:
    """A build's log file ``path`` (`~` is ``home()``), its directory made; None for ""."""
    if not path:
        return None
    if path.startswith("~/"):
        path = home() + path[1:]
    log = Path(path)
    log.parent.mkdir(parents=True, exist_ok=True)
    return log


def state_dir(env: str, name: str) -> Path:
    """``$env``, an absolute path, else ``cache_dir()/<name>``; ``SettingError`` for a
    relative ``$env``: the workspace status command, each build action and `bazel run`
    run in directories of their own, so it would name a different dir in each."""
    configured = os.environ.get(env, "").strip()
    if not configured:
        return cache_dir() / name
    check_absolute(env, configured)
    return Path(configured)


def check_absolute(env: str, configured: str) -> None:
    """``SettingError`` for a relative ``$env`` (``configured``): the workspace status
    command, each build action and `bazel run` run in directories of their own, so it
    would name a different path in each."""
    if configured and not os.path.isabs(configured):
        raise SettingError(
            f"{env}={configured} is not an absolute path (builds and `bazel run` each run in"
            " a directory of their own, so each would find another one); make it absolute"
            " or unset it"
        )


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
