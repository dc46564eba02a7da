"""The Dockerfiles' own graph matches the catalogue's (static; no Docker).

For every catalogue target, the external references its stage reaches
(FROM, COPY --from, RUN --mount from= names that are no stage of the same
Dockerfile, followed through the stages transitively; a stage named like a
parent is replaced by that parent's named context) are exactly its catalogue
parents, plus the upstream image for the targets built FROM it. The image
rules build their Bazel graph from those parents, so this is the check that
the Bazel graph and the Dockerfiles' graph agree. Also: every ARG a stage
uses is declared and every declared ARG used, every file taken from the
build context exists under docker/, and images/dockerfiles.bzl wires exactly
those files; every RUN that reaches the network mounts the mirror secrets,
and every RUN that compiles the compiler cache's.
"""

from __future__ import annotations

import glob
import json
import os
import re
import shlex
from pathlib import Path

import pytest

from tests.dockerfiles.family import (
    CATALOG,
    DOCKERFILE_IDS,
    DOCKERFILES,
    OPTIONAL_ARGS,
    TARGET_IDS,
    TARGETS,
    UPSTREAM_TARGETS,
    build_args,
    contexts,
    upstream_ref,
)
from tools.dockerfile import model
from tools.mirrors.secrets import COMPILER_CACHE_SECRETS, OPTIONAL_SECRETS, SECRETS
from tools.tagconf.spec import ARCH_BUILD_ARG

# Every file of docker/scripts (the //docker:scripts filegroup, as Bazel sees it).
SCRIPTS = sorted(os.environ["DOCKER_SCRIPTS"].split())
SRCS_TABLE = "images/dockerfiles.bzl"  # DOCKERFILE_SRCS: the files //images wires per Dockerfile

PARSED = {df: model.parse(df) for df in DOCKERFILES}


def arg_universe() -> set[str]:
    """Every name that is a build arg somewhere in the family."""
    names = set(CATALOG.defaults) | {ARCH_BUILD_ARG}
    for df in PARSED.values():
        names |= {n for n, _, _ in df.global_args}
        names |= {n for s in df.stages for n, _, _ in s.args()}
    return names


def arg_problems(dockerfile: model.Dockerfile, universe: set[str]) -> list[str]:
    """Every ARG a stage uses is declared before it, and every declared ARG is used.

    ``universe`` is every name that is a build arg somewhere (catalogue keys,
    PYTORCH_ROCM_ARCH, any ARG of any Dockerfile): a stage that uses one of
    them (in any instruction, RUN included: an undeclared ARG is an empty
    shell variable there) must declare it with ARG, or set it with ENV in the
    stage or in a stage of this file it is FROM. Other $names in RUN are the
    shell's own. FROM lines may use only global ARGs; every global ARG must
    be used by a FROM line or re-declared in a stage.
    """
    where = dockerfile.path
    problems = []
    global_names = {name for name, _, _ in dockerfile.global_args}
    redeclared = {name for s in dockerfile.stages for name, _, _ in s.args()}
    for s in dockerfile.stages:
        for name in model.variables(s.base):
            if name not in global_names:
                problems.append(
                    f"{where}:{s.line}: FROM {s.base} uses ${{{name}}}, which is no global ARG"
                    " (declare it before the first FROM)"
                )
    used_in_from = {n for s in dockerfile.stages for n in model.variables(s.base)}
    for name, _, line in dockerfile.global_args:
        if name not in used_in_from and name not in redeclared:
            problems.append(
                f"{where}:{line}: global ARG {name} is used by no FROM and declared in no stage"
            )
    for s in dockerfile.stages:
        inherited: set[str] = set()
        parent = dockerfile.lookup(s.base, s.index)
        while parent is not None:
            inherited |= env_names(parent)
            parent = dockerfile.lookup(parent.base, parent.index)
        declared: dict[str, int] = {}
        used: set[str] = set()
        for ins in s.instructions:
            text = ins.value
            if ins.keyword == "ARG":
                text = " ".join(d or "" for _, d in model.parse_arg(ins.value))
            for name in model.variables(text):
                used.add(name)
                if name in universe and name not in declared and name not in inherited:
                    problems.append(
                        f"{where}:{ins.line}: stage {s.name} uses ${{{name}}} in {ins.keyword}"
                        f" but declares no ARG {name} before it"
                    )
            if ins.keyword == "ARG":
                for name, _ in model.parse_arg(ins.value):
                    declared.setdefault(name, ins.line)
            elif ins.keyword == "ENV":
                for name in parse_env(ins.value):
                    declared.setdefault(name, ins.line)
        for name, _, line in s.args():
            if name not in used:
                problems.append(
                    f"{where}:{line}: stage {s.name} declares ARG {name} but never uses it"
                )
    return problems


