"""tools/imagecheck/check.py: what it makes of a probe's report (the probe's JSON, written here)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from tools.imagecheck import check

NEEDS = check.load_needs()
ARCHS = ["gfx1100"]


def torch_loads(**override) -> list[dict]:
    torch = next(p for p in NEEDS["package"] if p["name"] == "torch")
    loads = []
    for n in torch["needs"]:
        soname = f"lib{n['library']}.so.1"
        if n.get("debian") is False:
            loads.append({"library": n["library"], "absent_everywhere": True})
        else:
            loads.append(
                {"library": n["library"], "how": "linked", "linked": [soname], "name": soname,
                 "path": f"/opt/rocm/lib/{soname}", "error": None}
            )  # fmt: skip
    for entry in loads:
        entry.update(override.get(entry["library"], {}))
    return loads


def good_probe() -> dict:
    spec = check.spec(NEEDS)
    libraries = [
        {"library": lib, "found": [f"lib{lib}.so.1"], "name": f"lib{lib}.so.1", "error": None}
        for lib in spec["rocm_libraries"]
        if lib not in spec["not_in_debian"]
    ] + [{"library": lib, "found": []} for lib in spec["not_in_debian"]]
    kernels = [
        {"library": k["library"], "where": k.get("files", "lib"), "exists": True}
        | ({"tokens": {"gfx1100": 3, "gfx942": 2}} if "files" in k else {"targets": ["gfx1100"]})
        for k in NEEDS["kernels"]
    ]
    kernels.append({"library": "AOTriton", "where": "torch/lib/aotriton.images", "exists": True,
                    "tokens": {"gfx1100": 1}})  # fmt: skip
    torch = {
        "name": "torch", "present": True, "import_error": None,
        "objects": [{"path": "/v/torch/lib/libtorch_hip.so", "needed": [], "unresolved": []}],
        "needed": [], "loads": torch_loads(),
        "fatbins": {"/v/torch/lib/libtorch_hip.so": ["gfx1100"]},
    }  # fmt: skip
    absent = [{"name": p["name"], "present": False} for p in NEEDS["package"][1:]]
    return {"libraries": libraries, "packages": [torch, *absent], "kernels": kernels}


def failing(results):
    return {r.name: r.detail for r in results if not r.ok}


def test_a_complete_image_passes_and_says_what_debian_lacks():
    results = check.judge(good_probe(), NEEDS, ARCHS)
    assert not failing(results), failing(results)
    libs = next(r for r in results if r.name == "ROCm libraries load")
    assert "not in Debian, so not in the stand-in: libroctracer64" in libs.detail


def test_a_library_the_loader_cannot_find_is_named():
    probe = good_probe()
    miopen = next(lib for lib in probe["libraries"] if lib["library"] == "MIOpen")
    miopen.clear()
    miopen.update({"library": "MIOpen", "found": []})
    assert (
        "libMIOpen: not in the loader's cache"
        in failing(check.judge(probe, NEEDS, ARCHS))["ROCm libraries load"]
    )


def test_an_import_error_and_an_unresolved_library_are_named():
    probe = good_probe()
    torch = probe["packages"][0]
    torch["import_error"] = "ImportError: libhipblaslt.so.1: cannot open shared object file"
    torch["objects"][0]["unresolved"] = ["libhipblaslt.so.1"]
    detail = failing(check.judge(probe, NEEDS, ARCHS))["torch loads"]
    assert "import torch: ImportError: libhipblaslt.so.1" in detail
    assert "libtorch_hip.so needs libhipblaslt.so.1: not found" in detail


def test_a_package_that_does_not_link_what_the_real_one_links_fails():
    probe = good_probe()
    probe["packages"][0]["loads"] = torch_loads(hipfft={"linked": [], "name": None})
    assert (
        "torch does not link libhipfft" in failing(check.judge(probe, NEEDS, ARCHS))["torch loads"]
    )


@pytest.mark.parametrize("library", ["rocBLAS", "hipBLASLt", "rocFFT", "AOTriton"])
def test_a_required_library_without_kernels_for_an_arch_fails_naming_both(library):
    probe = good_probe()
    k = next(k for k in probe["kernels"] if k["library"] == library)
    if "tokens" in k:
        k["tokens"] = {"gfx942": 2}
    else:
        k["targets"] = ["gfx942"]
    detail = failing(check.judge(probe, NEEDS, ARCHS))[f"{library} kernels for gfx1100"]
    assert f"{library} has no kernels for gfx1100" in detail


def test_a_family_member_without_kernels_is_named_and_generic_code_covers_its_members():
    probe = good_probe()
    for k in probe["kernels"]:
        k.pop("tokens", None)
        k["targets"] = ["gfx11-generic"] if k["library"] != "rocBLAS" else ["gfx1100"]
    probe["packages"][0]["fatbins"] = {"/v/torch/lib/libtorch_hip.so": ["gfx1100", "gfx1101"]}
    bad = failing(check.judge(probe, NEEDS, ["gfx1100", "gfx1101"]))
    assert list(bad) == ["rocBLAS kernels for gfx1100/gfx1101"]
    assert "rocBLAS has no kernels for gfx1101" in bad["rocBLAS kernels for gfx1100/gfx1101"]


def test_a_wheel_without_code_for_an_arch_fails_naming_the_file():
    probe = good_probe()
    probe["packages"][0]["fatbins"] = {"/v/torch/lib/libtorch_hip.so": ["gfx1100"]}
    bad = failing(check.judge(probe, NEEDS, ["gfx1100", "gfx1101"]))
    assert (
        "libtorch_hip.so has no code object for gfx1101"
        in bad["torch code objects for gfx1100/gfx1101"]
    )


def test_reported_only_kernels_do_not_fail():
    probe = good_probe()
    for k in probe["kernels"]:
        if k["library"] in ("hipSPARSELt", "MIOpen databases"):
            k["tokens"] = {"gfx942": 1}
    assert not failing(check.judge(probe, NEEDS, ARCHS))


def test_an_image_that_names_no_arch_needs_one():
    with pytest.raises(check.ImageCheckError, match="give --arch"):
        check.claimed_archs({"gpu_arch_file": ""}, None)
    assert check.claimed_archs({"gpu_arch_file": "gfx1100;gfx1101"}, None) == ["gfx1100", "gfx1101"]
    assert check.claimed_archs({"gpu_arch_file": "gfx1100"}, "gfx942") == ["gfx942"]


def test_the_probe_runs_on_this_host_and_reports_what_it_cannot_load(tmp_path):
    # the probe itself, with this host's Python: a library nobody has, no package
    spec = {
        "rocm_libraries": ["no-such-rocm-library", "c"],
        "packages": [{"name": "no_such_package_here", "needs": []}],
        "kernels": [{"library": "X", "files": str(tmp_path / "k")}],
    }
    (tmp_path / "k" / "amd-gfx1100").mkdir(parents=True)
    (tmp_path / "k" / "amd-gfx1100" / "attn.hsaco").write_text("")
    (tmp_path / "spec.json").write_text(json.dumps(spec))
    probe = Path(check.__file__).parent / "probe.py"
    out = json.loads(
        subprocess.run(
            ["python3", str(probe), str(tmp_path / "spec.json")],
            capture_output=True, text=True, check=True,
        ).stdout
    )  # fmt: skip
    libs = {lib["library"]: lib for lib in out["libraries"]}
    assert libs["no-such-rocm-library"]["found"] == []
    assert libs["c"]["found"] and libs["c"]["error"] is None
    assert out["packages"] == [{"name": "no_such_package_here", "present": False}]
    assert out["kernels"][0]["tokens"] == {"gfx1100": 1}


def test_generic_targets():
    assert check.covers("gfx11-generic", "gfx1101")
    assert check.covers("gfx90a:xnack-", "gfx90a")
    assert not check.covers("gfx1100", "gfx1101")
    assert not check.covers("gfx11-generic", "gfx942")


def test_an_image_that_cannot_run_is_one_line_and_exit_2(tmp_path, capsys):
    docker = tmp_path / "docker"
    docker.write_text(
        "#!/bin/sh\necho 'Unable to find image' >&2\n"
        "echo 'docker: Error response from daemon: manifest unknown' >&2\nexit 125\n"
    )
    docker.chmod(0o755)
    assert check.main(["registry.invalid/x:1", "--docker", str(docker)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [
        "imagecheck: error: registry.invalid/x:1: the probe could not run:"
        " docker: Error response from daemon: manifest unknown"
    ]
    assert check.main(["registry.invalid/x:1", "--pull", "--docker", str(docker)]) == 2
    assert "docker pull registry.invalid/x:1: docker: Error response" in capsys.readouterr().err


def test_help():
    with pytest.raises(SystemExit) as e:
        check.main(["--help"])
    assert e.value.code == 0
