"""Wheel images from local OCI layouts (what Bazel's image rules write).

An image rule writes ``<name>.layout/`` (OCI layout, one manifest) and
``<name>.json`` (target, arch, repository, tags) side by side; the image's
config carries the same identity as labels, so a layout without its JSON is
identified too.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from pathlib import Path

from tools.registry.errors import RegistryError
from tools.registry.layout import blob_path, read_layout
from tools.tagconf.model import Catalog
from tools.wheelhouse.errors import WheelhouseError
from tools.wheelhouse.model import WheelImage, identify

SUFFIX = ".layout"


def find_layouts(dirs: Iterable[Path]) -> list[Path]:
    """Every ``*.layout`` directory under ``dirs`` (recursively), sorted.

    Does not descend into layouts or ``*.runfiles`` trees, so ``bazel-out``
    itself can be given: images built under an arch transition live in
    ``bazel-out/<config>-ST-<hash>/bin/...``, not in ``bazel-bin``.
    """
    found: set[Path] = set()
    for top in dirs:
        if not top.is_dir():
            raise WheelhouseError(
                f"--from-layouts {top}: not a directory",
                "give a directory holding <name>.layout outputs, e.g. bazel-out",
            )
        if top.name.endswith(SUFFIX):
            found.add(top)
            continue
        for root, subdirs, _files in os.walk(top):
            keep = []
            for d in subdirs:
                if d.endswith(SUFFIX) and (Path(root) / d / "index.json").is_file():
                    found.add(Path(root) / d)
                elif not d.endswith((SUFFIX, ".runfiles")):
                    keep.append(d)
            subdirs[:] = keep
    return sorted(found)


def metadata_path(layout: Path) -> Path:
    return layout.with_name(layout.name.removesuffix(SUFFIX) + ".json")


def read_image(path: Path, catalog: Catalog) -> WheelImage | None:
    """The image in layout ``path``, identified; None if nothing names its target."""
    try:
        layout = read_layout(path)
    except RegistryError as e:
        raise WheelhouseError(str(e)) from None
    except (OSError, ValueError, KeyError) as e:
        raise WheelhouseError(f"{path}: cannot read OCI layout ({e})", "rebuild it") from None
    manifest = json.loads(layout.manifest)
    config = json.loads(layout.blobs[0].path.read_bytes())
    labels = (config.get("config") or {}).get("Labels") or {}
    meta_file = metadata_path(path)
    metadata = None
    if meta_file.is_file():
        try:
            metadata = json.loads(meta_file.read_text())
        except ValueError as e:
            raise WheelhouseError(f"{meta_file}: not JSON ({e})", "rebuild the image") from None
        if metadata.get("digest") not in (None, layout.digest):
            raise WheelhouseError(
                f"{meta_file} names {metadata['digest']} but {path} holds {layout.digest}",
                "the two are from different builds; rebuild the image",
            )

    def open_layer(digest: str, _scratch: Path):
        return blob_path(path, digest).open("rb")

    return identify(
        catalog,
        origin=str(path),
        digest=layout.digest,
        labels=labels,
        metadata=metadata,
        layers=tuple(layer["digest"] for layer in manifest.get("layers", [])),
        open_layer=open_layer,
    )


def scan(dirs: Iterable[Path], catalog: Catalog) -> list[WheelImage]:
    """The identified images of every layout under ``dirs`` (unidentified ones dropped)."""
    dirs = list(dirs)
    paths = find_layouts(dirs)
    if not paths:
        raise WheelhouseError(
            f"no <name>.layout directory under {', '.join(map(str, dirs))}",
            "build the wheel images first (bazel build //images:<target> --define arch=...)"
            " and pass bazel-out",
        )
    return [image for p in paths if (image := read_image(p, catalog)) is not None]


def explicit(paths: Iterable[Path], catalog: Catalog) -> list[WheelImage]:
    """The images of layouts named one by one; each must be identifiable."""
    images = []
    for path in paths:
        if not (path / "index.json").is_file():
            raise WheelhouseError(
                f"--layout {path}: not an OCI layout (no index.json)",
                "pass a <name>.layout directory an image rule built",
            )
        image = read_image(path, catalog)
        if image is None:
            raise WheelhouseError(
                f"--layout {path}: cannot tell which image this is (no {metadata_path(path).name}"
                " next to it, no org.rocm-pytorch.image.target label)",
                "pass layouts built by the image rules",
            )
        images.append(image)
    return images