def env_names(stage: model.Stage) -> set[str]:
    """Names the ENV instructions of ``stage`` set (``ENV A=1 B=2`` or ``ENV A 1``)."""
    names = set()
    for ins in stage.instructions:
        if ins.keyword == "ENV":
            names |= set(parse_env(ins.value))
    return names


def parse_env(value: str) -> list[str]:
    """Names ``ENV A=1 B=2`` or ``ENV A 1`` sets."""
    words = shlex.split(value, posix=True)
    if words and "=" not in words[0]:
        return [words[0]]
    return [w.partition("=")[0] for w in words]


def context_files(dockerfile: str) -> dict[str, list[str]]:
    """Repository paths ``dockerfile`` takes from the build context -> where."""
    out: dict[str, list[str]] = {}
    for stage in PARSED[dockerfile].stages:
        for f in stage.context_files():
            path = f.path.removeprefix("./").lstrip("/")
            out.setdefault(path, []).append(f"{dockerfile}:{f.line} ({f.how})")
    return out


@pytest.mark.parametrize("target", TARGETS, ids=TARGET_IDS)
def test_stage_reaches_exactly_its_catalogue_parents(target):
    dockerfile = PARSED[target.dockerfile]
    # should define the stage the catalogue builds
    assert target.stage in dockerfile.stage_names, (
        f"{target.name}: {target.dockerfile} has no stage {target.stage!r};"
        f" its stages: {dockerfile.stage_names}"
    )
    reach = model.reach(dockerfile, target.stage, contexts(target), build_args(target))
    expected = set(target.parents) | (
        {upstream_ref()} if target.name in UPSTREAM_TARGETS else set()
    )
    found = set(reach.external)
    # should reach every catalogue parent (else the parent is built for nothing)
    # and nothing else (else the build needs an image Bazel does not provide)
    assert found == expected, (
        f"{target.name} ({target.dockerfile} --target {target.stage}):\n"
        f"  catalogue parents{' + upstream' if target.name in UPSTREAM_TARGETS else ''}:"
        f" {sorted(expected)}\n"
        f"  the Dockerfile reaches: {sorted(found)}\n"
        + "".join(
            f"  not in the catalogue: {r} ({reach.external[r]})\n" for r in sorted(found - expected)
        )
        + "".join(f"  never reached: {r}\n" for r in sorted(expected - found))
        + "Fix the Dockerfile, or `parents` of the target in images/catalog.toml."
    )


@pytest.mark.parametrize("target", TARGETS, ids=TARGET_IDS)
def test_no_parent_replaces_a_stage_the_image_is_built_from(target):
    found = model.replaced_base(
        PARSED[target.dockerfile], target.stage, contexts(target), build_args(target)
    )
    # should reach each parent by a FROM that names no stage of the file: a
    # named context that replaces a stage makes BuildKit rewrite the parent's
    # every layer on each build (the multi-GB ROCm tree under base)
    assert found is None, (
        f"{target.name}: {target.dockerfile} stage {found[0].name} is built FROM stage"
        f" {found[1]}, which the parent image {found[1]} replaces; rename the stage or move it"
        " to its own Dockerfile"
    )


@pytest.mark.parametrize("dockerfile", DOCKERFILE_IDS)
def test_every_stage_is_built_by_some_target(dockerfile):
    built = set()
    for t in DOCKERFILES[dockerfile]:
        built |= set(model.reach(PARSED[dockerfile], t.stage, contexts(t), build_args(t)).built)
    dead = [s for s in PARSED[dockerfile].stage_names if s not in built]
    # should have no stage that no catalogue target builds
    assert not dead, f"{dockerfile}: stage(s) {dead} are built by no catalogue target"


