"""The family as a `docker buildx bake` file, from the catalogue.

What the seed's own system would have run: one bake target per image
(``<target>-<arch>``, or ``<target>`` when arch-free), each with the
catalogue's Dockerfile, stage, build args, labels and published refs, and
its parents as ``target:`` contexts, so bake builds the whole graph in one
invocation. For users who want to compare (bench/) or migrate. It is not
what the project builds with: there is no staging, no content key and no
reproducible export; each image is whatever BuildKit makes of it.

The build context is the repository root (``.``): the Dockerfiles COPY
repository-relative paths. An optional parent not built for an arch is a
local context holding only ``NOT-BUILT`` (as the image build passes it);
those directories are written under ``absent_dir``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

from tools.tagconf.errors import UsageError
from tools.tagconf.model import Catalog, Target
from tools.tagconf.spec import image_spec

NETWORKS = ("host", "none", "default")


def bake_name(target: Target, arch: str | None) -> str:
    """A bake target name: ``pytorch-gfx950``, or ``triton-wheel`` when arch-free."""
    return f"{target.name}-{arch}" if target.arch and arch else target.name


def closure(catalog: Catalog, names: Iterable[str]) -> list[str]:
    """``names`` and every parent they need, catalogue order."""
    want = set()
    todo = list(names)
    while todo:
        name = todo.pop()
        if name in want:
            continue
        want.add(name)
        t = catalog.target(name)
        todo += [*t.parents, *t.optional_parents]
    return [t.name for t in catalog.targets if t.name in want]


def bake_file(
    catalog: Catalog,
    names: Sequence[str],
    archs: Sequence[str],
    values: Mapping[str, str],
    *,
    registry: str | None = None,
    network: str = "host",
    secrets: Mapping[str, Path] | None = None,
    absent_dir: Path | None = None,
    upstream: str = "",
    dockerfile_dir: str = "",
    optional_args: Mapping[str, str] | None = None,
) -> tuple[dict, dict[Path, str]]:
    """(the bake file as JSON data, {absent parent dir: why}) for ``names`` by ``archs``.

    The group ``default`` holds the images asked for; their parents are
    targets too (bake builds them first). ``secrets``: {id: file} given to
    every build (the mirror secrets: ``python3 -m tools.mirrors render DIR``).
    ``upstream``: an image reference that stands in for the catalogue's
    upstream image (a mirror, or the rehearsal's stand-in in staging), or
    ``target:NAME``, a target of the file. ``dockerfile_dir``: take each
    Dockerfile's file name from there (a family of twins, as tests/e2e's).
    ``optional_args``: build args beyond the catalogue's keys (``--arg``, as
    ``tagconf spec --arg``), given to every target as bake's ``--set
    '*.args.NAME=VALUE'`` would: a stage that declares no such ARG ignores it
    (it enters no cache key), as it does the catalogue's keys it does not read.
    """
    if network not in NETWORKS:
        raise UsageError(f"--network {network}", "unknown network", "use host, none or default")
    by_name = {t.name: t for t in catalog.targets}
    asked = set(names)
    targets: dict[str, dict] = {}
    default: list[str] = []
    absent: dict[Path, str] = {}
    for name in closure(catalog, names):
        target = by_name[name]
        for arch in archs if target.arch else [None]:
            if not catalog.builds(target, arch):
                continue
            spec = image_spec(catalog, target, arch, values, registry)
            dockerfile = str(spec["dockerfile"])
            if dockerfile_dir:
                dockerfile = f"{dockerfile_dir.rstrip('/')}/{dockerfile.rpartition('/')[2]}"
            entry: dict[str, object] = {
                "context": ".",
                "dockerfile": dockerfile,
                "args": {**spec["build_args"], **(optional_args or {})},
                "labels": spec["labels"],
                "tags": spec["refs"],
                "network": network,
            }
            if spec["stage"]:
                entry["target"] = spec["stage"]
            contexts = {p: "target:" + bake_name(by_name[p], spec["arch"]) for p in spec["parents"]}
            for parent, why in spec.get("absent_parents", {}).items():
                if absent_dir is None:
                    raise UsageError(
                        f"{bake_name(target, arch)}",
                        f"its optional parent {parent} is not built for {arch}",
                        "pass --absent-dir DIR: the bake file names an empty context there",
                    )
                where = absent_dir / f"{parent}-{arch}"
                absent[where] = why
                contexts[parent] = str(where)
            if upstream:
                named = upstream if upstream.startswith("target:") else f"docker-image://{upstream}"
                contexts[str(spec["upstream"])] = named
            if contexts:
                entry["contexts"] = dict(sorted(contexts.items()))
            if secrets:
                entry["secret"] = [f"id={i},src={f}" for i, f in sorted(secrets.items())]
            targets[bake_name(target, arch)] = entry
            if name in asked:
                default.append(bake_name(target, arch))
    return {"group": {"default": {"targets": default}}, "target": targets}, absent
