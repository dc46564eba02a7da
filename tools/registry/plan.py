"""Push plans: which images go where with which tags, read from Bazel's files.

A push target writes a plan JSON listing its images: runfiles paths of each
image's spec (from `tagconf spec`) and descriptor (from the image build; the
image itself is in the staging registry), and its parents' targets::

    {"images": [{"target": "pytorch", "arch": "gfx950", "parents": ["pytorch-base"],
                 "spec": "images/pytorch.gfx950.spec.json",
                 "descriptor": "images/pytorch.gfx950.json"}]}

Tags and refs come from the spec: nothing here derives a tag. `descriptor`
may be absent for plan-only use (`registry plan`). A group's plan may also
hold ``"left_out"``: one sentence per target it leaves out for an arch the
catalogue does not build it for.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from tools.oci.errors import RegistryError
from tools.oci.reference import Reference, split_registry

if TYPE_CHECKING:
    from tools.staging.descriptor import Descriptor


@dataclass(frozen=True)
class PlannedImage:
    target: str
    arch: str | None
    registry: str  # host[:port]/namespace
    repository: str
    tags: tuple[str, ...]  # versioned, floating[, immutable]
    immutable: str | None
    descriptor: Path | None
    parents: tuple[str, ...]
    spec: Path | None = None  # tagconf's spec JSON (provenance reads it)

    @property
    def host(self) -> str:
        return split_registry(self.registry)[0]

    @property
    def name(self) -> str:
        """The repository path on the registry host (namespace/repository)."""
        namespace = split_registry(self.registry)[1]
        return f"{namespace}/{self.repository}" if namespace else self.repository

    def ref(self, tag: str) -> Reference:
        """The image in its registry, tagged ``tag``."""
        return Reference.at(self.registry, self.repository, tag)

    @property
    def refs(self) -> list[str]:
        return [str(self.ref(t)) for t in self.tags]

    @property
    def key(self) -> tuple[str, str | None]:
        return (self.target, self.arch)

    def label(self) -> str:
        return f"{self.target} ({self.arch or 'noarch'})"

    def load_spec(self) -> dict:
        """tagconf's spec of the image (build args, labels, VCS_REF); {} without one."""
        return json.loads(self.spec.read_text()) if self.spec else {}

    def load_descriptor(self) -> Descriptor:
        """The image's descriptor: its digest, manifest and where staging holds it."""
        from tools.staging.descriptor import DescriptorError, load

        if self.descriptor is None:
            raise RegistryError(
                f"{self.label()}: the plan names no descriptor (a `.plan` target's plan);"
                " use the `.push` target, which builds the image"
            )
        try:
            return load(self.descriptor)
        except DescriptorError as e:
            raise RegistryError(f"{self.label()}: {e}") from None


def load_plans(paths: list[Path], registry: str | None = None) -> list[PlannedImage]:
    """Images of the plan files, each once, parents first.

    ``registry`` overrides the registry the specs name.
    """
    images = [image for path in paths for image in _read_plan(path, registry)]
    return order_parents_first(dedupe(images))


def left_out(paths: list[Path]) -> list[str]:
    """Why the plans leave images out (a target not built for an asked-for arch), once each."""
    notes: list[str] = []
    for path in paths:
        try:
            found = json.loads(path.read_text()).get("left_out", [])
        except (OSError, ValueError, AttributeError) as e:
            raise RegistryError(f"{path}: not a push plan ({e}); rebuild the push target") from None
        notes += [n for n in found if n not in notes]
    return notes


def plan_labels(paths: list[Path]) -> list[str]:
    """The Bazel targets the plans were written for (`//images:push_default`), once each.

    A plan names the label of its push target (images/private/push.bzl); a
    `.plan` target's is that push's (`.plan` left off).
    """
    labels: list[str] = []
    for path in paths:
        try:
            label = json.loads(path.read_text()).get("label")
        except (OSError, ValueError, AttributeError) as e:
            raise RegistryError(f"{path}: not a push plan ({e}); rebuild the push target") from None
        if label and label.removesuffix(".plan") not in labels:
            labels.append(label.removesuffix(".plan"))
    return labels


