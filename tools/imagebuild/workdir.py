"""Where an image build keeps its build context and rendered mirror secrets while it runs.

BuildKit reads the context from a directory and each secret from a file, so
they must be on disk for the length of the build; the secrets include the
mirrors' netrc (passwords), pip.conf, gitconfig and the CA bundle. They live
in one private directory per build, in a per-user one that only this user
can read (tools/places.py ``cache_dir``)::

    <cache dir>/imagebuild/          0700
        .lock                        flock: one build at a time creates or cleans
        <pid>-<random>/              0700, one running build (flock held on it)
            context/  absent/  metadata.json  buildx.log (without --log)
            secrets/                 0700; one file per secret, 0600

A build removes its directory when it ends (an error, Bazel's SIGTERM of a
worker). One that was SIGKILLed cannot; the kernel drops its lock, though,
and every build (a staging hit too) removes, when it starts and before it
makes its own, each directory whose lock it can take: nothing of a killed
build outlives the start of the next build of this user.
A lock, not a pid, says "running": it dies with its process, a reused pid
does not fool it, and another host sharing the home has its own locks.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import shutil
import stat
import tempfile
from collections.abc import Iterator
from pathlib import Path

from tools import places

NAME = "imagebuild"


class WorkDirError(Exception):
    """The per-user directory is not this user's alone; one line, with the fix."""


def root() -> Path:
    """``<cache dir>/imagebuild`` (``$XDG_CACHE_HOME``, else ``$HOME/.cache``)."""
    return places.cache_dir() / NAME


def private(path: Path) -> Path:
    """``path`` made (0700) if missing; this user's and 0700, or WorkDirError."""
    path.mkdir(mode=0o700, parents=True, exist_ok=True)
    st = path.lstat()
    if not stat.S_ISDIR(st.st_mode) or st.st_uid != os.getuid():
        raise WorkDirError(
            f"{path} is not a directory of this user (uid {os.getuid()}); the image builds"
            " keep their secrets there: remove it, or set XDG_CACHE_HOME to a directory of"
            " your own"
        )
    if st.st_mode & 0o077:
        path.chmod(0o700)
    return path


@contextlib.contextmanager
def _locked(base: Path) -> Iterator[None]:
    fd = os.open(base / ".lock", os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


def clean(base: Path) -> list[Path]:
    """Remove the directories of ``base`` no running build holds; what went. The caller
    holds ``base``'s lock (``build_dir`` does)."""
    gone = []
    for entry in sorted(base.iterdir()):
        if entry.name.startswith("."):
            continue
        try:
            fd = os.open(entry, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
        except OSError:
            if entry.is_symlink() or entry.is_file():
                entry.unlink(missing_ok=True)
                gone.append(entry)
            continue
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            continue  # a running build's
        else:
            try:
                shutil.rmtree(entry)
            except OSError as e:
                raise WorkDirError(
                    f"cannot remove {entry}, a killed image build's context and secrets: {e};"
                    " remove it by hand"
                ) from None
            gone.append(entry)
        finally:
            os.close(fd)
    return gone


def sweep(base: Path | None = None) -> list[Path]:
    """Remove the killed builds' directories (``clean`` under the lock); what went."""
    base = private(base or root())
    with _locked(base):
        return clean(base)


@contextlib.contextmanager
def build_dir(base: Path | None = None) -> Iterator[Path]:
    """A private directory (0700) of this build, locked while the ``with`` block runs and
    removed after it; the dead builds' directories are removed first."""
    base = private(base or root())
    with _locked(base):
        clean(base)
        path = Path(tempfile.mkdtemp(prefix=f"{os.getpid()}-", dir=base))  # 0700
        fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)  # new: nobody else has it
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)
        os.close(fd)