@pytest.mark.parametrize("dockerfile", DOCKERFILE_IDS)
def test_args_are_declared_before_use_and_used(dockerfile):
    problems = arg_problems(PARSED[dockerfile], arg_universe())
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("dockerfile", DOCKERFILE_IDS)
def test_context_files_exist_under_docker(dockerfile):
    problems = []
    for path, where in sorted(context_files(dockerfile).items()):
        if path in ("", ".") or not path.startswith("docker/"):
            problems.append(f"{where[0]}: {path!r}: take single files from under docker/")
        elif glob.has_magic(path):
            problems.append(f"{where[0]}: {path!r}: name the files, no patterns")
        elif not Path(path).is_file():
            problems.append(f"{where[0]}: {path} does not exist (or is not a file)")
    # should take only existing files under docker/ from the build context
    assert not problems, "\n".join(problems)


def test_every_script_is_used():
    used = set().union(*(context_files(df) for df in DOCKERFILES))
    unused = [p for p in SCRIPTS if p not in used]
    # should carry no script that no Dockerfile COPYs or mounts
    assert not unused, f"{unused} are used by no Dockerfile of the catalogue"


def srcs_table() -> dict[str, list[str]]:
    """DOCKERFILE_SRCS of images/dockerfiles.bzl as repository paths (BUILD passes it as JSON)."""
    table = json.loads(os.environ["DOCKERFILE_SRCS"])
    return {
        df: [label.removeprefix("//").replace(":", "/", 1) for label in labels]
        for df, labels in table.items()
    }


def test_srcs_table_covers_exactly_the_catalogue_dockerfiles():
    assert sorted(srcs_table()) == DOCKERFILE_IDS


@pytest.mark.parametrize("dockerfile", DOCKERFILE_IDS)
def test_srcs_table_matches_the_dockerfile(dockerfile):
    wired = srcs_table().get(dockerfile, [])
    needed = set(context_files(dockerfile))
    # should wire each file once, and exactly the files the Dockerfile uses
    assert len(wired) == len(set(wired)), f"{SRCS_TABLE}: {dockerfile} lists a file twice"
    assert set(wired) == needed, (
        f"{SRCS_TABLE}: DOCKERFILE_SRCS[{dockerfile!r}] differs from what the Dockerfile"
        f" COPYs or bind-mounts:\n  missing: {sorted(needed - set(wired))}\n"
        f"  not used: {sorted(set(wired) - needed)}"
    )


def run_instructions(dockerfile: str) -> list[model.Instruction]:
    return [
        ins
        for stage in model.parse(dockerfile).stages
        for ins in stage.instructions
        if ins.keyword == "RUN"
    ]


@pytest.mark.parametrize("dockerfile", DOCKERFILE_IDS)
def test_every_run_mounts_the_mirrors_or_has_no_network(dockerfile):
    # The mirror settings reach a build only as these secrets (tools/mirrors): a
    # RUN that reached the network without them would bypass an air-gapped
    # farm's mirrors, its credentials and its CA bundle.
    problems = []
    for ins in run_instructions(dockerfile):
        if ins.flags.get("network") == ["none"]:
            continue
        secrets = {m.get("id"): m for m in ins.mounts() if m.get("type") == "secret"}
        for secret, target in SECRETS.items():
            mount = secrets.get(secret)
            if mount is None:
                problems.append(f"{dockerfile}:{ins.line}: RUN does not mount the secret {secret}")
            elif mount.get("target", f"/run/secrets/{secret}") != target:
                problems.append(
                    f"{dockerfile}:{ins.line}: secret {secret} mounted at"
                    f" {mount.get('target')}, not {target}"
                )
            elif mount.get("required", "false") != "false":
                problems.append(f"{dockerfile}:{ins.line}: secret {secret} must stay optional")
    # should mount every mirror secret where tools read it, or run with --network=none
    assert not problems, "\n".join(problems)


def test_apt_and_pip_only_through_the_scripts_that_apply_the_mirrors():
    # apt reads the mirror's sources only through apt-install.sh (it rewrites a copy)
    problems = [
        f"{df}:{ins.line}: calls {tool} directly; use /opt/build/apt-install.sh"
        for df in DOCKERFILE_IDS
        for ins in run_instructions(df)
        for tool in ("apt-get", "apt-cache", "apt ")
        if tool in ins.body
    ]
    assert not problems, "\n".join(problems)


