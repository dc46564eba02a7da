"""Image build specs: everything one image build needs, as JSON-ready data.

The image rule runs `tagconf spec` once per target and arch; the build tool
and the push tool read the result and derive nothing themselves.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from string import Template

from tools.oci.reference import Reference
from tools.tagconf.model import ARCH_VAR, VCS_REF_KEY, Catalog, Target
from tools.tagconf.tags import render_tags

# Build arg that carries the GPU architecture to the Dockerfiles.
ARCH_BUILD_ARG = "PYTORCH_ROCM_ARCH"
# rocm-pytorch's own label namespace (next to the OCI standard labels).
LABEL_PREFIX = "org.rocm-pytorch.image"
NOARCH = "noarch"


def upstream_ref(values: Mapping[str, str]) -> str:
    """The upstream image reference: UPSTREAM_IMAGE tagged with ROCM_VERSION."""
    return f"{values['UPSTREAM_IMAGE']}:{values['ROCM_VERSION']}"


def cache_ref(cache_registry: str, target: Target, arch: str | None, versioned: str) -> str:
    """BuildKit cache reference: `<registry>/<repository>-cache:<stage>_<arch>_<versioned>`.

    The stage is in the tag because pytorch and pytorch-test share a
    repository; arch-free targets use `noarch`. `_` never occurs in stage
    or arch names, so `prune-cache` groups tags by `<stage>_<arch>` and keeps
    the newest N versions of each.
    """
    tag = f"{cache_group(target.stage, arch)}_{versioned}"
    return str(Reference.at(cache_registry, f"{target.repository}-cache", tag))


def template_keys(target: Target) -> list[str]:
    """The catalogue keys ``target``'s versioned tag is made of (ARCH aside)."""
    return sorted(set(Template(target.tag).get_identifiers()) - {ARCH_VAR})


def value_label(key: str) -> str:
    """The label that carries catalogue value ``key``: ROCM_VERSION -> ...image.rocm-version.

    Tools read versions from these labels, never back out of a tag: a tag is
    ambiguous once a value holds a `-` (TRITON_VERSION=3.9.0-rc1).
    """
    return f"{LABEL_PREFIX}.{key.lower().replace('_', '-')}"


def cache_group(stage: str, arch: str | None) -> str:
    """The `<stage>_<arch>` prefix that groups one image's cache tags."""
    return f"{stage}_{arch or NOARCH}"


def build_spec(
    catalog: Catalog,
    target: Target,
    arch: str | None,
    values: Mapping[str, str],
    cache_registry: str = "",
    reads: Callable[[Mapping[str, str]], set[str]] | None = None,
    optional_args: Mapping[str, str] | None = None,
    upstream_digests: Mapping[str, str] | None = None,
) -> dict[str, object]:
    """What shapes the bytes of ``target`` for ``arch``: the ImageBuild action's only spec.

    No registry, no tags, no VCS_REF: changing where or under which tags an
    image is published never rebuilds it. The commit reaches the published
    image as its immutable ``-g<VCS_REF>`` tag, not as a build arg or label
    (a label would change every image's digest on every commit).
    The cache ref is here because the build reads and writes that cache.
    ``reads``, given the build args, names those the Dockerfile's stage reads
    (the others are dropped, so changing one rebuilds nothing).
    ``optional_args`` are build args beyond the catalogue's keys (a Dockerfile's
    own optional ARGs, ``--define UCX_REF=...``): content, never tags.
    ``upstream_digests`` (images/upstream.lock): when it has the upstream ref and the
    stages read UPSTREAM_IMAGE (one starts FROM the upstream), ``upstream_digest``.
    """
    tags = render_tags(catalog, target, arch, values)
    build_args = {k: v for k, v in values.items() if k != VCS_REF_KEY}
    if tags.arch:
        # A family: every member, `;`-separated as PyTorch's PYTORCH_ROCM_ARCH
        # (and docker/scripts) take a list of archs.
        build_args[ARCH_BUILD_ARG] = ";".join(catalog.members(tags.arch))
    build_args.update(optional_args or {})
    if reads is not None:
        names = reads(build_args)
        build_args = {k: v for k, v in build_args.items() if k in names}
    labels = {
        "org.opencontainers.image.title": target.repository,
        "org.opencontainers.image.version": tags.versioned,
        f"{LABEL_PREFIX}.target": target.name,
        f"{LABEL_PREFIX}.arch": tags.arch or NOARCH,
    }
    if tags.arch in catalog.families:
        labels[f"{LABEL_PREFIX}.family-archs"] = ";".join(catalog.members(tags.arch))
    for key in template_keys(target):
        labels[value_label(key)] = values[key]
    if catalog.source:
        labels["org.opencontainers.image.source"] = catalog.source
    by_name = {t.name: t for t in catalog.targets}
    absent = {
        p: catalog.not_built(by_name[p], tags.arch)
        for p in target.optional_parents
        if not catalog.builds(by_name[p], tags.arch)
    }
    spec: dict[str, object] = {
        "target": target.name,
        "arch": tags.arch,
        "repository": target.repository,
        "dockerfile": target.dockerfile,
        "stage": target.stage,
        "parents": [p for p in target.parents if p not in absent],
        "build_args": build_args,
        "labels": labels,
        "upstream": upstream_ref(values),
        "cache_ref": (
            cache_ref(cache_registry, target, tags.arch, tags.versioned) if cache_registry else None
        ),
    }
    locked = (upstream_digests or {}).get(upstream_ref(values))
    if locked and "UPSTREAM_IMAGE" in build_args:
        spec["upstream_digest"] = locked
    if absent:
        # Optional parents not built for this arch: the build passes each as an
        # empty context holding only /NOT-BUILT (this sentence).
        spec["absent_parents"] = absent
    return spec


def budget_of(
    target: Target, arch: str | None, overrides: Mapping[str, tuple[float, str]] | None = None
) -> dict[str, object] | None:
    """The image's size budget: {"mib": N, "from": where it is set}, or None.

    ``overrides`` (target name -> (MiB, where)) replace the catalogue's: the fixture
    family's own budgets (``tagconf spec --budgets``), its images being KBs.
    """
    if overrides and target.name in overrides:
        mib, where = overrides[target.name]
    else:
        mib, where = target.budget(arch)
    return None if mib is None else {"mib": mib, "from": where}


def image_spec(
    catalog: Catalog,
    target: Target,
    arch: str | None,
    values: Mapping[str, str],
    registry: str | None = None,
    cache_registry: str = "",
    budgets: Mapping[str, tuple[float, str]] | None = None,
    upstream_digests: Mapping[str, str] | None = None,
) -> dict[str, object]:
    """The build spec of ``target`` for ``arch`` plus where and how it is published, and
    its size budget (checked after the build, never part of it: a new budget rebuilds
    nothing)."""
    tags = render_tags(catalog, target, arch, values)
    registry = catalog.registry if registry is None else registry
    return {
        "budget": budget_of(target, arch, budgets),
        **build_spec(
            catalog, target, arch, values, cache_registry, upstream_digests=upstream_digests
        ),
        "registry": registry,
        "vcs_ref": values.get(VCS_REF_KEY) or None,
        "tags": {
            "versioned": tags.versioned,
            "floating": tags.floating,
            "immutable": tags.immutable,
        },
        "refs": tags.refs("all", registry),
    }
