"""The stand-in torch's torch.utils.cpp_extension builds C++ extensions as PyTorch's JIT
does: ninja required on PATH, a build.ninja under TORCH_EXTENSIONS_DIR (else the user's
~/.cache/torch_extensions/<py>_<device>), $CXX else c++ with torch's and Python's headers,
a shared module linked against torch's lib/ and imported; and the rehearsal check's
load_inline script runs on it. Ahead of time, as PyTorch's BuildExtension does: each
source compiled on its own with -c through a build.ninja ($CXX for C++, ROCM_HOME's hipcc
for HIP with an --offload-arch= per arch of PYTORCH_ROCM_ARCH), the objects linked by
setuptools' linker (LDSHARED) against the libraries the stand-in torch ships."""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

from tools.rehearsal import check

STANDIN = Path(__file__).parents[2] / "rehearsal/sources/pytorch/torch"
CXX = shutil.which("c++") or shutil.which("g++")
NINJA = shutil.which("ninja")
INCLUDE = sysconfig.get_path("include", scheme="posix_prefix")
HEADERS = (Path(INCLUDE) / "Python.h").is_file()
# tools/bootstrap.sh puts all three in the tree the tests run in: none is optional
assert CXX and NINJA and HEADERS, f"need c++, ninja and {INCLUDE}/Python.h: run tools/bootstrap.sh"
# what the stand-in torch's CMake installs into torch/lib
LIBS = ("c10", "c10_hip", "torch_cpu", "torch_hip")
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
    version module (a ROCm torch: no torch.version.cuda) and the libraries of its lib/."""
    root = tmp_path_factory.mktemp("site")
    torch = root / "torch"
    (torch / "lib").mkdir(parents=True)
    shutil.copytree(STANDIN / "include", torch / "include")
    shutil.copytree(STANDIN / "utils", torch / "utils")
    (torch / "__init__.py").write_text("from torch import version\n")
    (torch / "version.py").write_text('__version__ = "4.5.6"\nhip = "9.8.7"\ncuda = None\n')
    (root / "hip.c").write_text("int torch_hip_probe(void) { return 1; }\n")
    for lib in LIBS:
        subprocess.run(
            [CXX, "-shared", "-fPIC", "-o", torch / f"lib/lib{lib}.so", "-x", "c", root / "hip.c"],
            check=True,
        )
    return root


UNSET = (
    "CXX",
    "CC",
    "LDSHARED",
    "TORCH_EXTENSIONS_DIR",
    "XDG_CACHE_HOME",
    "MAX_JOBS",
    "ROCM_HOME",
    "ROCM_PATH",
    "PYTORCH_ROCM_ARCH",
    "PYTORCH_NVCC",
)


# setuptools' site-packages directory (requirements.lock), found without importing it here
SETUPTOOLS = Path(importlib.util.find_spec("setuptools").origin).parents[1]


@pytest.fixture(scope="module")
def setuptools_path(tmp_path_factory) -> Path:
    """setuptools for the builds' subprocesses: a copy of the runfiles' site-packages with
    the one file runfiles cannot hold. Bazel leaves out paths with a space, and setuptools'
    vendored jaraco.text reads its "Lorem ipsum.txt" when imported; without it the import
    fails inside setuptools' distutils shim as "No module named 'distutils'"."""
    dest = tmp_path_factory.mktemp("setuptools") / "site-packages"
    shutil.copytree(SETUPTOOLS, dest, symlinks=False)
    for text in dest.glob("setuptools/_vendor/jaraco/text"):
        (text / "Lorem ipsum.txt").touch()
    return dest


def run(tree: Path, home: Path, script: str = ADD, **env: str):
    environ = {k: v for k, v in os.environ.items() if k not in UNSET}
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
    assert f"ldflags = -shared -L{tree}/torch/lib -lc10 -ltorch_cpu\n" in ninja
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


# An extension of two C++ sources: the module (on the stand-in torch/extension.h, named by
# BuildExtension's TORCH_EXTENSION_NAME) and the function it binds.
MODULE_CPP = """#include <torch/extension.h>
int64_t add(int64_t a, int64_t b);
PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) { m.def("add", &add, "a + b"); }
"""
ADD_CPP = "#include <cstdint>\nint64_t add(int64_t a, int64_t b) { return a + b + OFFSET; }\n"
# A HIP source (the fake hipcc compiles it as C++), its macro from define_macros
KERNEL_HIP = "#include <cstdint>\nint64_t add(int64_t a, int64_t b) { return a + b + OFFSET; }\n"
SETUP = """from setuptools import setup
from torch.utils.cpp_extension import BuildExtension, {kind}
setup(
    name="pkg",
    ext_modules=[
        {kind}(
            "pkg._ext",
            {sources!r},
            define_macros=[("OFFSET", "100")],
            extra_compile_args={{"cxx": ["-DCXX_ARG"], "nvcc": ["-DNVCC_ARG"]}},
        )
    ],
    cmdclass={{"build_ext": BuildExtension.with_options(no_python_abi_suffix=True)}},
)
"""


