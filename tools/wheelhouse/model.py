"""What a wheel image is: its identity (target, arch, ROCm version) and where it came from.

The identity comes from the build's descriptor (``<name>.json``: target,
arch, repository), the image's own labels, or the tag it was pulled by, in
that order. The ROCm version is the image's ``org.rocm-pytorch.image.rocm-version``
label (tagconf's ``value_label``); only images built before that label
existed have it parsed back from a versioned tag by tagconf's ``parse_tag``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO

from tools.tagconf.model import Catalog
from tools.tagconf.spec import value_label
from tools.tagconf.tags import parse_tag
from tools.wheelhouse.errors import WheelhouseError

LABEL_TARGET = "org.rocm-pytorch.image.target"
LABEL_ARCH = "org.rocm-pytorch.image.arch"
LABEL_VERSION = "org.opencontainers.image.version"
LABEL_ROCM = value_label("ROCM_VERSION")
NOARCH = "noarch"
ROCM_KEY = "ROCM_VERSION"

# open_layer(digest, scratch) -> readable binary file of that layer blob
LayerOpener = Callable[[str, Path], AbstractContextManager[BinaryIO]]


@dataclass(frozen=True)
class WheelImage:
    """One image of the family, identified, with a way to read its layers."""

    target: str
    arch: str | None  # None: arch-free (triton-wheel)
    repository: str
    rocm_version: str | None  # None: no versioned tag to parse it from
    digest: str
    origin: str  # descriptor path or registry ref, for messages
    layers: tuple[str, ...] = ()
    open_layer: LayerOpener | None = field(default=None, compare=False, repr=False)

    def label(self) -> str:
        return f"{self.target} ({self.arch or NOARCH})"

    def describe(self) -> str:
        return f"{self.label()} from {self.origin}"


def _arch(value: str | None) -> str | None:
    return None if value in (None, "", NOARCH) else value


def identify(
    catalog: Catalog,
    *,
    origin: str,
    digest: str,
    labels: Mapping[str, str] | None = None,
    metadata: Mapping | None = None,
    pulled: tuple[str, str] | None = None,
    layers: tuple[str, ...] = (),
    open_layer: LayerOpener | None = None,
) -> WheelImage | None:
    """The identity of one image, or None if nothing says which target it is.

    ``metadata`` is what the image build's descriptor says (target, arch,
    repository); ``labels`` the config's labels; ``pulled`` the (repository,
    tag) it was pulled by.
    """
    labels = labels or {}
    parsed = parse_tag(catalog, *pulled) if pulled else None

    if metadata and metadata.get("target"):
        target, arch = metadata["target"], _arch(metadata.get("arch"))
        label_target = labels.get(LABEL_TARGET)
        label_arch = labels.get(LABEL_ARCH)
        if (label_target and label_target != target) or (label_arch and _arch(label_arch) != arch):
            raise WheelhouseError(
                f"{origin}: its descriptor says {target} ({arch or NOARCH}) but the image's"
                f" labels say {label_target} ({label_arch})",
                "rebuild it with bazel so that both come from one build",
            )
    elif labels.get(LABEL_TARGET):
        target, arch = labels[LABEL_TARGET], _arch(labels.get(LABEL_ARCH))
    elif parsed:
        target, arch = parsed.target, parsed.arch
    else:
        return None
    arch_known = bool(metadata and "arch" in metadata) or LABEL_ARCH in labels
    if not arch_known and parsed and parsed.target == target:
        arch = parsed.arch

    repository = (
        (metadata or {}).get("repository")
        or (pulled[0] if pulled else None)
        or next((t.repository for t in catalog.targets if t.name == target), target)
    )
    # the image's own label first: a tag cannot be parsed back reliably once
    # a value holds a `-` (TRITON_VERSION=3.9.0-rc1); images built before the
    # label existed fall back to parsing their tags
    rocm = labels.get(LABEL_ROCM)
    versioned = [] if rocm else [labels.get(LABEL_VERSION), pulled[1] if pulled else None]
    for tag in versioned:
        if not tag:
            continue
        p = parse_tag(catalog, repository, tag)
        if p is not None and p.target == target and ROCM_KEY in p.values:
            rocm = p.values[ROCM_KEY]
            break
    return WheelImage(target, arch, repository, rocm, digest, origin, tuple(layers), open_layer)
