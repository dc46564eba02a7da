"""torch.utils.cpp_extension of the stand-in torch: the JIT of C++ extensions, load_inline
and load, as PyTorch's does it (torch/utils/cpp_extension.py) for C++ sources.

Like PyTorch's, and failing where it fails:
- ninja must be on PATH (`ninja --version` runs), else RuntimeError "Ninja is required to
  load C++ extensions (pip install ninja to get it)"; it builds every time (ninja decides
  what is up to date);
- the build directory is TORCH_EXTENSIONS_DIR/<name>, else
  $XDG_CACHE_HOME (~/.cache)/torch_extensions/py<major><minor><abiflags>_<cpu|cuXY>/<name>
  (a ROCm torch has no torch.version.cuda: cpu);
- load_inline writes main.cpp there: `#include <torch/extension.h>`, the sources, and
  for ``functions`` the PYBIND11_MODULE that binds them;
- build.ninja compiles with $CXX, else `c++`, with -isystem torch's include directories
  and Python.h's (sysconfig's posix_prefix include) and links a shared module
  <name>.so against torch's lib/ (the stand-in's libtorch_hip), imported from there;
- a compile or link failure is RuntimeError "Error building extension '<name>': <output>".

CUDA/HIP sources (cuda_sources, .cu files) are not rehearsed: they raise.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import shlex
import shutil
import subprocess
import sys
import sysconfig
import time
import warnings

import torch

_TORCH_PATH = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TORCH_LIB_PATH = os.path.join(_TORCH_PATH, "lib")
LIB_EXT = ".so"
SHARED_FLAG = "-shared"
COMMON_CFLAGS = ["-DTORCH_API_INCLUDE_EXTENSION_H"]
# the stand-in's one native library (PyTorch's: c10, torch, torch_cpu, torch_python)
TORCH_LIBRARIES = ["torch_hip"]


def include_paths(device_type: str = "cpu") -> list[str]:
    """torch's header directories (torch/include and its C++ API's)."""
    lib_include = os.path.join(_TORCH_PATH, "include")
    return [lib_include, os.path.join(lib_include, "torch", "csrc", "api", "include")]


def library_paths(device_type: str = "cpu") -> list[str]:
    return [TORCH_LIB_PATH]


def get_cxx_compiler() -> str:
    return os.environ.get("CXX", "c++")


def is_ninja_available() -> bool:
    try:
        subprocess.check_output(["ninja", "--version"])
    except Exception:
        return False
    return True


def verify_ninja_availability() -> None:
    if not is_ninja_available():
        raise RuntimeError("Ninja is required to load C++ extensions (pip install ninja to get it)")


def get_default_build_root() -> str:
    cache = os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache")
    return os.path.realpath(os.path.join(cache, "torch_extensions"))


def _get_build_directory(name: str, verbose: bool) -> str:
    root = os.environ.get("TORCH_EXTENSIONS_DIR")
    if root is None:
        root = get_default_build_root()
        cuda = getattr(torch.version, "cuda", None)
        device = "cpu" if cuda is None else f"cu{cuda.replace('.', '')}"
        python = f"py{sys.version_info.major}{sys.version_info.minor}{getattr(sys, 'abiflags', '')}"
        root = os.path.join(root, f"{python}_{device}")
    if verbose:
        print(f"Using {root} as PyTorch extensions root...", file=sys.stderr)
    build_directory = os.path.join(root, name)
    os.makedirs(build_directory, exist_ok=True)
    return build_directory


def _maybe_write(path: str, content: str) -> None:
    """Writes ``content`` unless the file holds it already (ninja's timestamps)."""
    if os.path.exists(path):
        with open(path) as f:
            if f.read() == content:
                return
    with open(path, "w") as f:
        f.write(content)


class _Versioner:
    """name -> (hash of sources and arguments, version): a changed build in the same
    process gets <name>_v<n>, as a loaded module cannot be replaced."""

    def __init__(self) -> None:
        self.entries: dict[str, tuple[str, int]] = {}

    def bump_version_if_changed(self, name: str, sources: list[str], arguments: list) -> int:
        digest = hashlib.sha256()
        for source in sources:
            with open(source, "rb") as f:
                digest.update(f.read())
        digest.update(repr(arguments).encode())
        value = digest.hexdigest()
        if name not in self.entries:
            self.entries[name] = (value, 0)
        elif self.entries[name][0] != value:
            self.entries[name] = (value, self.entries[name][1] + 1)
        return self.entries[name][1]


JIT_EXTENSION_VERSIONER = _Versioner()


class FileBaton:
    """A lock file: one process builds, the others wait for it to go."""

    def __init__(self, lock_file_path: str, wait_seconds: float = 0.1) -> None:
        self.lock_file_path = lock_file_path
        self.wait_seconds = wait_seconds
        self.fd: int | None = None

    def try_acquire(self) -> bool:
        try:
            self.fd = os.open(self.lock_file_path, os.O_CREAT | os.O_EXCL)
            return True
        except FileExistsError:
            return False

    def wait(self) -> None:
        while os.path.exists(self.lock_file_path):
            time.sleep(self.wait_seconds)

    def release(self) -> None:
        if self.fd is not None:
            os.close(self.fd)
        os.remove(self.lock_file_path)


def _is_cuda_file(path: str) -> bool:
    return os.path.splitext(path)[1] in (".cu", ".cuh", ".hip")


def _python_include() -> str:
    return sysconfig.get_path("include", scheme="posix_prefix")


def _write_ninja_file(
    path: str,
    name: str,
    sources: list[str],
    extra_cflags: list[str],
    extra_ldflags: list[str],
    extra_include_paths: list[str],
) -> None:
    includes = [os.path.abspath(p) for p in extra_include_paths]
    system_includes = [*include_paths(), _python_include()]
    cflags = [f"-DTORCH_EXTENSION_NAME={name}", *COMMON_CFLAGS]
    cflags += [f"-I{shlex.quote(p)}" for p in includes]
    cflags += [f"-isystem {shlex.quote(p)}" for p in system_includes]
    cflags += ["-fPIC", "-std=c++17", *extra_cflags]
    ldflags = [SHARED_FLAG, *(f"-L{shlex.quote(p)}" for p in library_paths())]
    ldflags += [*(f"-l{lib}" for lib in TORCH_LIBRARIES), *extra_ldflags]
    objects = []
    builds = []
    for source in sources:
        source = os.path.abspath(source)
        target = os.path.splitext(os.path.basename(source))[0] + ".o"
        objects.append(target)
        builds.append(f"build {target}: compile {source.replace(' ', '$ ')}")
    library = f"{name}{LIB_EXT}"
    lines = [
        "ninja_required_version = 1.3",
        f"cxx = {get_cxx_compiler()}",
        "",
        f"cflags = {' '.join(cflags)}",
        "post_cflags =",
        f"ldflags = {' '.join(ldflags)}",
        "",
        "rule compile",
        "  command = $cxx -MMD -MF $out.d $cflags -c $in -o $out $post_cflags",
        "  depfile = $out.d",
        "  deps = gcc",
        "",
        "rule link",
        "  command = $cxx $in $ldflags -o $out",
        "",
        *builds,
        "",
        f"build {library}: link {' '.join(objects)}",
        "",
        f"default {library}",
        "",
    ]
    _maybe_write(path, "\n".join(lines))


def _run_ninja_build(build_directory: str, verbose: bool, error_prefix: str) -> None:
    command = ["ninja", "-v"]
    jobs = os.environ.get("MAX_JOBS")
    if jobs:
        command += ["-j", jobs]
    try:
        sys.stdout.flush()
        sys.stderr.flush()
        subprocess.run(
            command,
            stdout=None if verbose else subprocess.PIPE,
            stderr=subprocess.STDOUT,
            cwd=build_directory,
            check=True,
        )
    except subprocess.CalledProcessError as e:
        message = error_prefix
        if e.output:
            message += f": {e.output.decode(errors='replace')}"
        raise RuntimeError(message) from e


def _check_compiler(compiler: str) -> None:
    if shutil.which(compiler) is None:
        warnings.warn(
            f"The compiler ({compiler}) cannot be found on PATH; set CXX to a C++ compiler",
            stacklevel=3,
        )


def _import_module_from_library(name: str, path: str, is_python_module: bool):
    filepath = os.path.join(path, f"{name}{LIB_EXT}")
    if not is_python_module:
        import ctypes

        ctypes.CDLL(filepath, mode=ctypes.RTLD_GLOBAL)
        return filepath
    spec = importlib.util.spec_from_file_location(name, filepath)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _jit_compile(
    name: str,
    sources: list[str],
    extra_cflags: list[str] | None,
    extra_ldflags: list[str] | None,
    extra_include_paths: list[str] | None,
    build_directory: str,
    verbose: bool,
    is_python_module: bool,
):
    if any(_is_cuda_file(s) for s in sources):
        raise RuntimeError("stand-in torch: CUDA/HIP sources in cpp_extension are not rehearsed")
    extra_cflags, extra_ldflags = list(extra_cflags or []), list(extra_ldflags or [])
    extra_include_paths = list(extra_include_paths or [])
    arguments = [extra_cflags, extra_ldflags, extra_include_paths]
    version = JIT_EXTENSION_VERSIONER.bump_version_if_changed(name, sources, arguments)
    if version > 0:
        name = f"{name}_v{version}"
    baton = FileBaton(os.path.join(build_directory, "lock"))
    if baton.try_acquire():
        try:
            verify_ninja_availability()
            _check_compiler(get_cxx_compiler())
            if verbose:
                print(
                    f"Emitting ninja build file {build_directory}/build.ninja...", file=sys.stderr
                )
            _write_ninja_file(
                os.path.join(build_directory, "build.ninja"),
                name,
                sources,
                extra_cflags,
                extra_ldflags,
                extra_include_paths,
            )
            if verbose:
                print(f"Building extension module {name}...", file=sys.stderr)
            _run_ninja_build(build_directory, verbose, f"Error building extension '{name}'")
        finally:
            baton.release()
    else:
        baton.wait()
    if verbose:
        print(f"Loading extension module {name}...", file=sys.stderr)
    return _import_module_from_library(name, build_directory, is_python_module)


def load(
    name: str,
    sources: str | list[str],
    extra_cflags: list[str] | None = None,
    extra_cuda_cflags: list[str] | None = None,
    extra_ldflags: list[str] | None = None,
    extra_include_paths: list[str] | None = None,
    build_directory: str | None = None,
    verbose: bool = False,
    with_cuda: bool | None = None,
    is_python_module: bool = True,
    is_standalone: bool = False,
    keep_intermediates: bool = True,
):
    """Builds the C++ ``sources`` into the extension ``name`` with ninja and imports it."""
    if is_standalone:
        raise RuntimeError("stand-in torch: standalone executables are not rehearsed")
    if with_cuda:
        raise RuntimeError("stand-in torch: CUDA/HIP extensions are not rehearsed")
    sources = [sources] if isinstance(sources, str) else list(sources)
    return _jit_compile(
        name,
        [os.path.abspath(s) for s in sources],
        extra_cflags,
        extra_ldflags,
        extra_include_paths,
        build_directory or _get_build_directory(name, verbose),
        verbose,
        is_python_module,
    )


def load_inline(
    name: str,
    cpp_sources: str | list[str],
    cuda_sources: str | list[str] | None = None,
    sycl_sources: str | list[str] | None = None,
    functions: str | list[str] | dict[str, str] | None = None,
    extra_cflags: list[str] | None = None,
    extra_cuda_cflags: list[str] | None = None,
    extra_sycl_cflags: list[str] | None = None,
    extra_ldflags: list[str] | None = None,
    extra_include_paths: list[str] | None = None,
    build_directory: str | None = None,
    verbose: bool = False,
    with_cuda: bool | None = None,
    with_sycl: bool | None = None,
    is_python_module: bool = True,
    with_pytorch_error_handling: bool = True,
    keep_intermediates: bool = True,
    use_pch: bool = False,
    no_implicit_headers: bool = False,
):
    """Builds the extension ``name`` from C++ source strings, binding ``functions`` (a
    name, a list of names, or {name: docstring}) in its module, and imports it."""
    if cuda_sources or sycl_sources or with_cuda or with_sycl:
        raise RuntimeError("stand-in torch: CUDA/HIP/SYCL sources in load_inline are not rehearsed")
    build_directory = build_directory or _get_build_directory(name, verbose)
    if isinstance(cpp_sources, str):
        cpp_sources = [cpp_sources]
    cpp_sources = list(cpp_sources)
    if not no_implicit_headers:
        cpp_sources.insert(0, "#include <torch/extension.h>")
    if functions is not None:
        module_def = ["PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {"]
        if isinstance(functions, str):
            functions = [functions]
        if isinstance(functions, list):
            functions = {f: f for f in functions}
        elif not isinstance(functions, dict):
            raise ValueError(
                f"Expected 'functions' to be a list or dict, but was {type(functions)}"
            )
        for function_name, docstring in functions.items():
            bound = (
                f"torch::wrap_pybind_function({function_name})"
                if with_pytorch_error_handling
                else function_name
            )
            module_def.append(f'm.def("{function_name}", {bound}, "{docstring}");')
        module_def.append("}")
        cpp_sources += module_def
    cpp_source_path = os.path.join(build_directory, "main.cpp")
    _maybe_write(cpp_source_path, "\n".join(cpp_sources))
    return _jit_compile(
        name,
        [cpp_source_path],
        extra_cflags,
        extra_ldflags,
        extra_include_paths,
        build_directory,
        verbose,
        is_python_module,
    )
