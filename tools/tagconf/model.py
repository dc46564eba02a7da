"""The catalogue's data model: frozen dataclasses, no I/O."""

from __future__ import annotations

import difflib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
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
    # The size budget of each image, MiB (2**20 bytes) of its compressed layers plus
    # config, as the registry stores it; None: no budget. ``budget_mib_by_arch``
    # overrides it for some archs or families.
    budget_mib: float | None = None
    budget_mib_by_arch: Mapping[str, float] = field(default_factory=dict)

    def __post_init__(self) -> None:
        object.__setattr__(
            self, "budget_mib_by_arch", MappingProxyType(dict(self.budget_mib_by_arch))
        )

    def budget(self, arch: str | None) -> tuple[float | None, str]:
        """(the budget in MiB of this target's image for ``arch``, the catalogue key it
        comes from); (None, "") without one."""
        if arch is not None and arch in self.budget_mib_by_arch:
            return self.budget_mib_by_arch[arch], f"targets.{self.name}.budget_mib_by_arch.{arch}"
        if self.budget_mib is None:
            return None, ""
        return self.budget_mib, f"targets.{self.name}.budget_mib"


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
    # Arch families: name -> member archs (catalogue order). One image per
    # target holds every member's kernels; its tags carry the family's name
    # where an arch's name goes. `archs` above never includes them.
    families: Mapping[str, tuple[str, ...]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        object.__setattr__(self, "defaults", MappingProxyType(dict(self.defaults)))
        object.__setattr__(self, "groups", MappingProxyType(dict(self.groups)))
        object.__setattr__(self, "families", MappingProxyType(dict(self.families)))

    @property
    def variants(self) -> tuple[str, ...]:
        """Everything an image can be built for: the archs, then the families."""
        return (*self.archs, *self.families)

    def members(self, arch: str) -> tuple[str, ...]:
        """The archs ``arch`` (an arch or a family) holds kernels for."""
        return self.families.get(arch, (arch,))

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
        """The single archs ``target`` is built for (empty for an arch-free target)."""
        if not target.arch:
            return ()
        return target.archs or self.archs

    def target_families(self, target: Target) -> tuple[str, ...]:
        """The families ``target`` is built for: those whose every member it is built for."""
        archs = self.target_archs(target)
        return tuple(
            f for f, members in self.families.items() if archs and set(members) <= set(archs)
        )

    def builds(self, target: Target, arch: str | None) -> bool:
        """Whether ``target`` is built for ``arch``, an arch or a family (a family: for
        every member); always, for an arch-free target."""
        if not target.arch:
            return True
        if arch in self.families:
            return arch in self.target_families(target)
        return arch in self.target_archs(target)

    def not_built(self, target: Target, arch: str | Sequence[str]) -> str:
        """Why ``target`` has no image for ``arch`` (or these archs), in one sentence."""
        asked = [arch] if isinstance(arch, str) else list(arch)
        archs = ", ".join(asked)
        family = [a for a in asked if a in self.families]
        why = ""
        if family:
            why = (
                "; a family gets it only when every member is one of these ("
                + "; ".join(f"{f} = {', '.join(self.families[f])}" for f in family)
                + ")"
            )
        return (
            f"{target.name} is not built for {archs}: {self.path} builds it for"
            f" {', '.join(self.target_archs(target))} only (targets.{target.name}.archs){why}"
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
        """Return ``arch`` (an arch or a family) if known, else raise listing both."""
        if arch in self.variants:
            return arch
        if not self.families:
            raise UsageError(f"--arch {arch}", "unknown arch", nearest(arch, self.archs))
        # `gfx110X` names the families `gfx110X-...`, not the nearest arch.
        low = arch.lower()
        close = [f for f in self.families if f.lower() == low or f.lower().startswith(low + "-")]
        close = close or difflib.get_close_matches(arch, self.variants, n=1, cutoff=0.5)
        known = f"known archs: {', '.join(self.archs)}; families: {', '.join(self.families)}"
        guess = " or ".join(f"'{c}'" for c in close)
        hint = f"did you mean {guess}? {known}" if close else known
        raise UsageError(f"--arch {arch}", "unknown arch or family", hint)
