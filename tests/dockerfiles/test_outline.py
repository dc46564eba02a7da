"""The Dockerfiles agree with the catalogue, as BuildKit reads them.

`--call=outline` (per target, without build args, so each ARG shows its
default) lists the build args a target's stages declare; `--call=targets`
lists a Dockerfile's stages. Any drift between those and images/catalog.toml
(or OPTIONAL_ARGS in family.py) fails here.
"""

from __future__ import annotations

import pytest

from tests.dockerfiles import buildx
from tests.dockerfiles.family import (
    CATALOG,
    DOCKERFILE_IDS,
    DOCKERFILES,
    LABEL_ONLY_KEYS,
    OPTIONAL_ARGS,
    TARGET_IDS,
    TARGETS,
    ancestors,
    build_arg_names,
    contexts,
    expected_default,
    tag_variables,
)
from tools.tagconf.model import Target
from tools.tagconf.spec import ARCH_BUILD_ARG


@pytest.fixture(scope="module")
def context(tmp_path_factory):
    return buildx.assemble_context(tmp_path_factory.mktemp("context"))


@pytest.fixture(scope="module")
def outlines(context):
    """target name -> buildx Result of its `--call=outline`, run in parallel once."""
    commands = {
        t.name: buildx.command(context, t.dockerfile, "outline", t.stage, None, contexts(t))
        for t in TARGETS
    }
    return buildx.run_all(commands)


@pytest.fixture(scope="module")
def stages(context):
    """Dockerfile -> buildx Result of its `--call=targets`."""
    return buildx.run_all({df: buildx.command(context, df, "targets") for df in DOCKERFILES})


def read(result: buildx.Result, what: str) -> dict:
    """The JSON BuildKit printed, or a failure that shows BuildKit's error."""
    if result.code != 0 or result.data is None:
        pytest.fail(
            f"{what}: BuildKit could not read it (a missing stage, or a FROM / --from name no"
            " named context provides, e.g. through an ARG default that differs from the"
            f" catalogue)\n{buildx.docker_env_hint()}\n{result.explain()}"
        )
    return result.data


def args(outlines, target: Target) -> dict[str, dict[str, str]]:
    """{arg name: {"value": its default, "description": ...}} of ``target``'s stage."""
    data = read(
        outlines[target.name], f"{target.name} ({target.dockerfile} --target {target.stage})"
    )
    return {
        a["name"]: {"value": a.get("value") or "", "description": a.get("description") or ""}
        for a in data.get("args") or []
    }


@pytest.mark.parametrize("target", TARGETS, ids=TARGET_IDS)
def test_declared_args_are_catalogue_keys_or_documented_optional_args(outlines, target):
    declared = set(args(outlines, target))
    optional = set(OPTIONAL_ARGS.get(target.dockerfile, {}))
    # should declare no label-only key (a per-commit ARG busts every cache)
    assert not declared & LABEL_ONLY_KEYS, (
        f"{target.name}: {target.dockerfile} declares ARG {sorted(declared & LABEL_ONLY_KEYS)};"
        " VCS_REF changes with every commit and would invalidate the layer cache. The commit"
        " reaches a published image as its -g<VCS_REF> tag."
    )
    # should declare only catalogue keys, PYTORCH_ROCM_ARCH (arch targets) and optional args
    unexpected = declared - build_arg_names(target) - optional
    assert not unexpected, (
        f"{target.name} ({target.dockerfile} --target {target.stage}) declares"
        f" {sorted(unexpected)}: neither a catalogue key"
        f"{', nor ' + ARCH_BUILD_ARG + ' (arch target)' if target.arch else ''},"
        f" nor listed in OPTIONAL_ARGS[{target.dockerfile!r}] (tests/dockerfiles/family.py)."
        " Add it to images/catalog.toml [defaults], or give it a default and a"
        " `# NAME description` comment and list it in OPTIONAL_ARGS."
    )


@pytest.mark.parametrize("target", TARGETS, ids=TARGET_IDS)
def test_arch_arg_is_declared_exactly_by_arch_targets(outlines, target):
    declared = ARCH_BUILD_ARG in args(outlines, target)
    # an arch target that ignores the arch builds the same image for every arch;
    # an arch-free one that reads it silently builds for the default arch
    assert declared == target.arch, (
        f"{target.name} is {'an arch' if target.arch else 'an arch-free'} target, but its"
        f" stage {target.stage} in {target.dockerfile}"
        f" {'never declares' if target.arch else 'declares'} ARG {ARCH_BUILD_ARG}"
    )


