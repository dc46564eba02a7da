"""Pushing the fixture family to a real registry: exact tags, no-op re-push, guards."""

from __future__ import annotations

import json
import os

import pytest

from tests.registry.family_push import (
    NAMESPACE,
    default_images,
    expected_default_refs,
    metadata,
    push_default,
    push_one,
    registry_tool,
    run,
    tags,
    upstream,
    write_plan,
)
from tests.registry.fixtures import Fault


def test_default_group_for_two_archs_publishes_exactly_tagconfs_tags(registry):
    result = push_default(registry.host)
    # should push every image and say so
    assert result.code == 0, result.err
    n = len(default_images())
    assert f"{n}/{n} images pushed" in result.err
    refs = registry.all_refs()
    want = expected_default_refs()
    # should publish exactly tagconf's refs: nothing missing, nothing extra, no collision
    # each image x (versioned + floating); no aiter-wheel for gfx1201
    assert not [i for i in default_images() if i.target == "aiter-wheel" and i.arch == "gfx1201"]
    assert len(want) == len(set(want)) == 2 * n
    assert sorted(refs) == sorted(want)
    # should point each tag at the digest the build recorded
    for ref, digest in refs.items():
        repo, tag = ref.split(":")
        assert digest == metadata(tag_owner(repo.split("/", 1)[1], tag))["digest"], ref


def tag_owner(repository: str, tag: str) -> str:
    """The e2e image name (`pytorch.gfx950`) that tagconf says made this tag."""
    from tests.registry.family_push import CATALOG
    from tools.tagconf.tags import parse_tag

    parsed = parse_tag(CATALOG, repository, tag)
    return f"{parsed.target}.{parsed.arch}" if parsed.arch else parsed.target


def test_second_push_uploads_nothing_and_stays_within_one_plus_tags_requests(registry, proxy_for):
    assert push_default(registry.host).code == 0
    proxy = proxy_for(registry)
    result = push_default(proxy.host)
    assert result.code == 0, result.err
    # should write nothing at all: no upload, no manifest, no tag
    assert proxy.writes() == []
    assert "uploaded 0 blobs" in result.err
    # should make 1 + number-of-tags requests per image (HEAD manifest, HEAD each tag)
    assert len(proxy.requests) == len(default_images()) * (1 + 2)


def test_dry_run_prints_the_plan_and_writes_nothing(registry, proxy_for):
    proxy = proxy_for(registry)
    result = push_default(proxy.host, "--dry-run")
    assert result.code == 0, result.err
    # the registry check first: one upload session per repository, opened and cancelled
    repositories = len({i.repository for i in default_images()})
    assert result.err.startswith(
        f"registry check: {proxy.host} (http): {repositories} repositories take a"
    )
    assert proxy.writes(sessions=False) == []
    lines = result.out.splitlines()
    assert len(lines) == len(expected_default_refs())
    runtime = tags("rocm-runtime", "gfx950").versioned
    assert lines[0].startswith(f"{proxy.host}/{NAMESPACE}/rocm-runtime:{runtime}@sha256:")
    # should say what the real push would do: copy every blob from staging (the config,
    # four layers of the stand-in: busybox, its dpkg record, its links, dirs; one of its own)
    assert lines[0].endswith("from staging " + staging_host("rocm-runtime.gfx950") + ")"), lines[0]
    assert "0/6 blobs present, would copy 6" in lines[0], lines[0]
    assert registry.all_refs() == {}


def test_immutable_tag_never_moves(registry, tmp_path):
    target = f"{registry.host}/{NAMESPACE}"
    first = write_plan(
        tmp_path, [("pytorch-wheel", "gfx950", "pytorch-wheel.gfx950", "abc1234")], release=True
    )
    assert registry_tool("push", "--plan", str(first), "--registry", target).code == 0
    before = registry.all_refs()
    immutable = f"{NAMESPACE}/pytorch-wheel:{tags('pytorch-wheel', 'gfx950', 'abc1234').immutable}"
    assert before[immutable] == metadata("pytorch-wheel.gfx950")["digest"]

    # should accept the same digest again (idempotent)
    again = registry_tool("push", "--plan", str(first), "--registry", target)
    assert again.code == 0, again.err

    # should refuse a different image under the same immutable tag, and move nothing
    other = write_plan(
        tmp_path,
        [
            ("triton-wheel", None, "triton-wheel", "abc1234"),
            ("pytorch-wheel", "gfx950", "pytorch.gfx950", "abc1234"),
        ],
        release=True,
    )
    result = registry_tool("push", "--plan", str(other), "--registry", target)
    assert result.code == 1
    assert "immutable tags never move; nothing was pushed" in result.err
    assert f"{target}/{immutable.split('/', 1)[1]} is" in result.err
    assert registry.all_refs() == before  # triton-wheel was not pushed either