def test_vllm_builds_its_rust_parts_and_triton_kernels_from_sources_fetched_before():
    stage = next(s for s in PARSED["docker/Dockerfile.vllm"].stages if s.name == "vllm-build")
    runs = [ins for ins in stage.instructions if ins.keyword == "RUN"]
    (fetch,) = [i for i in runs if "fetch-source.sh" in i.body]
    (rust,) = [i for i in runs if "install-rust.sh" in i.body]
    (build,) = [i for i in runs if "build-wheel.sh" in i.body]
    # should fetch triton_kernels and vendor the crates before the wheel build
    assert runs.index(fetch) < runs.index(rust) < runs.index(build)
    assert "https://github.com/ROCm/triton.git" in fetch.body and "/src/rocm-triton" in fetch.body
    # should take rustup's dist server and the crates registry from the optional secret
    mounts = {m.get("id"): m for m in rust.mounts() if m.get("type") == "secret"}
    assert "rust-mirror" in mounts and mounts["rust-mirror"].get("required", "false") == "false"
    # should fail without the Rust parts and hand CMake the fetched triton_kernels
    assert "VLLM_REQUIRE_RUST_FRONTEND=1" in build.body
    assert "TRITON_KERNELS_SRC_DIR=/src/rocm-triton/python/triton_kernels/triton_kernels" in (
        build.body
    )
    assert "python /opt/build/check-vllm-wheel.py /wheels/vllm-*.whl" in build.body


def test_vllm_builds_flash_attention_on_every_arch_run_and_installs_it_when_built():
    stages = {s.name: s for s in PARSED["docker/Dockerfile.vllm"].stages}
    runs = [ins for ins in stages["vllm-build"].instructions if ins.keyword == "RUN"]
    (wheel,) = [i for i in runs if "build-wheel.sh" in i.body]
    fa = [i for i in runs if "build-flash-attn.sh" in i.body]
    # should fetch (with the mirrors) and then build, both after the vllm wheel,
    # each step deciding by the arch inside the script (every RUN runs on every arch)
    assert [i.body.split()[1] for i in fa] == ["fetch", "build"]
    assert runs.index(wheel) < runs.index(fa[0]) < runs.index(fa[1])
    assert all('--arch "${PYTORCH_ROCM_ARCH}"' in i.body for i in fa)
    assert "https://github.com/Dao-AILab/flash-attention.git" in fa[0].body
    assert '"${FLASH_ATTN_REF}" /src/flash-attention' in fa[0].body
    assert fa[1].body.split()[-2:] == ["/src/flash-attention", "/wheels-fa"]
    assert {"/root/.cache/ccache"} <= {m.get("target") for m in fa[1].mounts()}
    # the wheel target keeps only the vllm wheel
    copies = [i for i in stages["wheel"].instructions if i.keyword == "COPY"]
    assert [(c.flags.get("from"), c.copy_sources()) for c in copies] == [
        (["vllm-build"], ["/wheels/"])
    ]
    # the serving image mounts /wheels-fa and installs and checks flash_attn
    # unless the directory says NOT-BUILT
    (install,) = [
        i
        for i in stages["vllm"].instructions
        if i.keyword == "RUN" and "install-wheels.sh" in i.body
    ]
    mounts = {m.get("target"): m for m in install.mounts()}
    fa_mount = mounts["/tmp/wheels/flash-attn"]
    assert (fa_mount.get("from"), fa_mount.get("source")) == ("vllm-build", "/wheels-fa")
    assert "if [ -e /tmp/wheels/flash-attn/NOT-BUILT ]" in install.body
    assert '"${fa[@]}" /tmp/wheels/vllm' in install.body
    assert 'torchvision "${fa_libs[@]}" vllm' in install.body


def test_optional_args_are_the_ones_the_rules_pass():
    """`--define NAME=VALUE` reaches the optional build args of family.py, all and only those.

    images/private/defines.bzl's OPTIONAL_ARGS (BUILD passes it as JSON) is what
    the image rules forward to tagconf; family.py's OPTIONAL_ARGS is what the
    Dockerfiles declare (outline_test). A name in one list only is an arg a
    user cannot set, or a `--define` that reaches no Dockerfile.
    """
    rules = set(json.loads(os.environ["OPTIONAL_ARGS"]))
    declared = {name for args in OPTIONAL_ARGS.values() for name in args}
    assert rules == declared, (
        f"only in images/private/defines.bzl: {sorted(rules - declared)};"
        f" only in tests/dockerfiles/family.py: {sorted(declared - rules)}"
    )


