"""Golden specs of the tag rules: the seed's table (testdata/seed_tags.txt) and
docs/catalogue.md "Tag policy".

The rules run on the tests' own catalogue (tests/fixtures/catalog.toml, the
`catalog` and `run` fixtures); the real one (`real_catalog`, `real_run`) only
where it is held to the seed's table or must be collision-free over every arch
and family it has."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tools.tagconf.spec import build_spec
from tools.tagconf.tags import (
    ParsedTag,
    check_collisions,
    parse_tag,
    render_all,
    render_many,
    resolve_values,
)

SEED = Path("tests/tagconf/testdata/seed_tags.txt")
OCI_TAG = re.compile(r"[A-Za-z0-9_][A-Za-z0-9._-]{0,127}")


def test_versioned_tags_without_test_line_are_the_seed_table(real_run):
    result = real_run("tags", "--kind", "versioned")
    assert result.code == 0, result.err
    lines = [line for line in result.out.splitlines() if not line.endswith("-test")]
    assert "\n".join(lines) + "\n" == SEED.read_text()


def test_versioned_tags_are_sixteen_with_the_test_image(real_run):
    lines = real_run("tags", "--kind", "versioned").out.splitlines()
    assert len(lines) == 16
    # pytorch-test comes after pytorch-run (the seed's sixth line): pytorch's tag, "-test"
    seed = SEED.read_text().splitlines()
    assert seed[3].startswith("pytorch:") and seed[5].startswith("runtime:")
    assert lines[6] == seed[3] + "-test"


@pytest.mark.parametrize(
    "target,arch,versioned,floating",
    [
        ("rocm-runtime", "gfx950", "9.8.7-full-gfx950", "latest-gfx950"),
        ("pytorch-src", "gfx950", "4.5.6", "latest"),
        ("pytorch-base", "gfx1201", "9.8.7-full-3.21-gfx1201", "latest-gfx1201"),
        ("pytorch", "gfx942", "4.5.6-9.8.7-full-gfx942", "latest-gfx942"),
        ("pytorch-wheel", "gfx950", "4.5.6-9.8.7-full-gfx950", "latest-gfx950"),
        ("pytorch-test", "gfx950", "4.5.6-9.8.7-full-gfx950-test", "latest-gfx950-test"),
        ("triton-wheel", "gfx1201", "7.8.9-9.8.7-full", "latest"),
        ("vllm", "gfx1101", "v0.77.1-9.8.7-full-gfx1101", "latest-gfx1101"),
    ],
)
def test_versioned_and_floating_tag_per_target(catalog, target, arch, versioned, floating):
    values = resolve_values(catalog)
    (image,) = render_many(catalog, [target], [arch], values)
    assert (image.versioned, image.floating, image.immutable) == (versioned, floating, None)


def test_arch_target_never_floats_on_plain_latest(catalog):
    for image in render_all(catalog, resolve_values(catalog)):
        if image.arch:
            assert image.floating != "latest", image
            assert image.arch in image.floating


def test_pytorch_and_pytorch_test_share_a_repository_but_not_a_tag(catalog):
    values = resolve_values(catalog, vcs_ref="0123abc")
    images = render_many(catalog, ["pytorch", "pytorch-test"], ["gfx950"], values)
    assert {i.repository for i in images} == {"pytorch"}
    assert not set(images[0].tags()) & set(images[1].tags())


def test_immutable_tag_present_iff_vcs_ref(catalog):
    without = render_all(catalog, resolve_values(catalog))
    with_ref = render_all(catalog, resolve_values(catalog, vcs_ref="deadbeef"))
    assert all(i.immutable is None for i in without)
    assert all(i.immutable == f"{i.versioned}-gdeadbeef" for i in with_ref)


def test_every_tag_over_all_targets_and_archs_is_distinct(real_run):
    """519 = (13 arch targets x 13 archs + aiter-wheel x 2 archs + 2 arch-free targets) x 3."""
    result = real_run(
        "tags", "--arch", "all", "--vcs-ref", "0123456789abcdef0123456789abcdef01234567"
    )
    refs = result.out.splitlines()
    assert len(refs) == 519
    assert len(set(refs)) == 519
    # should say, once, which target it leaves out for which archs
    assert result.err == (
        "tagconf: note: aiter-wheel is not built for gfx908, gfx90a, gfx1030, gfx1100, gfx1101,"
        " gfx1102, gfx1103, gfx1150, gfx1151, gfx1200, gfx1201: catalog.toml builds it for"
        " gfx942, gfx950 only (targets.aiter-wheel.archs); left out\n"
    )


def test_every_tag_over_all_archs_and_families_is_distinct(real_catalog):
    """The collision proof, families included: 795 distinct refs = 519 of the archs
    + (13 arch targets x 7 families + aiter-wheel x 1 family) x 3; no family tag is an
    arch tag."""
    catalog = real_catalog
    values = resolve_values(catalog, vcs_ref="0123456789abcdef0123456789abcdef01234567")
    images = render_all(catalog, values)
    check_collisions(images)  # raises on any repository:tag two images share
    refs = [r for i in images for r in i.refs()]
    assert len(refs) == len(set(refs)) == 795
    family_refs = {r for i in images if i.arch in catalog.families for r in i.refs()}
    arch_refs = {r for i in images if i.arch not in catalog.families for r in i.refs()}
    assert len(family_refs) == (13 * 7 + 1) * 3
    assert not family_refs & arch_refs


FAMILIES = {
    "gfx90X-dcgpu": ("gfx908", "gfx90a"),
    "gfx94X-gfx950-dcgpu": ("gfx942", "gfx950"),
    "gfx110X": ("gfx1100", "gfx1101"),
    "gfx110X-dgpu": ("gfx1100", "gfx1101", "gfx1102"),
    "gfx110X-all": ("gfx1100", "gfx1101", "gfx1102", "gfx1103"),
    "gfx115X-all": ("gfx1150", "gfx1151"),
    "gfx120X-all": ("gfx1200", "gfx1201"),
}


def test_families_are_therocks_names_with_catalogue_members(real_catalog):
    catalog = real_catalog
    assert dict(catalog.families) == FAMILIES
    assert not set(catalog.families) & set(catalog.archs)


@pytest.mark.parametrize(
    "target,family,versioned,floating",
    [
        ("rocm-runtime", "gfx110X", "9.8.7-full-gfx110X", "latest-gfx110X"),
        (
            "pytorch-base",
            "gfx94X-gfx950-dcgpu",
            "9.8.7-full-3.21-gfx94X-gfx950-dcgpu",
            "latest-gfx94X-gfx950-dcgpu",
        ),
        ("pytorch", "gfx110X", "4.5.6-9.8.7-full-gfx110X", "latest-gfx110X"),
        ("pytorch-test", "gfx110X", "4.5.6-9.8.7-full-gfx110X-test", "latest-gfx110X-test"),
        (
            "aiter-wheel",
            "gfx94X-gfx950-dcgpu",
            "4.5.6-9.8.7-full-gfx94X-gfx950-dcgpu",
            "latest-gfx94X-gfx950-dcgpu",
        ),
        ("triton-wheel", "gfx110X", "7.8.9-9.8.7-full", "latest"),
    ],
)
def test_family_tags_put_the_family_where_the_arch_goes(
    catalog, target, family, versioned, floating
):
    (image,) = render_many(catalog, [target], [family], resolve_values(catalog))
    assert (image.versioned, image.floating) == (versioned, floating)


def test_a_family_is_built_only_where_every_member_is(real_catalog, real_run):
    catalog, run = real_catalog, real_run
    aiter = catalog.target("aiter-wheel")
    # aiter-wheel is CDNA only (gfx942, gfx950): the family of both, and no other
    assert catalog.target_families(aiter) == ("gfx94X-gfx950-dcgpu",)
    assert not catalog.builds(aiter, "gfx90X-dcgpu")  # gfx908 and gfx90a are CDNA, not built
    assert catalog.target_families(catalog.target("vllm")) == tuple(FAMILIES)
    out = run("tags", "--group", "default", "--arch", "gfx110X-all", "--kind", "versioned")
    assert out.code == 0, out.err
    assert not [r for r in out.out.splitlines() if r.startswith("aiter-wheel:")]
    assert "aiter-wheel is not built for gfx110X-all" in out.err
    assert "a family gets it only when every member is one of these" in out.err


def test_family_build_arg_is_every_member_semicolon_separated(catalog):
    values = resolve_values(catalog)
    spec = build_spec(catalog, catalog.target("rocm-runtime"), "gfx110X", values)
    assert spec["build_args"]["PYTORCH_ROCM_ARCH"] == "gfx1100;gfx1101"
    assert spec["labels"]["org.rocm-pytorch.image.arch"] == "gfx110X"
    assert spec["labels"]["org.rocm-pytorch.image.family-archs"] == "gfx1100;gfx1101"
    # a single arch's spec is what it was: no family label
    single = build_spec(catalog, catalog.target("rocm-runtime"), "gfx1100", values)
    assert single["build_args"]["PYTORCH_ROCM_ARCH"] == "gfx1100"
    assert "org.rocm-pytorch.image.family-archs" not in single["labels"]


def test_family_tags_parse_back(catalog):
    assert parse_tag(catalog, "pytorch", "4.5.6-9.8.7-full-gfx110X-test") == ParsedTag(
        "pytorch-test",
        "gfx110X",
        "versioned",
        {"PYTORCH_VERSION": "4.5.6", "ROCM_VERSION": "9.8.7-full"},
    )
    assert parse_tag(catalog, "rocm-runtime", "latest-gfx94X-gfx950-dcgpu") == ParsedTag(
        "rocm-runtime", "gfx94X-gfx950-dcgpu", "floating", {}
    )
    # aiter-wheel has no gfx110X image: no rule made that tag
    assert parse_tag(catalog, "aiter-wheel", "latest-gfx110X") is None


def test_aiter_wheel_is_built_for_cdna_only_and_vllm_without_it_elsewhere(
    real_catalog, catalog, run
):
    # the real family: aiter-wheel for CDNA only, vllm for every arch
    aiter, vllm = real_catalog.target("aiter-wheel"), real_catalog.target("vllm")
    assert real_catalog.target_archs(aiter) == ("gfx942", "gfx950")
    assert real_catalog.target_archs(vllm) == real_catalog.archs
    # the rule, on the tests' catalogue (the same shape)
    aiter, vllm = catalog.target("aiter-wheel"), catalog.target("vllm")
    assert catalog.target_archs(aiter) == ("gfx942", "gfx950")
    assert catalog.target_archs(vllm) == catalog.archs
    # the default group for an RDNA arch leaves aiter-wheel out and says so
    rdna = run("tags", "--group", "default", "--arch", "gfx1201", "--kind", "versioned")
    assert rdna.code == 0
    assert not [r for r in rdna.out.splitlines() if r.startswith("aiter-wheel:")]
    assert "vllm:v0.77.1-9.8.7-full-gfx1201" in rdna.out.splitlines()
    assert "aiter-wheel is not built for gfx1201" in rdna.err
    # for gfx950 (the seed's arch) nothing is left out
    cdna = run("tags", "--group", "default", "--arch", "gfx950", "--kind", "versioned")
    assert "aiter-wheel:4.5.6-9.8.7-full-gfx950" in cdna.out.splitlines()
    assert cdna.err == ""


def test_every_tag_matches_the_oci_grammar(catalog, real_catalog):
    for cat in (catalog, real_catalog):
        values = resolve_values(cat, vcs_ref="0123456789abcdef0123456789abcdef01234567")
        tags = [t for i in render_all(cat, values) for t in i.tags()]
        assert tags and all(OCI_TAG.fullmatch(t) for t in tags)


def test_override_changes_exactly_the_tags_that_use_it(run):
    before = run("tags", "--arch", "all").out.splitlines()
    after = run("tags", "--arch", "all", "--set", "PYTORCH_VERSION=4.6.0").out.splitlines()
    assert len(before) == len(after)
    changed = {(b, a) for b, a in zip(before, after, strict=True) if b != a}
    repos = {b.split(":")[0] for b, _ in changed}
    assert repos == {"pytorch-src", "pytorch", "pytorch-wheel", "aiter-wheel"}
    assert all(a == b.replace("4.5.6", "4.6.0") for b, a in changed)
    assert all("4.5.6" not in b for b, a in zip(before, after, strict=True) if b == a)


def test_rocm_override_leaves_only_pytorch_src_alone(run):
    before = run("tags", "--kind", "versioned").out.splitlines()
    after = run("tags", "--kind", "versioned", "--set", "ROCM_VERSION=9.9.0").out.splitlines()
    unchanged = [b for b, a in zip(before, after, strict=True) if b == a]
    assert unchanged == ["pytorch-src:4.5.6"]


def test_archs_in_given_order_and_arch_free_once(run):
    out = run(
        "tags",
        "--target",
        "triton-wheel",
        "--target",
        "rocm-runtime",
        "--arch",
        "gfx1201,gfx950",
        "--kind",
        "versioned",
    ).out
    assert out.splitlines() == [
        "rocm-runtime:9.8.7-full-gfx1201",
        "rocm-runtime:9.8.7-full-gfx950",
        "triton-wheel:7.8.9-9.8.7-full",
    ]


def test_all_kinds_in_order_with_registry_prefix(run):
    out = run(
        "tags",
        "--target",
        "pytorch",
        "--vcs-ref",
        "abcdef0",
        "--registry",
        "127.0.0.1:5000/rocm-pytorch",
    ).out
    assert out.splitlines() == [
        "127.0.0.1:5000/rocm-pytorch/pytorch:4.5.6-9.8.7-full-gfx950",
        "127.0.0.1:5000/rocm-pytorch/pytorch:latest-gfx950",
        "127.0.0.1:5000/rocm-pytorch/pytorch:4.5.6-9.8.7-full-gfx950-gabcdef0",
    ]


def test_registry_flag_without_value_uses_the_catalogue_registry(run):
    out = run("tags", "--target", "pytorch-src", "--kind", "floating", "--registry").out
    assert out == "fixture-registry.example:5000/fixture/pytorch-src:latest\n"


def test_json_output(run):
    import json

    data = json.loads(run("tags", "--group", "wheels", "--arch", "gfx942", "--json").out)
    assert [d["target"] for d in data] == ["pytorch-wheel", "triton-wheel", "aiter-wheel"]
    triton = data[1]
    assert triton["arch"] is None and triton["floating"] == "latest"
    assert triton["refs"] == ["triton-wheel:7.8.9-9.8.7-full", "triton-wheel:latest"]


@pytest.mark.parametrize(
    "repository,tag,target,arch,kind",
    [
        ("pytorch", "4.5.6-9.8.7-full-gfx950", "pytorch", "gfx950", "versioned"),
        ("pytorch", "4.6.1-9.9.0-gfx1201", "pytorch", "gfx1201", "versioned"),
        ("pytorch", "4.5.6-9.8.7-full-gfx950-test", "pytorch-test", "gfx950", "versioned"),
        ("pytorch", "latest-gfx950", "pytorch", "gfx950", "floating"),
        ("pytorch", "latest-gfx950-test", "pytorch-test", "gfx950", "floating"),
        ("pytorch", "4.5.6-9.8.7-full-gfx950-gabcdef0", "pytorch", "gfx950", "immutable"),
        (
            "pytorch",
            "4.5.6-9.8.7-full-gfx950-test-gabcdef0",
            "pytorch-test",
            "gfx950",
            "immutable",
        ),
        ("triton-wheel", "7.8.9-9.8.7-full", "triton-wheel", None, "versioned"),
        ("triton-wheel", "7.8.9-9.8.7-full-g0123456", "triton-wheel", None, "immutable"),
        ("triton-wheel", "latest", "triton-wheel", None, "floating"),
        ("base", "9.8.7-full-3.21-gfx942", "pytorch-base", "gfx942", "versioned"),
        ("vllm", "latest-gfx1101", "vllm", "gfx1101", "floating"),
    ],
)
def test_parse_tag_finds_target_arch_and_kind(catalog, repository, tag, target, arch, kind):
    from tools.tagconf.tags import parse_tag

    parsed = parse_tag(catalog, repository, tag)
    assert parsed is not None
    assert (parsed.target, parsed.arch, parsed.kind) == (target, arch, kind)


@pytest.mark.parametrize(
    "repository,tag",
    [("pytorch", "latest"), ("pytorch", "4.5.6-gfx999"), ("nope", "latest"), ("base", "x")],
)
def test_parse_tag_rejects_foreign_tags(catalog, repository, tag):
    from tools.tagconf.tags import parse_tag

    assert parse_tag(catalog, repository, tag) is None


def test_parse_tag_round_trips_every_rendered_tag(catalog, real_catalog):
    from tools.tagconf.tags import parse_tag

    for cat in (catalog, real_catalog):
        values = resolve_values(cat, vcs_ref="0123abc")
        for image in render_all(cat, values):
            for kind in ("versioned", "floating", "immutable"):
                parsed = parse_tag(cat, image.repository, getattr(image, kind))
                assert (parsed.target, parsed.arch, parsed.kind) == (image.target, image.arch, kind)