def test_an_immutable_tag_of_a_plain_build_is_refused_and_nothing_is_pushed(registry, tmp_path):
    # the e2e images are built here without --reproducible: BuildKit's plain output
    assert metadata("rocm-runtime.gfx950")["reproducible"] is False
    target = f"{registry.host}/{NAMESPACE}"
    entries = [
        ("rocm-runtime", "gfx950", "rocm-runtime.gfx950", "abc1234"),
        ("pytorch-base", "gfx950", "pytorch-base.gfx950", "abc1234"),
    ]
    plan = write_plan(tmp_path, entries)
    for extra in (["--dry-run"], []):
        result = registry_tool("push", "--plan", str(plan), "--registry", target, *extra)
        assert result.code == 1, result.err
        line = next(x for x in result.err.splitlines() if "reproducible" in x)
        assert line.startswith("registry: error: immutable tags need reproducible images")
        assert f"rocm-runtime (gfx950) ({target}/rocm-runtime:" in line
        assert line.endswith("Build with --config=release (or --reproducible)")
    assert registry.all_refs() == {}  # nothing half-pushed
    # its floating and versioned tags are fine
    plain = write_plan(tmp_path, [(t, a, i, None) for t, a, i, _ in entries])
    result = registry_tool("push", "--plan", str(plain), "--registry", target)
    assert result.code == 0, result.err
    assert len(registry.all_refs()) == 4


def staging_host(name: str) -> str:
    return metadata(name)["staging"]["registry"].split("/", 1)[0]


def test_plan_binary_prints_the_refs_without_images(tmp_path):
    plan = write_plan(tmp_path, [("triton-wheel", None, "does-not-exist", "0123abc")])
    result = registry_tool("plan", "--plan", str(plan), "--registry", "r.example:5000/ns")
    assert result.code == 0, result.err
    triton = tags("triton-wheel", vcs_ref="0123abc")
    assert result.out.splitlines() == [
        f"r.example:5000/ns/triton-wheel:{triton.versioned}",
        "r.example:5000/ns/triton-wheel:latest",
        f"r.example:5000/ns/triton-wheel:{triton.versioned}-g0123abc",
    ]


@pytest.mark.parametrize(
    "value, message",
    [
        ("127.0.0.1:5492/UP", "'127.0.0.1:5492/UP': bad namespace component 'UP'; write 'up'"),
        ("", "empty registry"),
        ("//ns", "'//ns': bad host ''"),
        ("-bad", "'-bad': bad host '-bad'"),
        ("ftp://h/ns", "unknown scheme 'ftp'"),
    ],
)
@pytest.mark.parametrize("command", ["push", "plan"])
def test_the_tools_own_registry_is_held_to_the_define_registry_grammar(
    tmp_path, command, value, message
):
    plan = write_plan(tmp_path, [("triton-wheel", None, "triton-wheel", None)])
    result = registry_tool(command, "--plan", str(plan), f"--registry={value}")
    # should refuse before any request, in one line, as `--image_registry=` does
    assert result.code == 2, result
    assert result.err.startswith("registry: error: --registry: ")
    assert message in result.err
    assert result.err.count("\n") == 1 and result.out == ""


NOT_BUILT = (
    "aiter-wheel is not built for gfx1201: images/catalog.toml builds it for gfx942,"
    " gfx950 only (targets.aiter-wheel.archs)"
)


def test_plan_says_what_a_group_left_out_and_why(tmp_path):
    plan = write_plan(tmp_path, [("triton-wheel", None, "does-not-exist", None)])
    doc = json.loads(plan.read_text())
    plan.write_text(json.dumps({**doc, "left_out": [NOT_BUILT]}))
    result = registry_tool("plan", "--plan", str(plan), "--registry", "r.example:5000/ns")
    assert result.code == 0, result.err
    assert result.err.splitlines()[:2] == [
        f"registry: note: {NOT_BUILT}; left out",
        "# plan for noarch: 1 image, 2 tags -> r.example:5000/ns",
    ]
    assert result.err.splitlines()[2].startswith(f"upstream: {upstream()}")
    assert len(result.out.splitlines()) == 2


@pytest.mark.parametrize("command", ["plan", "push"])
def test_a_plan_that_left_out_every_image_is_refused(tmp_path, command):
    plan = tmp_path / "plan.json"
    plan.write_text(json.dumps({"images": [], "left_out": [NOT_BUILT]}))
    result = registry_tool(command, "--plan", str(plan), "--registry", "r.example:5000/ns")
    assert result.code != 0
    assert result.err == f"registry: error: {NOT_BUILT}: nothing to {command}\n"


