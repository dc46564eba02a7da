"""The fixture family's wheel images (descriptors in runfiles, images in staging).

The image targets are data of the e2e test: Bazel builds them into the
staging registry first and puts their descriptors (``<name>.json``) and
specs (``<name>.spec.json``: tags) at ``tests/e2e/`` in the runfiles.
"""

from __future__ import annotations

import json
from pathlib import Path

from tests.registry.fixtures import Registry
from tests.wheelhouse.fakes import CATALOG, WHEELS
from tools.staging import descriptor as desc

E2E = Path("tests/e2e")  # runfiles path of //tests/e2e outputs
ARCH = "gfx950"
# The fixture family is built with the real catalogue's values: its ROCm version.
ROCM = CATALOG.defaults["ROCM_VERSION"]


def name(target: str, arch: str = ARCH) -> str:
    return f"{target}.{arch}" if CATALOG.target(target).arch else target


def descriptor_path(target: str, arch: str = ARCH) -> Path:
    return E2E / f"{name(target, arch)}.json"


def descriptor(target: str, arch: str = ARCH) -> desc.Descriptor:
    return desc.load(descriptor_path(target, arch))


def spec(target: str, arch: str = ARCH) -> dict:
    return json.loads((E2E / f"{name(target, arch)}.spec.json").read_text())


def family(arch: str = ARCH) -> dict[str, desc.Descriptor]:
    return {t: descriptor(t, arch) for t in WHEELS}


def start_registry(root: Path) -> Registry:
    """A plain-HTTP docker-registry on a free loopback port, storing under ``root``."""
    return Registry(root)
