"""The catalogue's data model: frozen dataclasses, no I/O."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
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
    # The archs an arch target is built for, in catalogue order; empty: every
    # known arch. aiter's kernels build for gfx942 and gfx950 only.
    archs: tuple[str, ...] = ()
    # Parents a child builds without on the archs they are not built for
    # (the child's Dockerfile then gets an empty context holding /NOT-BUILT).
    optional_parents: tuple[str, ...] = ()


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

    def target_archs(self, target: Target) -> tuple[str, ...]:
        """The archs ``target`` is built for (empty for an arch-free target)."""
        if not target.arch:
            return ()
        return target.archs or self.archs

    def builds(self, target: Target, arch: str | None) -> bool:
        """Whether ``target`` is built for ``arch`` (always, for an arch-free target)."""
        return not target.arch or arch in self.target_archs(target)

    def not_built(self, target: Target, arch: str | Sequence[str]) -> str:
        """Why ``target`` has no image for ``arch`` (or these archs), in one sentence."""
        archs = arch if isinstance(arch, str) else ", ".join(arch)
        return (
            f"{target.name} is not built for {archs}: {self.path} builds it for"
            f" {', '.join(self.target_archs(target))} only (targets.{target.name}.archs)"
        )

    def check_built(self, target: Target, arch: str, where: str) -> str:
        """Return ``arch`` if ``target`` is built for it, else raise naming the archs it is."""
        if not self.builds(target, arch):
            raise UsageError(
                where,
                self.not_built(target, arch),
                f"ask for one of {', '.join(self.target_archs(target))}",
            )
        return arch

    def check_arch(self, arch: str) -> str:
        """Return ``arch`` if known, else raise listing the known ones."""
        if arch not in self.archs:
            raise UsageError(f"--arch {arch}", "unknown arch", nearest(arch, self.archs))
        return arch
