"""The catalogue's data model: frozen dataclasses, no I/O."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType

from tools.tagconf.errors import UsageError, nearest

# Template variable that is not a [defaults] key: the GPU architecture.
ARCH_VAR = "ARCH"
# The [defaults] key that forms the immutable tag; never used in templates.
VCS_REF_KEY = "VCS_REF"


@dataclass(frozen=True)
class Target:
    """One image of the family, as the catalogue describes it."""

    name: str
    repository: str
    tag: str  # versioned tag template, e.g. "${PYTORCH_VERSION}-${ARCH}"
    arch: bool  # True: one image per GPU architecture
    dockerfile: str
    stage: str
    parents: tuple[str, ...]
    floating_suffix: str = ""


@dataclass(frozen=True)
class Catalog:
    """The whole validated catalogue."""

    path: str
    registry: str
    defaults: Mapping[str, str]
    archs: tuple[str, ...]
    default_arch: str
    targets: tuple[Target, ...]
    groups: Mapping[str, tuple[str, ...]]
    source: str = ""  # org.opencontainers.image.source of every image

    def __post_init__(self) -> None:
        object.__setattr__(self, "defaults", MappingProxyType(dict(self.defaults)))
        object.__setattr__(self, "groups", MappingProxyType(dict(self.groups)))

    @property
    def target_names(self) -> tuple[str, ...]:
        return tuple(t.name for t in self.targets)

    def target(self, name: str) -> Target:
        """The target called ``name``; a UsageError suggests the nearest."""
        for t in self.targets:
            if t.name == name:
                return t
        raise UsageError(f"--target {name}", "unknown target", nearest(name, self.target_names))

    def group(self, name: str) -> tuple[str, ...]:
        """Members of group ``name`` in catalogue order."""
        if name not in self.groups:
            raise UsageError(f"--group {name}", "unknown group", nearest(name, self.groups))
        members = set(self.groups[name])
        return tuple(n for n in self.target_names if n in members)

    def check_arch(self, arch: str) -> str:
        """Return ``arch`` if known, else raise listing the known ones."""
        if arch not in self.archs:
            raise UsageError(f"--arch {arch}", "unknown arch", nearest(arch, self.archs))
        return arch
