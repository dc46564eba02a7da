"""Identity and the refusals: one arch, one ROCm version, each wheel target once."""

from __future__ import annotations

import pytest

from tests.wheelhouse.fakes import CATALOG, ROCM, WHEELS
from tools.wheelhouse.errors import WheelhouseError
from tools.wheelhouse.model import WheelImage, identify
from tools.wheelhouse.policy import check, pick

ARCH_FREE = {t.name for t in CATALOG.targets if not t.arch}


def image(target, arch="gfx950", rocm=ROCM, digest=None, origin=None):
    arch = None if target in ARCH_FREE else arch
    name = f"{target}.{arch}" if arch else target
    return WheelImage(
        target=target,
        arch=arch,
        repository=target,
        rocm_version=rocm,
        digest=digest or f"sha256:{abs(hash((target, arch, rocm))):064d}"[:71],
        origin=origin or f"out/{name}.json",
    )


def family(arch="gfx950", rocm=ROCM):
    return [image(t, arch, rocm) for t in WHEELS]


def run_check(images, arch="gfx950", wanted=WHEELS):
    return check(
        images, catalog=CATALOG, arch=arch, wanted=wanted, missing_fix="build //images:{example}"
    )


# -- identify ------------------------------------------------------------------

TARGET = "org.rocm-pytorch.image.target"
ARCH = "org.rocm-pytorch.image.arch"
VERSION = "org.opencontainers.image.version"


def ident(**kw):
    return identify(CATALOG, origin="r", digest="sha256:1", **kw)


def test_identify_reads_the_descriptor_and_rocm_from_the_version_label():
    meta = {"target": "vllm-wheel", "arch": "gfx950", "repository": "vllm-wheel"}
    got = ident(metadata=meta, labels={VERSION: "v0.77.1-9.8.7-full-gfx950"})
    assert (got.target, got.arch, got.repository, got.rocm_version) == (
        "vllm-wheel",
        "gfx950",
        "vllm-wheel",
        "9.8.7-full",
    )


def test_identify_takes_rocm_from_its_own_label_not_from_an_ambiguous_tag():
    # TRITON_VERSION=7.8.9-rc1: the tag 7.8.9-rc1-9.8.7-full parses as ROCm rc1-9.8.7-full
    labels = {
        TARGET: "triton-wheel",
        ARCH: "noarch",
        VERSION: "7.8.9-rc1-9.8.7-full",
        "org.rocm-pytorch.image.rocm-version": "9.8.7-full",
    }
    got = ident(labels=labels, pulled=("triton-wheel", "7.8.9-rc1-9.8.7-full"))
    assert (got.target, got.arch, got.rocm_version) == ("triton-wheel", None, "9.8.7-full")
    # and so it mixes with the arch images of ROCm 9.8.7-full (family()'s)
    run_check([*(i for i in family() if i.target != "triton-wheel"), got])


def test_identify_reads_labels_and_noarch_means_arch_free():
    got = ident(labels={TARGET: "triton-wheel", ARCH: "noarch", VERSION: "7.8.9-10.2.0"})
    assert (got.target, got.arch, got.rocm_version) == ("triton-wheel", None, "10.2.0")


def test_identify_a_floating_pull_takes_rocm_from_the_version_label():
    # latest-gfx950 says nothing about ROCm; the label holds the versioned tag
    labels = {VERSION: "4.5.6-9.8.7-full-gfx950"}
    got = ident(labels=labels, pulled=("pytorch-wheel", "latest-gfx950"))
    assert (got.target, got.arch, got.rocm_version) == ("pytorch-wheel", "gfx950", "9.8.7-full")


def test_identify_a_versioned_pull_without_labels_parses_the_tag():
    got = ident(pulled=("cupy-wheel", "v77.0.1-9.9-gfx942"))
    assert (got.target, got.arch, got.rocm_version) == ("cupy-wheel", "gfx942", "9.9")


def test_identify_a_floating_pull_without_labels_has_no_rocm_version():
    got = ident(pulled=("vllm-wheel", "latest-gfx950"))
    assert (got.arch, got.rocm_version) == ("gfx950", None)


def test_identify_labels_beat_the_tag_an_image_was_pulled_by():
    # the bug story: a gfx1201 image pushed to latest-gfx950
    got = ident(
        labels={TARGET: "vllm-wheel", ARCH: "gfx1201"}, pulled=("vllm-wheel", "latest-gfx950")
    )
    assert got.arch == "gfx1201"


def test_identify_refuses_a_descriptor_that_contradicts_the_labels():
    with pytest.raises(WheelhouseError, match=r"descriptor says vllm-wheel \(gfx950\).*gfx1201"):
        ident(metadata={"target": "vllm-wheel", "arch": "gfx950"}, labels={ARCH: "gfx1201"})


def test_identify_returns_none_for_an_anonymous_image():
    assert ident(labels={"maintainer": "me"}) is None


# -- check ---------------------------------------------------------------------


def test_check_accepts_one_arch_and_one_rocm_version_in_catalogue_order():
    images, rocm = run_check(list(reversed(family())))
    assert rocm == ROCM
    assert [i.target for i in images] == list(WHEELS)