# The local compiler cache: a BuildKit cache mount, the fallback of every
# compiler cache server (docker/scripts/build-env.sh).
CCACHE_MOUNT = "/root/.cache/ccache"
# A script "compiles" when it sources build-env.sh, which picks the compiler cache.
_SOURCES_BUILD_ENV = re.compile(r'^\s*(?:\w+=\S+\s+)?\. "\$script_dir/build-env\.sh"', re.M)
# The compiler cache's backend settings: the build host's (tools/mirrors
# [compiler_cache]), never a build arg, ENV or anything else of a Dockerfile.
BACKEND_SETTING = re.compile(
    r"\b(?:SCCACHE_(?!VERSION\b)[A-Z0-9_]+|CCACHE_REMOTE_STORAGE|AWS_SHARED_CREDENTIALS_FILE)\b"
    r"|\bsccache_aws\b"
)


def compiling_scripts() -> list[str]:
    """The docker/scripts that source build-env.sh (its compiler cache), by file name."""
    return sorted(Path(p).name for p in SCRIPTS if _SOURCES_BUILD_ENV.search(Path(p).read_text()))


def compiler_cache_problems(path: str) -> list[str]:
    """Each RUN of ``path`` that compiles (mounts the ccache cache, or runs a script that
    sources build-env.sh) mounts both compiler cache secrets where build-env.sh reads
    them, optional, with the ccache cache and the network."""
    problems = []
    scripts = compiling_scripts()
    for stage in model.parse(path).stages:
        for ins in stage.instructions:
            if ins.keyword != "RUN":
                continue
            mounts = ins.mounts()
            caches = {m.get("target") for m in mounts if m.get("type") == "cache"}
            secrets = {m.get("id"): m for m in mounts if m.get("type") == "secret"}
            runs = [name for name in scripts if f"/{name}" in ins.body]
            if CCACHE_MOUNT not in caches and not runs:
                continue
            where = f"{path}:{ins.line}: RUN compiles ({', '.join(runs) or 'ccache mount'})"
            for secret in COMPILER_CACHE_SECRETS:
                mount = secrets.get(secret)
                target = OPTIONAL_SECRETS[secret]
                if mount is None:
                    problems.append(f"{where} but does not mount the secret {secret}")
                elif mount.get("target", f"/run/secrets/{secret}") != target:
                    problems.append(f"{where}: secret {secret} mounted at {mount['target']}")
                elif mount.get("required", "false") != "false":
                    problems.append(f"{where}: secret {secret} must stay optional")
            if CCACHE_MOUNT not in caches:
                problems.append(f"{where} without the cache mount {CCACHE_MOUNT}")
            if ins.flags.get("network") == ["none"]:
                problems.append(f"{where} with --network=none: no compiler cache server")
    return problems


def backend_setting_problems(path: str) -> list[str]:
    """Lines of ``path`` that name a compiler cache backend setting."""
    return [
        f"{path}:{n}: names {m.group(0)}"
        for n, line in enumerate(Path(path).read_text().splitlines(), 1)
        for m in BACKEND_SETTING.finditer(line)
    ]


# The RUNs that compile, per Dockerfile: the check above must find them all.
COMPILING_RUNS = {
    "docker/Dockerfile.aiter": 1,
    "docker/Dockerfile.cupy": 1,
    "docker/Dockerfile.lmcache": 1,
    "docker/Dockerfile.nixl": 2,  # UCX, NIXL
    "docker/Dockerfile.pytorch": 3,  # MAGMA, AOTriton, torch
    "docker/Dockerfile.torchvision": 1,
    "docker/Dockerfile.triton": 1,
    "docker/Dockerfile.vllm": 2,  # vllm, flash-attention
}


@pytest.mark.parametrize("dockerfile", DOCKERFILE_IDS)
def test_every_run_that_compiles_mounts_the_compiler_cache(dockerfile):
    # should mount compiler-cache and compiler-cache-credentials (optional, where
    # build-env.sh reads them) in every RUN that compiles, next to the ccache cache
    assert not compiler_cache_problems(dockerfile), "\n".join(compiler_cache_problems(dockerfile))
    mounting = [
        ins
        for ins in run_instructions(dockerfile)
        if {"compiler-cache"} <= {m.get("id") for m in ins.mounts() if m.get("type") == "secret"}
    ]
    # should find exactly the compiling RUNs of the family (the check is not vacuous)
    assert len(mounting) == COMPILING_RUNS.get(dockerfile, 0), [i.line for i in mounting]