def source_of(argv: list[str]) -> str:
    """The source a compile command compiles: after its last -c (setuptools' own -c and
    the ninja rule's, as PyTorch's writes them)."""
    return argv[len(argv) - 1 - argv[::-1].index("-c") + 1]


def logging_wrapper(path: Path, log: Path, *command: str) -> Path:
    """A compiler that appends its arguments to ``log`` and runs ``command`` with them."""
    path.write_text(f'#!/bin/sh\necho "$@" >> {log}\nexec {" ".join(command)} "$@"\n')
    path.chmod(0o755)
    return path


def project(tmp_path: Path, kind: str, sources: dict[str, str]) -> Path:
    root = tmp_path / "project"
    (root / "pkg").mkdir(parents=True)
    (root / "pkg/__init__.py").write_text("")
    for name, text in sources.items():
        (root / name).write_text(text)
    (root / "setup.py").write_text(SETUP.format(kind=kind, sources=list(sources)))
    return root


def build_ext(tree: Path, root: Path, home: Path, setuptools: Path, **env: str):
    """``python setup.py build_ext --inplace`` in ``root``, then pkg._ext imported and add(2, 3)
    called in a fresh interpreter (when the build succeeded)."""
    environ = {k: v for k, v in os.environ.items() if k not in UNSET}
    # setuptools from the test's own dependencies (requirements.lock): the tree's Python
    # has none, an image's build gets it from PyPI
    environ.update(PYTHONPATH=f"{tree}:{setuptools}", HOME=str(home), **env)
    proc = subprocess.run(
        [sys.executable, "setup.py", "build_ext", "--inplace"],
        cwd=root,
        capture_output=True,
        text=True,
        env=environ,
        check=False,
    )
    if proc.returncode != 0:
        return proc, None
    probe = subprocess.run(
        [sys.executable, "-c", "import pkg._ext as m; print(m.add(2, 3), m.__file__)"],
        cwd=root,
        capture_output=True,
        text=True,
        # the project on the path itself: Bazel's PYTHONSAFEPATH keeps the cwd off it
        env={**environ, "PYTHONPATH": f"{root}:{environ['PYTHONPATH']}"},
        check=False,
    )
    return proc, probe


@pytest.fixture
def compilers(tmp_path):
    """$CXX and LDSHARED's program as logging wrappers of the host's C++ compiler; LDSHARED
    carries a -L of its own, which only setuptools' linker passes."""
    logs = tmp_path / "logs"
    logs.mkdir()
    marker = tmp_path / "ldshared-marker"
    marker.mkdir()
    cxx = logging_wrapper(tmp_path / "g++", logs / "cxx.log", CXX)
    ld = logging_wrapper(tmp_path / "ld-wrapper", logs / "ld.log", CXX)
    # setuptools >= 72 links C++ with LDCXXSHARED (the image Python's sysconfig has it), older
    # ones with $CXX in front of LDSHARED's flags: either way $CXX, LDSHARED's flags
    ldshared = {"LDSHARED": f"{ld} -shared -L{marker}", "LDCXXSHARED": f"{cxx} -shared -L{marker}"}
    return {"CXX": str(cxx), **ldshared}, logs, marker


