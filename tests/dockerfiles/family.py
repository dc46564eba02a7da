"""What the catalogue says about the Dockerfiles, as the checks need it.

Build args, named contexts and the upstream reference come from tagconf
(image_spec), exactly as the image rule gets them; this module only adds
the few facts the catalogue does not carry, each stated once.
"""

from __future__ import annotations

from collections import defaultdict

from tools.tagconf import catalog as catalog_mod
from tools.tagconf.model import ARCH_VAR, VCS_REF_KEY, Target
from tools.tagconf.spec import ARCH_BUILD_ARG, image_spec
from tools.tagconf.tags import resolve_values

CATALOG = catalog_mod.load("images/catalog.toml")  # runfiles path (cwd = runfiles root)
VALUES = resolve_values(CATALOG)
TARGETS = CATALOG.targets
TARGET_IDS = [t.name for t in TARGETS]

# The targets built FROM the upstream image (UPSTREAM_IMAGE:ROCM_VERSION).
# Every other target reaches it only through its catalogue parents.
UPSTREAM_TARGETS = frozenset({"rocm-runtime", "triton-wheel", "pytorch-src"})

# Build args a Dockerfile may declare beyond the catalogue's keys and
# PYTORCH_ROCM_ARCH: //images never passes them, so each needs a default and
# a `# NAME description` comment (shown by `--call=outline`). Keep this list
# and the Dockerfiles in step: outline_test fails on a difference either way.
OPTIONAL_ARGS: dict[str, dict[str, str]] = {
    # the compiler cache's backend is no build arg: a setting of the build host
    # (tools/mirrors [compiler_cache]), mounted as a secret where builds compile
    "docker/Dockerfile.base": {"SCCACHE_VERSION": "0.16.0"},
    "docker/Dockerfile.aiter": {"AITER_REF": "v0.1.10.post3"},
    "docker/Dockerfile.nixl": {"UCX_REF": "v1.19.0"},
    "docker/Dockerfile.vllm": {
        "TRITON_KERNELS_REF": "0f380657dbf3ee86eb57558ff71df24f03b5d4e7",
        "FLASH_ATTN_REF": "0e60e39473e8df549a20fb5353760f7a65b30e2d",
    },
}

# Catalogue keys no Dockerfile may declare: VCS_REF changes with every
# commit, so as an ARG it would invalidate the layer cache of every build;
# the commit reaches a published image as its -g<VCS_REF> tag, never as content.
LABEL_ONLY_KEYS = frozenset({VCS_REF_KEY})

DOCKERFILES: dict[str, list[Target]] = defaultdict(list)
for _t in TARGETS:
    DOCKERFILES[_t.dockerfile].append(_t)
DOCKERFILE_IDS = sorted(DOCKERFILES)


def arch_of(target: Target) -> str | None:
    """The arch a check builds ``target`` for: the default arch, or None (arch-free)."""
    return CATALOG.default_arch if target.arch else None


def spec(target: Target) -> dict:
    return image_spec(CATALOG, target, arch_of(target), VALUES)


def build_args(target: Target) -> dict[str, str]:
    """The build args the image rule passes for ``target`` (default arch)."""
    return dict(spec(target)["build_args"])


def upstream_ref() -> str:
    """The upstream image reference, UPSTREAM_IMAGE:ROCM_VERSION of the catalogue."""
    return spec(TARGETS[0])["upstream"]


def contexts(target: Target) -> list[str]:
    """Named build contexts of ``target``: its parents, plus the upstream image if it uses it."""
    names = list(target.parents)
    if target.name in UPSTREAM_TARGETS:
        names.append(upstream_ref())
    return names


def build_arg_names(target: Target) -> set[str]:
    """Keys the catalogue passes to ``target`` and may be declared (not label-only)."""
    names = set(CATALOG.defaults) - LABEL_ONLY_KEYS
    return names | ({ARCH_BUILD_ARG} if target.arch else set())


def expected_default(target: Target, name: str) -> str:
    """What an ARG's default must be: the catalogue value (default arch for the arch)."""
    if name == ARCH_BUILD_ARG:
        return CATALOG.default_arch
    if name in CATALOG.defaults:
        return CATALOG.defaults[name]
    return OPTIONAL_ARGS[target.dockerfile][name]


def tag_variables(target: Target) -> set[str]:
    """The [defaults] keys ``target``'s versioned tag template uses."""
    return {k for k in CATALOG.defaults if f"${{{k}}}" in target.tag} - {ARCH_VAR}


def ancestors(target: Target) -> list[Target]:
    """``target``'s catalogue parents, transitively."""
    out: list[Target] = []
    todo = list(target.parents)
    while todo:
        t = CATALOG.target(todo.pop(0))
        if t not in out:
            out.append(t)
            todo += t.parents
    return out