def plan_header(labels: list[str], images: list[PlannedImage]) -> str:
    """One `#` line: what the plan pushes, for which archs, how many images and tags, where.

    e.g. `# //images:push_default for gfx950: 14 images, 42 tags -> HOST/rocm-pytorch`.
    """
    archs = list(dict.fromkeys(i.arch for i in images if i.arch)) or ["noarch"]
    registries = list(dict.fromkeys(i.registry for i in images))
    tags = sum(len(i.tags) for i in images)
    name = ", ".join(labels) or "plan"
    return (
        f"# {name} for {', '.join(archs)}: {len(images)} image{'s' * (len(images) != 1)},"
        f" {tags} tag{'s' * (tags != 1)} -> {', '.join(registries) or '-'}"
    )


def _read_plan(path: Path, registry: str | None) -> list[PlannedImage]:
    try:
        entries = json.loads(path.read_text())["images"]
        return [
            planned_image(
                Path(e["spec"]),
                Path(e["descriptor"]) if e.get("descriptor") else None,
                e.get("parents", []),
                registry,
            )
            for e in entries
        ]
    except (OSError, ValueError, KeyError, TypeError) as e:
        raise RegistryError(
            f"{path}: not a push plan ({type(e).__name__}: {e}); rebuild the push target"
        ) from None


def planned_image(
    spec_path: Path,
    descriptor: Path | None = None,
    parents: list[str] | tuple[str, ...] = (),
    registry: str | None = None,
) -> PlannedImage:
    """One image from tagconf's spec JSON; ``registry`` overrides the spec's."""
    try:
        spec = json.loads(spec_path.read_text())
        tags = spec["tags"]
        return PlannedImage(
            target=spec["target"],
            arch=spec["arch"],
            registry=(registry or spec["registry"]).rstrip("/"),
            repository=spec["repository"],
            tags=tuple(t for t in (tags["versioned"], tags["floating"], tags["immutable"]) if t),
            immutable=tags["immutable"],
            descriptor=descriptor,
            parents=tuple(parents),
            spec=spec_path,
        )
    except (OSError, ValueError, KeyError, TypeError) as e:
        raise RegistryError(
            f"{spec_path}: not a tagconf image spec ({type(e).__name__}: {e});"
            " write it with `tagconf spec`"
        ) from None


def dedupe(images: list[PlannedImage]) -> list[PlannedImage]:
    """Drop repeats (an arch-free image shared by several entries), keep order."""
    seen: set[tuple[str, str | None]] = set()
    out = []
    for image in images:
        if image.key not in seen:
            seen.add(image.key)
            out.append(image)
    return out


def order_parents_first(images: list[PlannedImage]) -> list[PlannedImage]:
    """Stable topological order: an image comes after its parents in the plan."""
    by_target: dict[str, list[PlannedImage]] = {}
    for image in images:
        by_target.setdefault(image.target, []).append(image)

    def parents_of(image: PlannedImage) -> list[tuple[str, str | None]]:
        keys = []
        for parent in image.parents:
            for candidate in by_target.get(parent, []):
                if candidate.arch in (None, image.arch):
                    keys.append(candidate.key)
        return keys

    done: set[tuple[str, str | None]] = set()
    ordered: list[PlannedImage] = []
    pending = list(images)
    while pending:
        for i, image in enumerate(pending):
            if all(p in done for p in parents_of(image)):
                ordered.append(image)
                done.add(image.key)
                del pending[i]
                break
        else:
            raise RegistryError(f"parent cycle among {[i.label() for i in pending]}")
    return ordered


def check_collisions(images: list[PlannedImage]) -> None:
    """Two images of one push must never share a repository:tag."""
    owner: dict[str, str] = {}
    for image in images:
        for ref in image.refs:
            other = owner.setdefault(ref, image.label())
            if other != image.label():
                raise RegistryError(f"{ref}: both {other} and {image.label()} would push it")