def test_the_scripts_that_compile_are_found():
    assert compiling_scripts() == [
        "build-aotriton.sh",
        "build-magma.sh",
        "build-pytorch.sh",
        "build-triton.sh",
        "build-ucx.sh",
        "build-wheel.sh",
    ]


def test_a_run_that_compiles_without_the_compiler_cache_fails_the_check(tmp_path):
    df = tmp_path / "Dockerfile"
    df.write_text(
        "FROM scratch AS s\n"
        "RUN --mount=type=cache,target=/root/.cache/ccache \\\n"
        "    /opt/build/build-wheel.sh --arch gfx950 /src /wheels\n"
        "RUN --mount=type=cache,target=/root/.cache/ccache \\\n"
        "    --mount=type=secret,id=sccache_aws \\\n"
        "    make -C /src\n"
        "RUN --mount=type=secret,id=compiler-cache,required=true \\\n"
        "    --mount=type=secret,id=compiler-cache-credentials,target=/root/creds \\\n"
        "    /opt/build/build-pytorch.sh /src /wheels\n"
        "RUN --network=none --mount=type=cache,target=/root/.cache/ccache \\\n"
        "    --mount=type=secret,id=compiler-cache \\\n"
        "    --mount=type=secret,id=compiler-cache-credentials \\\n"
        "    /opt/build/build-magma.sh --arch gfx950 /opt/rocm/magma\n"
        "RUN --mount=type=cache,target=/root/.cache/ccache \\\n"
        "    --mount=type=secret,id=compiler-cache \\\n"
        "    --mount=type=secret,id=compiler-cache-credentials \\\n"
        "    /opt/build/build-triton.sh --version 7.8.9 /src /wheels\n"
        "RUN /opt/build/fetch-source.sh https://example.invalid/x.git v1 /src\n"
    )
    got = compiler_cache_problems(str(df))
    w = f"{df}:2: RUN compiles (build-wheel.sh)"
    c = f"{df}:4: RUN compiles (ccache mount)"
    p = f"{df}:7: RUN compiles (build-pytorch.sh)"
    m = f"{df}:10: RUN compiles (build-magma.sh)"
    assert got == [
        f"{w} but does not mount the secret compiler-cache",
        f"{w} but does not mount the secret compiler-cache-credentials",
        f"{c} but does not mount the secret compiler-cache",
        f"{c} but does not mount the secret compiler-cache-credentials",
        f"{p}: secret compiler-cache must stay optional",
        f"{p}: secret compiler-cache-credentials mounted at /root/creds",
        f"{p} without the cache mount /root/.cache/ccache",
        f"{m} with --network=none: no compiler cache server",
    ]
    assert backend_setting_problems(str(df)) == [f"{df}:5: names sccache_aws"]


@pytest.mark.parametrize("dockerfile", DOCKERFILE_IDS)
def test_no_dockerfile_names_a_compiler_cache_backend(dockerfile):
    # should leave the backend (SCCACHE_BUCKET, SCCACHE_ENDPOINT, ...) and its
    # credentials to the build host's settings: no build arg, ENV or secret of its own
    assert not backend_setting_problems(dockerfile), "\n".join(backend_setting_problems(dockerfile))


def test_the_backend_check_finds_the_old_build_args(tmp_path):
    df = tmp_path / "Dockerfile"
    df.write_text(
        "FROM scratch\n"
        "# SCCACHE_VERSION is the client's release\n"
        "ARG SCCACHE_VERSION=0.16.0\n"
        'ARG SCCACHE_BUCKET=""\n'
        "ARG SCCACHE_WEBDAV_ENDPOINT\n"
        "ENV CCACHE_REMOTE_STORAGE=http://cache.example.internal/ccache\n"
    )
    assert backend_setting_problems(str(df)) == [
        f"{df}:4: names SCCACHE_BUCKET",
        f"{df}:5: names SCCACHE_WEBDAV_ENDPOINT",
        f"{df}:6: names CCACHE_REMOTE_STORAGE",
    ]
