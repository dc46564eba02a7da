"""End-to-end from staging: the fixture family's images (built by //tests/e2e with Docker).

Bazel builds the wheel images into the staging registry and gives this test
their descriptors. Collect the gfx950 wheelhouse through them, pip-install
torch and vllm from it with no other index, import them; a gfx1201
descriptor named next to them is refused; a descriptor whose image staging
does not hold is reported with the fix.
"""

from __future__ import annotations

import json
import re

from tests.wheelhouse.fakes import WHEELS, import_build_info, pip_install
from tests.wheelhouse.fixture import ARCH, E2E, ROCM, descriptor, descriptor_path, family


def test_collects_gfx950_from_staging_and_pip_installs_torch_and_vllm(tmp_path, run):
    out = tmp_path / "wh"
    rc, stdout, err = run("--arch", ARCH, "--out", out, "--from-staging", E2E)
    assert rc == 0, err
    assert stdout.startswith(f"wheelhouse: 8 wheels for {ARCH}, ROCm {ROCM}, from 8 images")
    # the directory also holds vllm-wheel.gfx1201: skipped, not collected
    assert "skipped 1 staged images" in err
    manifest = json.loads((out / "wheelhouse.json").read_text())
    images = family()
    assert {i["target"]: i["digest"] for i in manifest["images"]} == {
        t: images[t].digest for t in WHEELS
    }
    assert {i["target"]: i["origin"] for i in manifest["images"]} == {
        t: str(descriptor_path(t)) for t in WHEELS
    }
    names = sorted(p.name for p in out.glob("*.whl"))
    assert len(names) == 8
    assert all(n.endswith("-py3-none-any.whl") for n in names)
    assert all(".gfx950-" in n for n in names if not n.startswith("triton-"))

    site = tmp_path / "site"
    result = pip_install(out / "simple", site, "torch", "vllm")
    assert result.returncode == 0, result.stdout + result.stderr
    assert re.findall(r"Looking in indexes: (.*)", result.stdout) in (
        [],
        [(out / "simple").as_uri()],
    )
    info = import_build_info(site, "torch", "vllm")
    assert info["torch"]["arch"] == ARCH and info["vllm"]["arch"] == ARCH
    assert info["vllm"]["rocm"] == ROCM


def test_refuses_the_gfx1201_descriptor_named_with_the_gfx950_ones(tmp_path, run):
    args = [a for t in WHEELS for a in ("--descriptor", descriptor_path(t))]
    odd = descriptor_path("vllm-wheel", "gfx1201")
    rc, _, err = run("--arch", ARCH, "--out", tmp_path / "wh", *args, "--descriptor", odd)
    assert rc == 2
    assert err.count("\n") == 1 and "Traceback" not in err
    assert err.startswith("wheelhouse: error: refusing to mix archs:")
    assert f"vllm-wheel (gfx1201) from {odd} is built for gfx1201" in err
    assert "--arch gfx1201" in err
    assert not (tmp_path / "wh").exists()


def test_gfx1201_from_the_same_directory_lacks_most_targets(tmp_path, run):
    rc, _, err = run("--arch", "gfx1201", "--out", tmp_path / "wh", "--from-staging", E2E)
    assert rc == 2
    assert err.startswith(
        "wheelhouse: error: no gfx1201 image of pytorch-wheel, torchvision-wheel,"
        " cupy-wheel, nixl-wheel, lmcache-wheel; build them (e.g. bazel build"
        " //images:pytorch-wheel.gfx1201)"
    )


def test_a_copied_descriptor_still_reads_the_image_from_staging(tmp_path, run):
    copy = tmp_path / "elsewhere" / "copy.json"
    copy.parent.mkdir()
    copy.write_bytes(descriptor_path("vllm-wheel").read_bytes())
    rc, stdout, err = run("--out", tmp_path / "wh", "--descriptor", copy, "--target", "vllm-wheel")
    assert rc == 0, err
    assert "vllm-wheel (gfx950)" in stdout and f"ROCm {ROCM}" in stdout
    manifest = json.loads((tmp_path / "wh" / "wheelhouse.json").read_text())
    assert manifest["images"][0]["digest"] == descriptor("vllm-wheel").digest


def test_an_image_staging_does_not_hold_is_one_line_saying_to_rebuild(tmp_path, run):
    # the real staging registry, asked for a repository it never had: what a
    # staging registry that was wiped or garbage-collected answers
    d = descriptor("vllm-wheel")
    data = json.loads(descriptor_path("vllm-wheel").read_text())
    data["staging"]["name"] = d.staging_name + "-wiped"
    stale = tmp_path / "vllm-wheel.gfx950.json"
    stale.write_text(json.dumps(data))
    out = tmp_path / "wh"
    rc, _, err = run("--out", out, "--descriptor", stale, "--target", "vllm-wheel")
    assert rc == 2
    assert err.count("\n") == 1 and "Traceback" not in err
    assert err == (
        f"wheelhouse: error: staging has lost vllm-wheel (gfx950) {d.digest}"
        f" ({d.staging_host}/{d.staging_name}-wiped@{d.digest}), named by {stale};"
        " run `bazel run //tools/staging -- forget` and build again (it rebuilds what is"
        " missing)\n"
    )
    assert not out.exists()