def test_build_extension_compiles_each_source_with_cxx_and_setuptools_links(
    tree, tmp_path, compilers, setuptools_path
):
    env, logs, marker = compilers
    root = project(tmp_path, "CppExtension", {"module.cpp": MODULE_CPP, "add.cpp": ADD_CPP})
    proc, probe = build_ext(tree, root, tmp_path, setuptools_path, **env)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert probe.returncode == 0, probe.stderr
    # no_python_abi_suffix: pkg/_ext.so
    assert probe.stdout.split() == ["105", str(root / "pkg/_ext.so")]

    (ninja_file,) = root.glob("build/temp*/build.ninja")
    ninja = ninja_file.read_text()
    assert f"cxx = {env['CXX']}\n" in ninja
    assert (
        "rule compile\n  command = $cxx -MMD -MF $out.d $cflags -c $in -o $out $post_cflags"
        in ninja
    )
    assert "rule link" not in ninja and "cuda_compile" not in ninja
    builds = sorted(line for line in ninja.splitlines() if line.startswith("build "))
    assert len(builds) == 2
    assert builds[0].endswith(f"add.o: compile {root}/add.cpp")
    assert builds[1].endswith(f"module.o: compile {root}/module.cpp")
    post = next(line for line in ninja.splitlines() if line.startswith("post_cflags = "))
    for flag in ("-DCXX_ARG", "-DTORCH_API_INCLUDE_EXTENSION_H", "-DTORCH_EXTENSION_NAME=_ext"):
        assert flag in post.split()
    cflags = next(line for line in ninja.splitlines() if line.startswith("cflags = "))
    assert f"-I{tree}/torch/include" in cflags.split() and "-DOFFSET=100" in cflags.split()

    # each source compiled on its own with -c by $CXX; one link, by setuptools' linker
    # (LDSHARED's flags; for C++ setuptools puts $CXX in front), of both objects
    lines = (logs / "cxx.log").read_text().splitlines()
    compiles = [line.split() for line in lines if " -c " in f" {line} "]
    links = [line.split() for line in lines if " -c " not in f" {line} "]
    assert sorted(Path(source_of(c)).name for c in compiles) == ["add.cpp", "module.cpp"]
    assert all(sum(a.endswith(".cpp") for a in c) == 1 and "-fPIC" in c for c in compiles)
    (link,) = links
    assert "-shared" in link and f"-L{marker}" in link, link
    assert sorted(Path(a).name for a in link if a.endswith(".o")) == ["add.o", "module.o"]
    assert not any(a.endswith(".cpp") for a in link)
    assert {f"-L{tree}/torch/lib", "-lc10", "-ltorch_cpu"} <= set(link)
    assert link[link.index("-o") + 1].endswith("/pkg/_ext.so")


def test_build_extension_without_ninja_warns_and_setuptools_compiles_each_source(
    tree, tmp_path, compilers, setuptools_path
):
    env, logs, _ = compilers
    cc = logging_wrapper(tmp_path / "gcc", logs / "cc.log", CXX)
    root = project(tmp_path, "CppExtension", {"module.cpp": MODULE_CPP, "add.cpp": ADD_CPP})
    setup = root / "setup.py"
    with_ninja = setup.read_text()
    setup.write_text(with_ninja.replace("no_python_abi_suffix=True", "use_ninja=False"))
    proc, probe = build_ext(tree, root, tmp_path, setuptools_path, CC=str(cc), **env)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert probe.returncode == 0 and probe.stdout.split()[0] == "105", probe.stderr
    assert not list(root.glob("build/temp*/build.ninja"))
    # setuptools >= 72 compiles C++ with $CXX (compiler_so_cxx), older ones with $CC
    logged = [f.read_text() for f in (logs / "cc.log", logs / "cxx.log") if f.exists()]
    compiles = [line for text in logged for line in text.splitlines() if " -c " in line]
    assert len(compiles) == 2 and all("-DTORCH_EXTENSION_NAME=_ext" in c for c in compiles)

    # a ninja that does not run: BuildExtension falls back, as PyTorch's does
    bin_ = tmp_path / "bin"
    bin_.mkdir()
    (bin_ / "ninja").write_text("#!/bin/sh\nexit 1\n")
    (bin_ / "ninja").chmod(0o755)
    no_ninja = dict(env, CC=str(cc), PATH=f"{bin_}:{os.environ['PATH']}")
    shutil.rmtree(root / "build")
    setup.write_text(with_ninja)
    proc, probe = build_ext(tree, root, tmp_path, setuptools_path, **no_ninja)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "Falling back to using the slow distutils backend" in proc.stdout + proc.stderr
    assert not list(root.glob("build/temp*/build.ninja"))
    assert probe.returncode == 0 and probe.stdout.split()[0] == "105", probe.stderr


