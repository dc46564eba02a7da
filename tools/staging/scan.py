"""Find image descriptors on disk (bazel-out): what staging must keep.

Only `*.json` files of at most 1 MB are read, symlinks are never followed
(runfiles trees are symlinks to files that are also in the tree), and the
insides of `*.runfiles` directories are skipped, so a large bazel-out costs
a directory walk and a few reads.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from tools import places
from tools.staging import descriptor
from tools.staging.errors import StagingError

MAX_DESCRIPTOR_BYTES = 1 << 20


@dataclass(frozen=True)
class Found:
    path: Path
    data: dict

    @property
    def digests(self) -> set[str]:
        """The image's manifest digest and its parents' (a parent's image is needed too)."""
        parents = self.data.get("parents") or {}
        return {self.data["digest"], *(d for d in parents.values() if isinstance(d, str))}


def default_dirs() -> list[Path]:
    """`bazel-out` of the workspace (``places.workspace()``: `bazel run`'s, else this
    checkout's)."""
    base = places.workspace()
    out = base / "bazel-out"
    if not out.is_dir():
        raise StagingError(
            f"no bazel-out in {base} (its descriptors tell which images are in use);"
            " run in the workspace after a build, or pass --descriptors DIR"
        )
    return [out]


def find(dirs: Iterable[Path]) -> Iterator[Found]:
    """Every descriptor under ``dirs`` (each resolved once; nothing below is followed)."""
    for top in dirs:
        root = Path(top).resolve()
        if not root.is_dir():
            raise StagingError(f"descriptor directory {top} does not exist; pass an existing one")
        for path in _json_files(root):
            data = _read(path)
            if descriptor.is_descriptor(data):
                yield Found(path, data)


def referenced_digests(found: Iterable[Found]) -> set[str]:
    return {d for f in found for d in f.digests}


def _json_files(root: Path) -> Iterator[Path]:
    stack = [root]
    while stack:
        try:
            entries = list(os.scandir(stack.pop()))
        except OSError:
            continue
        for entry in entries:
            if entry.is_symlink():
                continue
            if entry.is_dir(follow_symlinks=False):
                if not entry.name.endswith(".runfiles"):
                    stack.append(Path(entry.path))
            elif entry.name.endswith(".json"):
                try:
                    if entry.stat(follow_symlinks=False).st_size <= MAX_DESCRIPTOR_BYTES:
                        yield Path(entry.path)
                except OSError:
                    continue


def _read(path: Path) -> object:
    try:
        return json.loads(path.read_bytes())
    except (OSError, ValueError):
        return None