def test_plan_target_passes_its_arguments_through():
    # `bazel run //images:push_default.plan -- --json --registry ...`
    result = run([os.environ["PLAN_DEFAULT_BIN"], "--json", "--registry", "r.example/ns"])
    assert result.code == 0, result.err
    images = json.loads(result.out)["images"]
    assert images[0] == {
        "target": "rocm-runtime",
        "arch": "gfx950",
        "refs": [
            f"r.example/ns/rocm-runtime:{tags('rocm-runtime', 'gfx950').versioned}",
            "r.example/ns/rocm-runtime:latest-gfx950",
        ],
        "immutable": None,
    }


def test_tags_lists_digest_target_and_arch(registry):
    assert push_default(registry.host).code == 0
    result = registry_tool("tags", f"{NAMESPACE}/pytorch", "--registry", registry.host)
    assert result.code == 0, result.err
    rows = [line.split("\t") for line in result.out.splitlines()]
    digest = metadata("pytorch.gfx950")["digest"]
    versioned = tags("pytorch", "gfx950").versioned
    assert [versioned, digest, "pytorch", "gfx950", "versioned"] in rows
    assert [
        "latest-gfx1201",
        metadata("pytorch.gfx1201")["digest"],
        "pytorch",
        "gfx1201",
        "floating",
    ] in rows
    # the default group's tags of the repository (pytorch-test, also in it, is in no group)
    assert len(rows) == len(
        [r for r in expected_default_refs() if r.startswith(f"{NAMESPACE}/pytorch:")]
    )


def test_push_to_an_unreachable_registry_fails_naming_it(tmp_path):
    result = push_one(tmp_path, "127.0.0.1:9", "--retries", "1", "--backoff", "0.01")
    assert result.code == 1
    assert "registry: error:" in result.err and "127.0.0.1:9" in result.err
    assert "Traceback" not in result.err


def test_signed_push_of_the_family_verifies_and_a_moved_tag_fails(registry, proxy_for, tmp_path):
    """The real push binary with --sign (what --config=release passes), then `verify`."""
    from tools.registry.sign import find_cosign

    password = {"COSIGN_PASSWORD": "release-test"}
    run([find_cosign(), "generate-key-pair", "--output-key-prefix", str(tmp_path / "k")], password)
    key, pub = str(tmp_path / "k.key"), str(tmp_path / "k.pub")
    result = push_default(registry.host, "--sign", "--key", key, env=password)
    assert result.code == 0, result.err
    n, refs = len(default_images()), len(expected_default_refs())
    assert f"{n} SBOMs and {n} provenances attached" in result.err
    # each image's, its SBOM's and its provenance's
    assert f"{3 * n} signatures made" in result.err
    plan = "tests/e2e/push_default_e2e_archs.json"
    target = f"{registry.host}/{NAMESPACE}"
    verify = registry_tool("verify", "--plan", plan, "--registry", target, "--key", pub)
    assert verify.code == 0, verify.out + verify.err
    assert verify.out.count("verified ") == refs

    # a no-op signed re-push writes nothing and runs no cosign
    proxy = proxy_for(registry)
    again = push_default(proxy.host, "--sign", "--key", key, env=password)
    assert again.code == 0, again.err
    assert proxy.writes() == []
    assert f"0 signatures made, {n} images already complete" in again.err
    # 1 + 2 tags, then 3 digests x (referrers list + bundle manifest + bundle blob), + 1 probe
    assert len(proxy.requests) == n * (1 + 2 + 3 * 3) + 1

    # tamper: pytorch:latest-gfx950 now names the (also signed) gfx1201 image
    import httpx

    gfx1201 = metadata("pytorch.gfx1201")
    moved = httpx.put(
        f"http://{registry.host}/v2/{NAMESPACE}/pytorch/manifests/latest-gfx950",
        content=gfx1201["manifest"].encode(),
        headers={"Content-Type": gfx1201["media_type"]},
    )
    assert moved.status_code == 201, moved.text
    tampered = registry_tool("verify", "--plan", plan, "--registry", target, "--key", pub)
    assert tampered.code == 1
    ref = f"{target}/pytorch:latest-gfx950"
    assert f"FAILED {ref}@{gfx1201['digest']}: names {gfx1201['digest']}" in tampered.out
    assert f"verification failed: {ref}" in tampered.err
    assert tampered.out.count("verified ") == refs - 1


def test_a_dry_run_against_a_registry_that_will_not_take_a_write_says_so(registry, proxy_for):
    """--dry-run checks a write too (#42 2.2): the credentials a push needs, not only a read."""
    proxy = proxy_for(registry)
    proxy.faults.append(Fault("POST", r"/blobs/uploads/$", "403", count=100))
    result = push_default(proxy.host, "--dry-run")
    assert result.code == 1
    assert "may not write there (HTTP 403)" in result.err
    assert result.err.splitlines()[-1].endswith("nothing written; the push would fail")
    assert result.out == ""
