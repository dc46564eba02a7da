"""own-packages.py, nixl-rocm.py and check-shared-libs.sh on fixture input (no Docker)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

SCRIPTS = Path("docker/scripts").resolve()  # runfiles path (cwd = runfiles root)
RUNNING = f"{sys.version_info[0]}.{sys.version_info[1]}"


def run(script: str, *args: str, path: Path | None = None) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ)
    if path:
        env["PYTHONPATH"] = f"{path}:{env.get('PYTHONPATH', '')}"
        # the shell scripts call `python`, as in the images (the venv's)
        (path / "bin").mkdir(exist_ok=True)
        python = path / "bin/python"
        if not python.exists():
            python.symlink_to(sys.executable)
        env["PATH"] = f"{path / 'bin'}:{env['PATH']}"
    if script.endswith(".py"):
        cmd = [sys.executable, str(SCRIPTS / script)]
    else:
        cmd = ["bash", str(SCRIPTS / script)]
    return subprocess.run([*cmd, *args], env=env, capture_output=True, text=True)


def dist(site: Path, name: str, version: str, files: list[str]) -> None:
    """A fake installed distribution: its dist-info (RECORD) and its files."""
    info = site / f"{name.replace('-', '_')}-{version}.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n")
    (info / "RECORD").write_text("".join(f"{f},,\n" for f in files))
    for f in files:
        (site / f).parent.mkdir(parents=True, exist_ok=True)
        (site / f).write_text("")


def test_constraints_pin_ours_and_forbid_their_other_builds(tmp_path):
    dist(tmp_path, "cupy", "14.2.0", ["cupy/__init__.py"])
    out = run("own-packages.py", path=tmp_path).stdout.splitlines()
    assert "cupy==14.2.0" in out
    assert {"cupy-rocm-7-0<0", "cupy-cuda12x<0", "nixl-cu12<0", "amd-cupy<0"} <= set(out)


def test_retarget_makes_a_projects_requirements_name_our_builds(tmp_path):
    req = tmp_path / "rocm_core.txt"
    req.write_text(
        "# the AMD analogue of cupy-cuda12x\ncupy-rocm-7-0\nnixl-cu12>=0.4  # transfer\nnumpy<3\n"
    )
    proc = run("own-packages.py", "--retarget", str(req))
    assert proc.returncode == 0, proc.stderr
    assert req.read_text().splitlines() == [
        "# the AMD analogue of cupy-cuda12x",
        "cupy",
        "nixl-rocm",
        "numpy<3",
    ]
    assert f"{req}: cupy-rocm-7-0 -> cupy" in proc.stdout
    # nothing to do: the file stays as it is
    assert run("own-packages.py", "--retarget", str(req)).stdout == ""


def test_this_python_drops_an_upper_bound_that_leaves_it_out(tmp_path):
    pyproject = tmp_path / "pyproject.toml"
    pyproject.write_text(f'[project]\nname = "lmcache"\nrequires-python = ">=3.10,<{RUNNING}"\n')
    proc = run("own-packages.py", "--this-python", str(pyproject))
    assert proc.returncode == 0, proc.stderr
    assert 'requires-python = ">=3.10"' in pyproject.read_text()
    assert f"(Python {RUNNING})" in proc.stdout
    pyproject.write_text('[project]\nrequires-python = ">=3.10"\n')
    assert run("own-packages.py", "--this-python", str(pyproject)).stdout == ""


def test_this_python_refuses_a_lower_bound_above_it(tmp_path):
    pyproject = tmp_path / "pyproject.toml"
    pyproject.write_text('[project]\nrequires-python = ">=3.99,<4"\n')
    proc = run("own-packages.py", "--this-python", str(pyproject))
    assert proc.returncode == 1 and f"excludes {RUNNING}" in proc.stderr


def test_check_wants_one_distribution_per_import_package(tmp_path):
    dist(tmp_path, "cupy", "14.2.0", ["cupy/__init__.py"])
    assert run("own-packages.py", "--check", path=tmp_path).returncode == 0
    dist(tmp_path, "cupy-rocm-7-0", "14.2.0", ["cupy/__init__.py", "cupy/.data/_wheel.json"])
    proc = run("own-packages.py", "--check", path=tmp_path)
    assert proc.returncode == 1
    assert "cupy is installed by cupy, cupy-rocm-7-0; want only cupy" in proc.stderr


def test_nixl_rename_and_its_shim(tmp_path):
    pyproject = tmp_path / "pyproject.toml"
    pyproject.write_text('[project]\nname = "nixl-cu12"\nversion = "1.5.2"\n')
    assert run("nixl-rocm.py", "rename", str(pyproject)).returncode == 0
    assert 'name = "nixl-rocm"' in pyproject.read_text()
    again = run("nixl-rocm.py", "rename", str(pyproject))
    assert again.returncode == 1 and 'no `name = "nixl-cu<N>"` line' in again.stderr
    # the ROCm build's package, and the shim wheel over it
    site = tmp_path / "site"
    (site / "nixl_rocm").mkdir(parents=True)
    (site / "nixl_rocm/__init__.py").write_text("")
    (site / "nixl_rocm/_api.py").write_text("class nixl_agent:\n    pass\n")
    wheel = tmp_path / "nixl_rocm-1.5.2-cp314-cp314-linux_x86_64.whl"
    wheel.write_bytes(b"")
    proc = run("nixl-rocm.py", "shim", str(wheel), str(tmp_path / "out"))
    assert proc.returncode == 0, proc.stderr
    shim = tmp_path / "out/nixl-1.5.2-py3-none-any.whl"
    with zipfile.ZipFile(shim) as z:
        z.extractall(site)
        metadata = z.read("nixl-1.5.2.dist-info/METADATA").decode()
    assert "Requires-Dist: nixl-rocm==1.5.2" in metadata
    probe = "from nixl._api import nixl_agent; import nixl_rocm._api as r"
    probe += "; assert nixl_agent is r.nixl_agent"
    env = dict(os.environ, PYTHONPATH=str(site))
    proc = subprocess.run([sys.executable, "-c", probe], env=env, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    bad = run(
        "nixl-rocm.py", "shim", str(tmp_path / "nixl_cu12-1.5.2-x.whl"), str(tmp_path / "out")
    )
    assert bad.returncode == 1 and "is not a nixl_rocm wheel" in bad.stderr


def test_check_shared_libs_reads_every_library_a_distribution_owns(tmp_path):
    libz = next(
        p
        for p in ("/usr/lib/x86_64-linux-gnu/libz.so.1", "/lib/x86_64-linux-gnu/libz.so.1")
        if Path(p).exists()
    )
    site = tmp_path / "site"
    dist(
        site, "nixl-rocm", "1.5.2", ["nixl_rocm/__init__.py", ".nixl_rocm.mesonpy.libs/libnixl.so"]
    )
    (site / ".nixl_rocm.mesonpy.libs/libnixl.so").write_bytes(Path(libz).read_bytes())
    ok = run("check-shared-libs.sh", "nixl_rocm", path=site)
    assert ok.returncode == 0, ok.stderr
    missing = run("check-shared-libs.sh", "nixl", path=site)
    assert missing.returncode == 1 and "package nixl is not installed" in missing.stderr


def _repair_wheel(purelib: Path):
    """repair-wheel.py as a module, in an environment whose site-packages is ``purelib``."""
    import importlib.util
    import sysconfig

    spec = importlib.util.spec_from_file_location("repair_wheel", SCRIPTS / "repair-wheel.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    paths = dict(sysconfig.get_paths(), purelib=str(purelib))
    module.sysconfig = type("sysconfig", (), {"get_paths": staticmethod(lambda: paths)})
    module.PROVIDED_PREFIXES = ("/opt/rocm", str(purelib))
    return module


def _cc(*args: str) -> None:
    subprocess.run(["cc", *args], check=True, capture_output=True)


def test_repair_wheel_finds_an_installed_packages_libraries_without_a_runpath(tmp_path):
    # torchvision's extension links torch's libraries with no RUNPATH to torch/lib (the
    # loader has them once `import torch` ran): ldd alone calls them missing.
    site = tmp_path / "site-packages"
    (site / "torch/lib").mkdir(parents=True)
    (tmp_path / "t.c").write_text("int torch_hip_has_magma(void) { return 1; }\n")
    _cc("-shared", "-fPIC", "-Wl,-soname,libtorch_hip.so", str(tmp_path / "t.c"), "-o",
        str(site / "torch/lib/libtorch_hip.so"))  # fmt: skip
    (tmp_path / "e.c").write_text(
        "int torch_hip_has_magma(void);\nint f(void) { return torch_hip_has_magma(); }\n"
    )
    ext = tmp_path / "_C.so"
    _cc(
        "-shared",
        "-fPIC",
        str(tmp_path / "e.c"),
        "-o",
        str(ext),
        f"-L{site / 'torch/lib'}",
        "-ltorch_hip",
    )
    repair = _repair_wheel(site)
    found = repair.dependencies(ext)
    assert found["libtorch_hip.so"] == site / "torch/lib/libtorch_hip.so"
    assert not repair.wanted("libtorch_hip.so", found["libtorch_hip.so"], tmp_path / "wheel")
    # without the environment's lib dirs it is the old failure
    repair.package_lib_dirs = lambda: []
    try:
        repair.dependencies(ext)
    except SystemExit as e:
        assert "needs libtorch_hip.so, missing in the build image" in str(e)
    else:
        raise AssertionError("ldd found libtorch_hip.so without the environment's lib dirs")


def _lib(tmp_path: Path, out: Path, name: str, *link: str, calls: str = "") -> Path:
    """A shared library ``out`` (SONAME ``name``) whose function ``name``-stem calls ``calls``."""
    stem = name.split(".")[0]
    src = tmp_path / f"{stem}.c"
    decl = f"int {calls}(void);\n" if calls else ""
    body = f"return {calls}();" if calls else "return 1;"
    src.write_text(f"{decl}int {stem}(void) {{ {body} }}\n")
    out.parent.mkdir(parents=True, exist_ok=True)
    _cc("-shared", "-fPIC", f"-Wl,-soname,{name}", "-Wl,--no-as-needed", str(src), "-o", str(out),
        *link)  # fmt: skip
    return out


def test_repair_wheel_vendors_what_the_wheel_needs_never_what_provided_libraries_need(tmp_path):
    # torchvision's shape: its extension needs torch's libtorch_hip.so (provided: torch/lib),
    # which needs libmagma, libgomp, ... (not provided by the image, but torch's business),
    # and libjpeg (not provided: vendored, with what libjpeg itself needs).
    site = tmp_path / "site-packages"
    other = tmp_path / "usr-lib"  # not provided: neither /opt/rocm nor the environment
    lib_b = _lib(tmp_path, other / "libB.so.1", "libB.so.1")
    _lib(tmp_path, site / "torch/lib/libA.so", "libA.so", f"-L{other}", "-l:libB.so.1",
         f"-Wl,-rpath,{other}", calls="libB")  # fmt: skip
    lib_d = _lib(tmp_path, other / "libD.so.3", "libD.so.3")
    lib_c = _lib(tmp_path, other / "libC.so.2", "libC.so.2", f"-L{other}", "-l:libD.so.3",
                 f"-Wl,-rpath,{other}", calls="libD")  # fmt: skip
    wheel = tmp_path / "wheel"
    ext = _lib(tmp_path, wheel / "torchvision/_C.so", "_C.so", f"-L{site / 'torch/lib'}",
               "-lA", f"-L{other}", "-l:libC.so.2", f"-Wl,-rpath,{other}")  # fmt: skip
    repair = _repair_wheel(site)

    assert repair.needed(ext)[:2] == ["libA.so", "libC.so.2"]
    readelf = subprocess.run(["readelf", "-d", str(ext)], capture_output=True, text=True).stdout
    assert repair.needed(ext) == re.findall(r"\(NEEDED\)\s+Shared library: \[(\S+)\]", readelf)

    vendored = repair.to_vendor([ext], wheel)
    # libC (the extension's own, not provided) and libD (which libC needs); never libA
    # (provided) nor libB (needed by libA only)
    assert vendored == {"libC.so.2": lib_c, "libD.so.3": lib_d}, vendored
    assert lib_b not in vendored.values()

    # a library the wheel needs that is missing fails naming it
    lib_c.unlink()
    with pytest.raises(SystemExit, match=r"_C.so needs libC.so.2, missing in the build image"):
        repair.to_vendor([ext], wheel)


def test_repair_wheel_ignores_what_is_missing_below_a_provided_library(tmp_path):
    # a provided library whose own dependency is absent in the build image is no concern of
    # the wheel's (check-shared-libs.sh checks the image that provides it)
    site = tmp_path / "site-packages"
    other = tmp_path / "usr-lib"
    _lib(tmp_path, other / "libB.so.1", "libB.so.1")
    _lib(tmp_path, site / "torch/lib/libA.so", "libA.so", f"-L{other}", "-l:libB.so.1",
         f"-Wl,-rpath,{other}", calls="libB")  # fmt: skip
    wheel = tmp_path / "wheel"
    ext = _lib(tmp_path, wheel / "pkg/_C.so", "_C.so", f"-L{site / 'torch/lib'}", "-lA")
    (other / "libB.so.1").unlink()
    assert _repair_wheel(site).to_vendor([ext], wheel) == {}
