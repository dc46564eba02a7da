"""The stand-in Triton compiles its launcher on a kernel's first launch as Triton does:
with CC (else gcc, else clang) against the interpreter's Python.h, into its cache,
imported from there; no compiler or no Python.h fail as Triton's fail."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

STANDIN = Path(__file__).parents[2] / "rehearsal/sources/triton"
GCC = shutil.which("gcc")
INCLUDE = sysconfig.get_paths()["include"]
HEADERS = (Path(INCLUDE) / "Python.h").is_file()
# tools/bootstrap.sh puts both in the tree the tests run in: neither is optional
assert GCC and HEADERS, f"need gcc and {INCLUDE}/Python.h: run tools/bootstrap.sh"

# a kernel over an array-like (the stand-in's tensors are numpy; numpy is not needed here)
KERNEL = """
import array, sys, triton, triton.language as tl

class Array:
    def __init__(self, values):
        self.data = array.array("q", values)
        self.dtype, self.shape = "int64", (len(values),)
        self.__array_interface__ = {"data": (self.data.buffer_info()[0], False)}

@triton.jit
def echo(src, dst, n):
    i = tl.program_id(0)
    dst.data[i] = src.data[i % n] + 1

src, dst = Array([10, 20, 30]), Array([0] * 5)
devices = echo[(5,)](src, dst, 3)
print(devices, *dst.data)
"""


@pytest.fixture(scope="module")
def tree(tmp_path_factory) -> Path:
    """The stand-in's package with its native module built, and a HIP runtime that, like
    AMD's on a host without a GPU, counts no device (hipErrorNoDevice)."""
    root = tmp_path_factory.mktemp("triton")
    shutil.copytree(STANDIN / "python/triton", root / "triton")
    (root / "triton/_C").mkdir()
    suffix = sysconfig.get_config_var("EXT_SUFFIX")
    if HEADERS:
        native = root / f"triton/_C/libtriton{suffix}"
        source = STANDIN / "python/src/libtriton.c"
        subprocess.run([GCC, "-shared", "-fPIC", f"-I{INCLUDE}", "-o", native, source], check=True)
    else:  # the native module needs Python.h too: a Python one, for the failing paths only
        (root / "triton/_C/libtriton.py").write_text("def backend_names():\n    return ()\n")
    (root / "hip.c").write_text(
        "int hipGetDeviceCount(int *c) { *c = 0; return 100; }\n"
        'const char *hipGetErrorString(int e) { return "hipErrorNoDevice"; }\n'
    )
    subprocess.run(
        [GCC, "-shared", "-fPIC", "-o", root / "libamdhip64.so", root / "hip.c"], check=True
    )
    return root


def launch(tree: Path, cache: Path, script: str = KERNEL, **env: str):
    environ = {k: v for k, v in os.environ.items() if k != "CC"}
    environ.update(
        PYTHONPATH=str(tree),
        TRITON_CACHE_DIR=str(cache),
        TRITON_LIBHIP_PATH=str(tree / "libamdhip64.so"),
    )
    environ.update(env)
    return subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, env=environ, check=False
    )


def objects(cache: Path) -> dict[str, Path]:
    return {p.name.split(".")[0]: p for p in cache.glob("*/*.so")}


def test_the_first_launch_compiles_the_launcher_into_the_cache_and_runs_the_grid(tree, tmp_path):
    cache = tmp_path / "cache"
    proc = launch(tree, cache)
    assert proc.returncode == 0, proc.stderr
    # no device: every program of the grid ran on the CPU
    assert proc.stdout.split() == ["0", "11", "21", "31", "11", "21"]
    built = objects(cache)
    assert sorted(built) == ["__triton_launcher", "hip_utils"]
    assert built["__triton_launcher"].name.endswith(sysconfig.get_config_var("EXT_SUFFIX"))
    # cached: a second process imports the same objects, compiling nothing (no compiler)
    stamps = {name: p.stat().st_mtime_ns for name, p in built.items()}
    again = launch(tree, cache, CC="/nonexistent/cc")
    assert again.returncode == 0, again.stderr
    assert {n: p.stat().st_mtime_ns for n, p in objects(cache).items()} == stamps


def test_cc_is_the_compiler(tree, tmp_path):
    log = tmp_path / "cc.log"
    wrapper = tmp_path / "mycc"
    wrapper.write_text(f'#!/bin/sh\necho "$@" >> {log}\nexec {GCC} "$@"\n')
    wrapper.chmod(0o755)
    proc = launch(tree, tmp_path / "cache", CC=str(wrapper))
    assert proc.returncode == 0, proc.stderr
    lines = log.read_text().splitlines()
    assert len(lines) == 2  # hip_utils and the launcher
    for line in lines:
        assert "-O3 -shared -fPIC" in line and f"-I{INCLUDE}" in line
        assert f"-I{tree / 'triton/backends/amd/include'}" in line


def test_no_compiler_is_tritons_runtime_error(tree, tmp_path):
    empty = tmp_path / "bin"
    empty.mkdir()
    proc = launch(tree, tmp_path / "cache", PATH=str(empty))
    assert proc.returncode != 0
    assert proc.stderr.strip().splitlines()[-1] == (
        "RuntimeError: Failed to find C compiler. Please specify via CC environment variable"
        " or set triton.knobs.build.impl."
    )
    assert not objects(tmp_path / "cache")


def test_no_python_h_is_the_compilers_error(tree, tmp_path):
    # the interpreter's include directory without Python.h, as in an image without the
    # Python headers (this interpreter's own, when it has none)
    script = KERNEL
    if HEADERS:
        script = (
            "import sysconfig\n"
            "real = sysconfig.get_paths\n"
            f"empty = {str(tmp_path)!r}\n"
            "sysconfig.get_paths = lambda *a, **k: {**real(*a, **k), 'include': empty}\n" + KERNEL
        )
    proc = launch(tree, tmp_path / "cache", script)
    assert proc.returncode != 0
    assert "Python.h" in proc.stderr and "No such file or directory" in proc.stderr
    assert "subprocess.CalledProcessError" in proc.stderr
    assert not objects(tmp_path / "cache")


def test_a_device_without_code_is_refused(tree, tmp_path):
    (tmp_path / "hip.c").write_text("int hipGetDeviceCount(int *c) { *c = 1; return 0; }\n")
    hip = tmp_path / "libamdhip64.so"
    subprocess.run([GCC, "-shared", "-fPIC", "-o", hip, tmp_path / "hip.c"], check=True)
    proc = launch(tree, tmp_path / "cache", TRITON_LIBHIP_PATH=str(hip))
    assert proc.returncode != 0
    assert "no code object to launch" in proc.stderr


VLLM = Path(__file__).parents[2] / "rehearsal/sources/vllm"


def test_vllms_completion_launches_a_triton_kernel(tree, tmp_path):
    script = (
        "import sys\n"
        f"sys.path.append({str(VLLM)!r})\n"
        "from vllm.model_executor.echo import generate\n"
        "print(generate('hello rocm world', 5))\n"
    )
    import numpy  # the stand-in vllm's tensors, as vllm's own need it (requirements.in)

    site = Path(numpy.__file__).parents[1]
    proc = launch(tree, tmp_path / "cache", script, PYTHONPATH=f"{tree}{os.pathsep}{site}")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines()[-1] == "(3, 5, ' hello rocm world hello rocm')"
    assert "no HIP device (hipErrorNoDevice): kernels run on the CPU" in proc.stdout
    assert sorted(objects(tmp_path / "cache")) == ["__triton_launcher", "hip_utils"]
