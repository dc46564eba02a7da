"""The stand-in torch's torch.utils.cpp_extension builds C++ extensions as PyTorch's JIT
does: ninja required on PATH, a build.ninja under TORCH_EXTENSIONS_DIR (else the user's
~/.cache/torch_extensions/<py>_<device>), $CXX else c++ with torch's and Python's headers,
a shared module linked against torch's lib/ and imported; and the rehearsal check's
load_inline script runs on it."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

from tools.rehearsal import check

STANDIN = Path(__file__).parents[2] / "images/rehearsal/sources/pytorch/torch"
CXX = shutil.which("c++") or shutil.which("g++")
NINJA = shutil.which("ninja")
INCLUDE = sysconfig.get_path("include", scheme="posix_prefix")
HEADERS = (Path(INCLUDE) / "Python.h").is_file()
# tools/bootstrap.sh puts all three in the tree the tests run in: none is optional
assert CXX and NINJA and HEADERS, f"need c++, ninja and {INCLUDE}/Python.h: run tools/bootstrap.sh"
PY = f"py{sys.version_info.major}{sys.version_info.minor}{getattr(sys, 'abiflags', '')}"

ADD = """
import torch.utils.cpp_extension as ext
m = ext.load_inline(
    "probe",
    "int64_t add(int64_t a, int64_t b) { return a + b; }\\n"
    "std::string greet(const std::string &s, double x, bool b) {"
    " return s + std::to_string(int(x)) + (b ? \\"!\\" : \\"?\\"); }",
    functions={"add": "a + b", "greet": "a greeting"},
)
print(m.add(2, 3), m.greet("rocm", 7.0, True), m.add.__doc__, m.__file__)
"""


@pytest.fixture(scope="module")
def tree(tmp_path_factory) -> Path:
    """An installed stand-in torch as cpp_extension sees it: its headers and utils, the
    version module (a ROCm torch: no torch.version.cuda) and a lib/libtorch_hip.so."""
    root = tmp_path_factory.mktemp("site")
    torch = root / "torch"
    (torch / "lib").mkdir(parents=True)
    shutil.copytree(STANDIN / "include", torch / "include")
    shutil.copytree(STANDIN / "utils", torch / "utils")
    (torch / "__init__.py").write_text("from torch import version\n")
    (torch / "version.py").write_text('__version__ = "2.15.0"\nhip = "10.1.0"\ncuda = None\n')
    (root / "hip.c").write_text("int torch_hip_probe(void) { return 1; }\n")
    subprocess.run(
        [CXX, "-shared", "-fPIC", "-o", torch / "lib/libtorch_hip.so", "-x", "c", root / "hip.c"],
        check=True,
    )
    return root


def run(tree: Path, home: Path, script: str = ADD, **env: str):
    environ = {
        k: v
        for k, v in os.environ.items()
        if k not in ("CXX", "TORCH_EXTENSIONS_DIR", "XDG_CACHE_HOME", "MAX_JOBS")
    }
    environ.update(PYTHONPATH=str(tree), HOME=str(home))
    environ.update(env)
    return subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, env=environ, check=False
    )


def test_load_inline_builds_with_ninja_under_the_users_cache_and_imports(tree, tmp_path):
    proc = run(tree, tmp_path)
    assert proc.returncode == 0, proc.stderr
    build = tmp_path / f".cache/torch_extensions/{PY}_cpu/probe"
    assert proc.stdout.split() == ["5", "rocm7!", "a", "+", "b", str(build / "probe.so")]
    main = (build / "main.cpp").read_text()
    assert main.startswith("#include <torch/extension.h>\n")
    assert main.endswith(
        "PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {\n"
        'm.def("add", torch::wrap_pybind_function(add), "a + b");\n'
        'm.def("greet", torch::wrap_pybind_function(greet), "a greeting");\n}'
    )
    ninja = (build / "build.ninja").read_text()
    assert "cxx = c++\n" in ninja
    assert f"-isystem {tree}/torch/include " in ninja and f"-isystem {INCLUDE} " in ninja
    assert "-DTORCH_EXTENSION_NAME=probe " in ninja and "-std=c++17" in ninja
    assert f"ldflags = -shared -L{tree}/torch/lib -ltorch_hip\n" in ninja
    assert "build probe.so: link main.o" in ninja
    # a second process runs ninja again, which has nothing to do
    stamp = (build / "probe.so").stat().st_mtime_ns
    again = run(tree, tmp_path)
    assert again.returncode == 0, again.stderr
    assert (build / "probe.so").stat().st_mtime_ns == stamp


def test_torch_extensions_dir_and_cxx(tree, tmp_path):
    log = tmp_path / "cxx.log"
    wrapper = tmp_path / "mycxx"
    wrapper.write_text(f'#!/bin/sh\necho "$@" >> {log}\nexec {CXX} "$@"\n')
    wrapper.chmod(0o755)
    proc = run(tree, tmp_path, TORCH_EXTENSIONS_DIR=str(tmp_path / "ext"), CXX=str(wrapper))
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split()[-1] == str(tmp_path / "ext/probe/probe.so")
    assert not (tmp_path / ".cache").exists()
    compile_, link = log.read_text().splitlines()
    assert " -c " in compile_ and f"-isystem {INCLUDE}" in compile_
    assert link.startswith("main.o -shared ") and link.endswith("-o probe.so")


def test_no_ninja_is_torchs_runtime_error(tree, tmp_path):
    empty = tmp_path / "bin"
    empty.mkdir()
    proc = run(tree, tmp_path, PATH=str(empty))
    assert proc.returncode != 0
    assert proc.stderr.strip().splitlines()[-1] == (
        "RuntimeError: Ninja is required to load C++ extensions (pip install ninja to get it)"
    )
    assert not list(tmp_path.glob(".cache/torch_extensions/*/probe/*.so"))


def test_ninja_is_required_on_every_load(tree, tmp_path):
    assert run(tree, tmp_path).returncode == 0
    bin_ = tmp_path / "bin"
    bin_.mkdir()
    (bin_ / "c++").symlink_to(CXX)
    proc = run(tree, tmp_path, PATH=str(bin_))
    assert proc.returncode != 0 and "Ninja is required" in proc.stderr


def test_no_python_h_is_the_build_error(tree, tmp_path):
    script = (
        "import sysconfig\n"
        "real = sysconfig.get_path\n"
        f"empty = {str(tmp_path)!r}\n"
        "sysconfig.get_path = lambda n, *a, **k: empty if n == 'include' else real(n, *a, **k)\n"
        + ADD
    )
    proc = run(tree, tmp_path, script)
    assert proc.returncode != 0
    last = proc.stderr.strip().splitlines()
    assert any(line.startswith("RuntimeError: Error building extension 'probe'") for line in last)
    assert "Python.h: No such file or directory" in proc.stderr


def test_a_compile_error_names_the_extension(tree, tmp_path):
    script = (
        "import torch.utils.cpp_extension as ext\n"
        "ext.load_inline('broken', 'int f() { return missing; }', functions='f')\n"
    )
    proc = run(tree, tmp_path, script)
    assert proc.returncode != 0
    assert "RuntimeError: Error building extension 'broken'" in proc.stderr
    assert "missing" in proc.stderr


def test_the_rehearsal_checks_script(tree, tmp_path):
    proc = run(tree, tmp_path, check.LOAD_INLINE)
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout.split()
    assert out[:2] == ["loaded", "5"] and len(out) == 6
    assert out[4] == str(tmp_path / f".cache/torch_extensions/{PY}_cpu/rehearsal_probe")
