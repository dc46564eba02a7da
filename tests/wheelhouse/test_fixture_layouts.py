"""End-to-end from the fixture family's layouts (built by //tests/e2e with Docker).

Collect the gfx950 wheelhouse, pip-install torch and vllm from it with no
other index, import them; a gfx1201 layout named next to them is refused.
"""

from __future__ import annotations

import json
import re
import shutil

from tests.wheelhouse.fakes import WHEELS, import_build_info, pip_install
from tests.wheelhouse.fixture import ARCH, E2E, family_metadata, layout


def test_collects_gfx950_from_the_layouts_and_pip_installs_torch_and_vllm(tmp_path, run):
    out = tmp_path / "wh"
    rc, stdout, err = run("--arch", ARCH, "--out", out, "--from-layouts", E2E)
    assert rc == 0, err
    assert stdout.startswith(f"wheelhouse: 8 wheels for {ARCH}, ROCm 10.1.0-full, from 8 images")
    # the directory also holds vllm-wheel.gfx1201: skipped, not collected
    assert "skipped 1 layouts" in err
    manifest = json.loads((out / "wheelhouse.json").read_text())
    meta = family_metadata()
    assert {i["target"]: i["digest"] for i in manifest["images"]} == {
        t: meta[t]["digest"] for t in WHEELS
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
    assert info["vllm"]["rocm"] == "10.1.0-full"


def test_refuses_the_gfx1201_layout_named_with_the_gfx950_ones(tmp_path, run):
    args = [a for t in WHEELS for a in ("--layout", layout(t))]
    odd = layout("vllm-wheel", "gfx1201")
    rc, _, err = run("--arch", ARCH, "--out", tmp_path / "wh", *args, "--layout", odd)
    assert rc == 2
    assert err.count("\n") == 1 and "Traceback" not in err
    assert err.startswith("wheelhouse: error: refusing to mix archs:")
    assert f"vllm-wheel (gfx1201) from {odd} is built for gfx1201" in err
    assert "--arch gfx1201" in err
    assert not (tmp_path / "wh").exists()


def test_gfx1201_from_the_same_directory_lacks_most_targets(tmp_path, run):
    rc, _, err = run("--arch", "gfx1201", "--out", tmp_path / "wh", "--from-layouts", E2E)
    assert rc == 2
    assert err.startswith(
        "wheelhouse: error: no gfx1201 image of pytorch-wheel, aiter-wheel, torchvision-wheel,"
        " cupy-wheel, nixl-wheel, lmcache-wheel; build them (e.g. bazel build"
        " //images:pytorch-wheel.gfx1201)"
    )


def test_a_copied_layout_without_its_json_is_identified_by_labels(tmp_path, run):
    copy = tmp_path / "copy.layout"
    shutil.copytree(layout("vllm-wheel"), copy)
    rc, stdout, err = run("--out", tmp_path / "wh", "--layout", copy, "--target", "vllm-wheel")
    assert rc == 0, err
    assert "vllm-wheel (gfx950)" in stdout and "ROCm 10.1.0-full" in stdout