@pytest.mark.parametrize("arch", ["gfx950", "gfx1201", "gfx90a"])
def test_check_takes_the_arch_free_triton_wheel_for_any_arch(arch):
    images, _ = run_check(family(arch), arch=arch)
    triton = next(i for i in images if i.target == "triton-wheel")
    assert triton.arch is None


def test_check_refuses_an_image_of_another_arch_and_names_it():
    images = family()
    images.append(image("vllm-wheel", "gfx1201"))
    with pytest.raises(WheelhouseError) as e:
        run_check(images)
    msg = str(e.value)
    assert msg.startswith("refusing to mix archs: this is a gfx950 wheelhouse")
    # should name the offending image with where it came from, and only that one
    assert "vllm-wheel (gfx1201) from out/vllm-wheel.gfx1201.json" in msg
    assert "pytorch-wheel" not in msg
    assert msg.endswith("leave it out, or collect a separate wheelhouse with --arch gfx1201")


def test_check_refuses_an_arch_target_without_an_arch():
    images = [i for i in family() if i.target != "cupy-wheel"]
    images.append(WheelImage("cupy-wheel", None, "cupy-wheel", ROCM, "sha256:c", "r/c"))
    with pytest.raises(WheelhouseError, match=r"cannot tell the arch of cupy-wheel from r/c"):
        run_check(images)


def test_check_refuses_mixed_rocm_versions_and_names_the_odd_ones_out():
    images = [i for i in family() if i.target not in ("vllm-wheel", "lmcache-wheel")]
    images += [image("vllm-wheel", rocm="10.2.0"), image("lmcache-wheel", rocm="10.2.0")]
    with pytest.raises(WheelhouseError) as e:
        run_check(images)
    msg = str(e.value)
    assert msg.startswith(f"refusing to mix ROCm versions: ROCm {ROCM}: pytorch-wheel (gfx950)")
    assert (
        "ROCm 10.2.0: vllm-wheel (gfx950) from out/vllm-wheel.gfx950.json,"
        " lmcache-wheel (gfx950) from out/lmcache-wheel.gfx950.json" in msg
    )
    assert f"one ROCM_VERSION (e.g. --define ROCM_VERSION={ROCM})" in msg


def test_check_refuses_the_arch_free_image_of_another_rocm_version():
    images = [i for i in family() if i.target != "triton-wheel"]
    images.append(image("triton-wheel", rocm="10.0.0"))
    with pytest.raises(WheelhouseError, match=r"ROCm 10.0.0: triton-wheel \(noarch\) from"):
        run_check(images)


def test_check_refuses_an_unknown_rocm_version():
    images = [i for i in family() if i.target != "nixl-wheel"]
    images.append(image("nixl-wheel", rocm=None, origin="reg/nixl-wheel:latest-gfx950"))
    with pytest.raises(WheelhouseError, match=r"ROCm version of nixl-wheel \(gfx950\) from reg/"):
        run_check(images)


def test_check_names_missing_targets_and_an_example_to_build():
    images = [i for i in family() if i.target not in ("aiter-wheel", "triton-wheel")]
    with pytest.raises(WheelhouseError) as e:
        run_check(images)
    assert (
        str(e.value) == "no gfx950 image of triton-wheel, aiter-wheel; build //images:triton-wheel"
    )


def test_check_for_an_arch_without_aiter_needs_no_aiter_wheel():
    images = [i for i in family("gfx1100") if i.target != "aiter-wheel"]
    got, _ = run_check(images, arch="gfx1100")
    # should collect the seven other wheels: the catalogue builds aiter for CDNA only
    assert [i.target for i in got] == [t for t in WHEELS if t != "aiter-wheel"]


def test_check_with_fewer_targets_needs_only_those():
    images, _ = run_check([image("pytorch-wheel")], wanted=("pytorch-wheel",))
    assert [i.target for i in images] == ["pytorch-wheel"]


def test_check_refuses_an_image_outside_the_wanted_targets():
    with pytest.raises(WheelhouseError, match=r"not one of the wheel images collected: vllm-wheel"):
        run_check([image("pytorch-wheel"), image("vllm-wheel")], wanted=("pytorch-wheel",))


def test_check_refuses_a_non_wheel_image():
    with pytest.raises(WheelhouseError, match=r"collected: pytorch \(gfx950\) from"):
        run_check([*family(), image("pytorch")])


def test_check_takes_the_same_image_twice_but_not_two_different_ones():
    same = image("torchvision-wheel", origin="elsewhere/torchvision-wheel.gfx950.json")
    images, _ = run_check([*family(), same])
    assert len(images) == len(WHEELS)
    other = image("torchvision-wheel", digest="sha256:" + "f" * 64, origin="stale/tv.json")
    with pytest.raises(WheelhouseError, match=r"two different images of torchvision-wheel.*stale"):
        run_check([*family(), other])


def test_pick_keeps_the_wanted_targets_of_one_arch_and_the_arch_free_ones():
    found = [*family("gfx950"), *family("gfx1201"), image("pytorch"), image("pytorch", "gfx1201")]
    kept, skipped = pick(found, "gfx1201", WHEELS)
    assert {(i.target, i.arch) for i in kept} == {
        (t, None if t in ARCH_FREE else "gfx1201") for t in WHEELS
    }
    assert len(kept) + len(skipped) == len(found)
