"""The fixture family's wheel layouts (runfiles of the e2e tests) and a throwaway registry."""

from __future__ import annotations

import json
from pathlib import Path

from tests.registry.fixtures import Registry
from tests.wheelhouse.fakes import CATALOG, WHEELS

E2E = Path("tests/e2e")  # runfiles path of //tests/e2e outputs
ARCH = "gfx950"


def name(target: str, arch: str = ARCH) -> str:
    return f"{target}.{arch}" if CATALOG.target(target).arch else target


def layout(target: str, arch: str = ARCH) -> Path:
    return E2E / f"{name(target, arch)}.layout"


def metadata(target: str, arch: str = ARCH) -> dict:
    return json.loads((E2E / f"{name(target, arch)}.json").read_text())


def family_metadata(arch: str = ARCH) -> dict[str, dict]:
    return {t: metadata(t, arch) for t in WHEELS}


def start_registry(root: Path) -> Registry:
    """A plain-HTTP docker-registry on a free loopback port, storing under ``root``."""
    return Registry(root)