@pytest.mark.parametrize("target", TARGETS, ids=TARGET_IDS)
def test_arg_defaults_equal_the_catalogue(outlines, target):
    wrong = {
        name: (arg["value"], expected_default(target, name))
        for name, arg in args(outlines, target).items()
        if name in build_arg_names(target) | set(OPTIONAL_ARGS.get(target.dockerfile, {}))
        and arg["value"] != expected_default(target, name)
    }
    # should default every ARG to the catalogue's value (a plain `docker build` = //images)
    assert not wrong, f"{target.name} ({target.dockerfile}): ARG defaults differ:\n" + "\n".join(
        f"  {name}: Dockerfile {got!r}, catalogue/OPTIONAL_ARGS {want!r}"
        for name, (got, want) in sorted(wrong.items())
    )


@pytest.mark.parametrize("target", TARGETS, ids=TARGET_IDS)
def test_optional_args_are_documented(outlines, target):
    optional = OPTIONAL_ARGS.get(target.dockerfile, {})
    undocumented = [
        name
        for name, arg in args(outlines, target).items()
        if name in optional and not arg["description"]
    ]
    # should explain every arg //images does not pass (`# NAME description` above the ARG)
    assert not undocumented, (
        f"{target.dockerfile}: optional ARG(s) {undocumented} have no `# NAME description`"
        " comment, so `docker buildx build --call=outline` cannot show what they do"
    )


def test_optional_args_name_catalogue_dockerfiles():
    assert set(OPTIONAL_ARGS) <= set(DOCKERFILES), "OPTIONAL_ARGS names an unknown Dockerfile"


@pytest.mark.parametrize("dockerfile", DOCKERFILE_IDS)
def test_optional_args_list_matches_the_dockerfile(outlines, dockerfile):
    declared = set().union(*(args(outlines, t) for t in DOCKERFILES[dockerfile]))
    listed = set(OPTIONAL_ARGS.get(dockerfile, {}))
    # should list no optional arg the Dockerfile no longer declares
    assert listed <= declared, (
        f"OPTIONAL_ARGS[{dockerfile!r}] lists {sorted(listed - declared)}, which no catalogue"
        " target of that Dockerfile declares; remove it from tests/dockerfiles/family.py"
    )


def test_every_catalogue_key_reaches_some_build(outlines):
    declared = set().union(*(args(outlines, t) for t in TARGETS))
    unused = set(CATALOG.defaults) - LABEL_ONLY_KEYS - declared
    # should pass no build arg that no Dockerfile reads
    assert not unused, (
        f"catalogue keys {sorted(unused)} are declared by no target's stages: a change to"
        " them would move tags without changing any image"
    )


@pytest.mark.parametrize("target", TARGETS, ids=TARGET_IDS)
def test_tag_variables_reach_the_build(outlines, target):
    declared = set(args(outlines, target)).union(*(args(outlines, a) for a in ancestors(target)))
    missing = tag_variables(target) - declared
    # should not tag an image with a version its build (or its parents' builds) never saw
    assert not missing, (
        f"{target.name}: tag {target.tag!r} uses {sorted(missing)}, but neither its stage"
        f" {target.stage} in {target.dockerfile} nor any catalogue ancestor declares them"
    )


@pytest.mark.parametrize("dockerfile", DOCKERFILE_IDS)
def test_targets_lists_every_catalogue_stage(stages, dockerfile):
    catalogue = {t.stage for t in DOCKERFILES[dockerfile]}
    data = read(stages[dockerfile], dockerfile)
    found = {s["name"]: s.get("description") or "" for s in data["targets"]}
    # should define every stage the catalogue builds
    assert catalogue <= set(found), (
        f"{dockerfile} has no stage(s) {sorted(catalogue - set(found))}"
        f" (the catalogue builds them); its stages: {sorted(found)}"
    )
    # should describe (`# <stage> description` above FROM) exactly the catalogue's stages
    documented = {name for name, description in found.items() if description}
    assert documented == catalogue, (
        f"{dockerfile}: stages with a description {sorted(documented)}, catalogue stages"
        f" {sorted(catalogue)}. Document each stage a target builds; helper stages get none."
    )
