"""Wheel images from staging: the descriptors Bazel's image builds write.

An image build pushes its image into the staging registry and leaves only
``<name>.json`` in bazel-out, a descriptor (tools/staging/descriptor.py):
target, arch, digest, manifest, config and where staging holds the image.
Discovery and identification read descriptors only (no network); layer
blobs are streamed from the staging registry the descriptor names, on
demand, like --from-registry's. The project's own (embedded) staging
registry is started again if it was stopped since the build (a reboot). An
image staging no longer holds is reported with the fix: forget the stale
descriptors and build again.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from contextlib import contextmanager
from pathlib import Path

from tools.oci.client import RegistryClient
from tools.oci.errors import RegistryError
from tools.staging import StagingError, UnreachableError, resolve
from tools.staging import descriptor as desc
from tools.staging.clients import FORGET, Clients, Lost, check_staged
from tools.tagconf.model import Catalog
from tools.wheelhouse.errors import WheelhouseError
from tools.wheelhouse.model import WheelImage, identify

SUFFIX = ".json"
# Written next to every descriptor by the image rule; never descriptors.
NOT_DESCRIPTORS = (".spec.json", ".build.json", ".size.json")
SKIP_DIRS = (".runfiles", ".layout")
MAX_SIZE = 1 << 20  # descriptors are a few kB; bigger JSON is something else


def _error(e: desc.DescriptorError, prefix: str = "") -> WheelhouseError:
    what, _, fix = str(e).partition("; ")
    return WheelhouseError(prefix + what, fix or "build it again with bazel")


def _candidates(top: Path) -> Iterable[Path]:
    for root, subdirs, files in os.walk(top):
        subdirs[:] = sorted(d for d in subdirs if not d.endswith(SKIP_DIRS))
        for name in sorted(files):
            if name.endswith(SUFFIX) and not name.endswith(NOT_DESCRIPTORS):
                yield Path(root) / name


def _read(path: Path) -> object:
    """Parsed JSON of a small file; None for a big, unreadable or non-JSON one."""
    try:
        if path.stat().st_size > MAX_SIZE:
            return None
        return json.loads(path.read_bytes())
    except (OSError, ValueError):
        return None


def find_descriptors(dirs: Iterable[Path]) -> list[desc.Descriptor]:
    """Every image descriptor under ``dirs`` (recursively), in path order.

    ``bazel-out`` itself can be given: images built under an arch transition
    live in ``bazel-out/<config>-ST-<hash>/bin/...``, not in ``bazel-bin``.
    ``*.runfiles`` trees (copies of what is found elsewhere), ``*.layout``
    directories (OCI layouts: blobs, no descriptors), ``.spec.json`` and
    ``.build.json`` files, files over 1 MB and JSON that is not a descriptor
    are skipped. A file found twice (through two of ``dirs``) counts once.
    """
    found: dict[Path, desc.Descriptor] = {}
    for top in dirs:
        if not top.is_dir():
            raise WheelhouseError(
                f"--from-staging {top}: not a directory",
                "give a directory holding image descriptors (<name>.json), e.g. bazel-out",
            )
        for path in _candidates(top):
            data = _read(path)
            if not desc.is_descriptor(data):
                continue
            try:
                found.setdefault(path.resolve(), desc.from_json(data, path))
            except desc.DescriptorError as e:
                raise _error(e) from None
    return [found[p] for p in sorted(found)]


def load_descriptor(path: Path) -> desc.Descriptor:
    """The descriptor at ``path``, named by the user: anything else is an error."""
    fix = (
        "pass the <name>.json an image target built (bazel-bin/.../<name>.json,"
        " not its .spec.json or .build.json)"
    )
    if path.is_dir():
        raise WheelhouseError(f"--descriptor {path}: a directory, not an image descriptor", fix)
    if not path.is_file():
        raise WheelhouseError(f"--descriptor {path}: no such file", fix)
    if path.stat().st_size > MAX_SIZE:
        raise WheelhouseError(f"--descriptor {path}: over 1 MB, not an image descriptor", fix)
    try:
        data = json.loads(path.read_bytes())
    except (OSError, ValueError) as e:
        raise WheelhouseError(f"--descriptor {path}: not JSON ({e})", fix) from None
    looks_like_one = isinstance(data, dict) and "schema" in data and "staging" in data
    if not desc.is_descriptor(data) and not looks_like_one:
        raise WheelhouseError(f"--descriptor {path}: not an image descriptor", fix)
    try:
        return desc.from_json(data, path)  # a schema or digest mismatch says so
    except desc.DescriptorError as e:
        raise _error(e, "--descriptor ") from None


def labels_of(d: desc.Descriptor) -> dict[str, str]:
    return (d.config.get("config") or {}).get("Labels") or {}


def _start_embedded() -> str:
    """Host of the embedded staging registry, started if it is not running."""
    try:
        return resolve(None).host
    except UnreachableError as e:
        raise RegistryError(f"embedded staging registry: {e}") from None
    except StagingError as e:
        what, _, fix = str(e).partition("; ")
        raise WheelhouseError(f"embedded staging registry: {what}", fix) from None


class StagingSource:
    """Images of descriptors, their layers read from the staging registries they name.

    ``options`` are those of tools.staging.clients.Clients (insecure, ca_file,
    retries, backoff, log).
    """

    def __init__(self, **options) -> None:
        self._clients = Clients(**options, start_embedded=_start_embedded)
        self._descriptors: dict[str, desc.Descriptor] = {}  # by origin

    def close(self) -> None:
        self._clients.close()

    def client(self, d: desc.Descriptor) -> RegistryClient:
        """The client of ``d``'s staging registry (the embedded one started again if stopped)."""
        return self._clients.staging(d)

    # -- identity (descriptors only, no network) ---------------------------------

    def image(self, d: desc.Descriptor, catalog: Catalog) -> WheelImage | None:
        """The identified image ``d`` describes; its layers come from staging."""
        origin = str(d.path) if d.path else d.staging_ref
        self._descriptors[origin] = d
        return identify(
            catalog,
            origin=origin,
            digest=d.digest,
            labels=labels_of(d),
            metadata={"target": d.target, "arch": d.arch, "repository": d.repository},
            layers=tuple(b.digest for b in d.layers),
            open_layer=lambda digest, scratch: self.open_layer(d, digest, scratch),
        )

    def scan(self, dirs: Iterable[Path], catalog: Catalog) -> list[WheelImage]:
        """The images of every descriptor under ``dirs``."""
        dirs = list(dirs)
        found = find_descriptors(dirs)
        if not found:
            raise WheelhouseError(
                f"no image descriptor (<name>.json) under {', '.join(map(str, dirs))}",
                "build the wheel images first (bazel build //images:<target> --define arch=...)"
                " and pass bazel-out",
            )
        return [image for d in found if (image := self.image(d, catalog)) is not None]

    def explicit(self, paths: Iterable[Path], catalog: Catalog) -> list[WheelImage]:
        """The images of descriptors named one by one."""
        images = []
        for path in paths:
            image = self.image(load_descriptor(path), catalog)
            if image is None:
                raise WheelhouseError(
                    f"--descriptor {path}: names no target", "rebuild it with bazel"
                )
            images.append(image)
        return images

    # -- staging -------------------------------------------------------------------

    def _lost(self, d: desc.Descriptor, blob: str = "") -> WheelhouseError:
        return WheelhouseError(
            f"staging has lost {blob + ' of ' if blob else ''}{d.label()} {d.digest}"
            f" ({d.staging_ref}), named by {d.path or 'its descriptor'}",
            FORGET,
        )

    def _unreachable(self, d: desc.Descriptor, e: RegistryError) -> RegistryError:
        return RegistryError(f"reading {d.label()} from staging {d.staging_registry}: {e}")

    def check_staged(self, images: Iterable[WheelImage]) -> None:
        """Before any layer is read: staging still holds each image's manifest and blobs."""
        for image in images:
            d = self._descriptors[image.origin]
            c = self.client(d)
            try:
                check_staged(d, c)
            except Lost as e:
                raise self._lost(d, f"blob {e.blob}" if e.blob else "") from None
            except RegistryError as e:
                raise self._unreachable(d, e) from None

    @contextmanager
    def open_layer(self, d: desc.Descriptor, digest: str, scratch: Path):
        dest = scratch / f"blob-{digest.partition(':')[2]}"
        c = self.client(d)
        try:
            c.download_blob(d.staging_name, digest, dest)
        except RegistryError as e:
            try:
                lost = not c.blob_exists(d.staging_name, digest)
            except RegistryError:
                lost = False
            if lost:
                raise self._lost(d, f"layer {digest}") from None
            raise self._unreachable(d, e) from None
        try:
            with dest.open("rb") as f:
                yield f
        finally:
            dest.unlink(missing_ok=True)
