"""End-to-end from a registry: our own docker-registry, the fixture images pushed into it.

Nothing is pushed to the shared registry: each run starts a registry on a
free loopback port, pushes the gfx950 wheel images from staging (through
their descriptors) with the push tool, and collects --from-registry by
floating and by versioned tags.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from tests.wheelhouse.fakes import WHEELS
from tests.wheelhouse.fixture import ARCH, ROCM, descriptor_path, family, spec, start_registry
from tools.registry.plan import PlannedImage
from tools.registry.push import Pusher, PushOptions

NAMESPACE = "rocm-pytorch"


def planned(registry: str, target: str, arch: str = ARCH, tags=None) -> PlannedImage:
    s = spec(target, arch)
    return PlannedImage(
        target=target,
        arch=s["arch"],
        registry=registry,
        repository=s["repository"],
        tags=tuple(tags or (s["tags"]["versioned"], s["tags"]["floating"])),
        immutable=None,
        descriptor=descriptor_path(target, arch),
        parents=(),
    )


def push(images: list[PlannedImage]) -> None:
    pusher = Pusher(PushOptions(), log=lambda _msg: None)
    try:
        result = pusher.push(images)
    finally:
        pusher.close()
    assert result.failed is None, result.error


@pytest.fixture(scope="module")
def registry(tmp_path_factory):
    root = tmp_path_factory.mktemp("registry")
    with pytest.MonkeyPatch.context() as env:
        # no credentials: keep the user's docker config out of this registry
        env.setenv("DOCKER_CONFIG", str(root / "docker-config"))
        reg = start_registry(root)
        try:
            push([planned(f"{reg.host}/{NAMESPACE}", t) for t in WHEELS])
            yield reg
        finally:
            reg.stop()


def sha256s(out: Path) -> dict[str, str]:
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in out.glob("*.whl")}


@pytest.mark.parametrize("kind", ["floating", "versioned"])
def test_collects_from_the_registry_what_staging_holds(tmp_path, run, registry, kind):
    where = f"{registry.host}/{NAMESPACE}"
    from_registry, from_staging = tmp_path / "reg", tmp_path / "stg"
    argv = ["--arch", ARCH, "--out", from_registry, "--tag", kind, "--from-registry", where]
    rc, stdout, err = run(*argv)
    assert rc == 0, err
    assert f"wheels for {ARCH}, ROCm {ROCM}" in stdout
    descriptors = [a for t in WHEELS for a in ("--descriptor", descriptor_path(t))]
    assert run("--arch", ARCH, "--out", from_staging, *descriptors)[0] == 0
    # should be the very same wheels, from the very same images, pulled by the tag asked for
    assert sha256s(from_registry) == sha256s(from_staging)
    assert len(sha256s(from_registry)) == 8
    manifest = json.loads((from_registry / "wheelhouse.json").read_text())
    for image, (target, d) in zip(manifest["images"], family().items(), strict=True):
        assert image["target"] == target
        assert image["digest"] == d.digest
        assert image["origin"] == f"{where}/{d.repository}:{spec(target)['tags'][kind]}"
    assert (from_registry / "simple" / "vllm" / "index.html").is_file()


def test_refuses_a_gfx1201_image_pushed_to_latest_gfx950(tmp_path, run, registry):
    # the bug story: the gfx1201 vllm-wheel landed on vllm-wheel:latest-gfx950
    where = f"{registry.host}/misfiled"
    push([planned(where, t) for t in WHEELS if t != "vllm-wheel"])
    push([planned(where, "vllm-wheel", "gfx1201", tags=("latest-gfx950",))])
    rc, _, err = run("--arch", ARCH, "--out", tmp_path / "wh", "--from-registry", where)
    assert rc == 2
    assert err.count("\n") == 1 and "Traceback" not in err
    assert (
        f"refusing to mix archs: this is a gfx950 wheelhouse (--arch gfx950), but vllm-wheel"
        f" (gfx1201) from {where}/vllm-wheel:latest-gfx950 is built for gfx1201" in err
    )


def test_a_missing_tag_names_the_ref_and_the_push(tmp_path, run, registry):
    where = f"{registry.host}/{NAMESPACE}"
    rc, _, err = run("--arch", "gfx942", "--out", tmp_path / "wh", "--from-registry", where)
    assert rc == 2
    assert err.startswith(
        f"wheelhouse: error: {where}/pytorch-wheel:latest-gfx942: not found"
        " in the registry; publish the wheel images first"
    )


def test_a_wheel_not_built_for_the_arch_is_left_out_saying_so(tmp_path, run, registry):
    # the rehearsal's story: a gfx1201 wheelhouse from the registry stopped on
    # aiter-wheel, which the catalogue builds for gfx942 and gfx950 only
    where = f"{registry.host}/rdna"
    push([planned(where, "vllm-wheel", "gfx1201")])
    out = tmp_path / "wh"
    argv = ["--arch", "gfx1201", "--out", out, "--from-registry", where]
    rc, _, err = run(*argv, "--target", "aiter-wheel", "--target", "vllm-wheel")
    assert rc == 0, err
    assert (
        "aiter-wheel is not built for gfx1201: catalog.toml builds it for gfx942, gfx950"
        " only (targets.aiter-wheel.archs): left out of the wheelhouse" in err
    )
    assert [w.name.split("-")[0] for w in out.glob("*.whl")] == ["vllm"]