@pytest.fixture
def rocm(tmp_path):
    """A fake ROCM_HOME: bin/hipcc logs its arguments and compiles the source as C++ with
    the host's compiler (without the GPU flags); lib/libamdhip64.so."""
    home = tmp_path / "rocm"
    (home / "bin").mkdir(parents=True)
    (home / "lib").mkdir()
    (home / "include").mkdir()
    log = tmp_path / "logs" / "hipcc.log"
    hipcc = home / "bin/hipcc"
    hipcc.write_text(
        f"#!{sys.executable}\n"
        "import os, sys\n"
        f"with open({str(log)!r}, 'a') as f:\n"
        "    f.write(' '.join(sys.argv[1:]) + '\\n')\n"
        "args = [a for a in sys.argv[1:] if not a.startswith('--offload-arch=')"
        " and a != '-fno-gpu-rdc']\n"
        f"os.execv({CXX!r}, [{CXX!r}, '-x', 'c++', *args])\n"
    )
    hipcc.chmod(0o755)
    source = tmp_path / "amdhip.c"
    source.write_text("int amdhip_probe(void) { return 1; }\n")
    subprocess.run(
        [CXX, "-shared", "-fPIC", "-o", home / "lib/libamdhip64.so", "-x", "c", source],
        check=True,
    )
    return home, log


def test_cuda_extension_compiles_hip_with_hipcc_for_each_arch(
    tree, tmp_path, compilers, rocm, setuptools_path
):
    env, logs, _ = compilers
    home, hipcc_log = rocm
    root = project(tmp_path, "CUDAExtension", {"module.cpp": MODULE_CPP, "add.hip": KERNEL_HIP})
    proc, probe = build_ext(
        tree,
        root,
        tmp_path,
        setuptools_path,
        ROCM_HOME=str(home),
        PYTORCH_ROCM_ARCH="gfx942;gfx90a gfx1100",
        **env,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert probe.returncode == 0, probe.stderr
    assert probe.stdout.split()[0] == "105"

    (ninja_file,) = root.glob("build/temp*/build.ninja")
    ninja = ninja_file.read_text()
    assert f"nvcc = {home}/bin/hipcc\n" in ninja
    assert (
        "rule cuda_compile\n  command = $nvcc $cuda_cflags -c $in -o $out $cuda_post_cflags"
        in ninja
    )
    assert any(line.endswith(f"add.o: cuda_compile {root}/add.hip") for line in ninja.splitlines())
    assert any(line.endswith(f"module.o: compile {root}/module.cpp") for line in ninja.splitlines())

    (hip,) = (line.split() for line in hipcc_log.read_text().splitlines())
    assert source_of(hip) == str(root / "add.hip")
    arch_flags = [a for a in hip if a.startswith("--offload-arch=")]
    assert arch_flags == [
        "--offload-arch=gfx942",
        "--offload-arch=gfx90a",
        "--offload-arch=gfx1100",
    ]
    for flag in ("-fPIC", "-D__HIP_PLATFORM_AMD__=1", "-DUSE_ROCM=1", "-DHIPBLAS_V2", "-DNVCC_ARG"):
        assert flag in hip
    assert "-DCXX_ARG" not in hip and "-DOFFSET=100" in hip

    lines = (logs / "cxx.log").read_text().splitlines()
    (compile_,) = (line.split() for line in lines if " -c " in f" {line} ")
    assert source_of(compile_) == str(root / "module.cpp")
    assert "-D__HIP_PLATFORM_AMD__=1" in compile_ and "-DCXX_ARG" in compile_
    assert "-DNVCC_ARG" not in compile_ and f"-I{home}/include" in compile_
    (link,) = (line.split() for line in lines if " -c " not in f" {line} ")
    assert sorted(Path(a).name for a in link if a.endswith(".o")) == ["add.o", "module.o"]
    libs = [a for a in link if a.startswith("-l")]
    assert libs == ["-lc10", "-ltorch_cpu", "-lamdhip64", "-lc10_hip", "-ltorch_hip"]
    assert f"-L{home}/lib" in link


def test_an_empty_pytorch_rocm_arch_with_a_hip_source_fails_naming_it(
    tree, tmp_path, compilers, rocm, setuptools_path
):
    env, _, _ = compilers
    home, hipcc_log = rocm
    root = project(tmp_path, "CUDAExtension", {"module.cpp": MODULE_CPP, "add.hip": KERNEL_HIP})
    proc, _ = build_ext(
        tree, root, tmp_path, setuptools_path, ROCM_HOME=str(home), PYTORCH_ROCM_ARCH=" ", **env
    )
    assert proc.returncode != 0
    last = proc.stderr.strip().splitlines()[-1]
    assert last.startswith("RuntimeError: PYTORCH_ROCM_ARCH is empty"), proc.stderr
    assert not hipcc_log.exists()
