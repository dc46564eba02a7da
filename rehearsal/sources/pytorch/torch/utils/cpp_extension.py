"""torch.utils.cpp_extension of the stand-in torch, as PyTorch's (torch/utils/cpp_extension.py):
the ahead-of-time build of setup.py extensions (CppExtension, CUDAExtension, BuildExtension)
and the JIT of C++ extensions (load_inline, load).

Ahead of time, like PyTorch's, and failing where it fails:
- CppExtension and CUDAExtension are setuptools.Extension with torch's include and library
  directories, language c++ and torch's libraries. PyTorch's link c10, torch, torch_cpu,
  torch_python (and amdhip64, c10_hip, torch_hip for CUDAExtension on ROCm); the stand-in
  torch ships lib/libc10.so, libc10_hip.so, libtorch_cpu.so and libtorch_hip.so (no
  libtorch.so, no libtorch_python.so: its torch._C is a C extension), so they link the ones
  it ships: c10, torch_cpu, and amdhip64 (ROCM_HOME/lib), c10_hip, torch_hip. A ROCm torch's
  CUDAExtension hipifies its sources first; the stand-in's users' sources are HIP already
  (no torch.utils.hipify);
- BuildExtension (with_options, no_python_abi_suffix, use_ninja) compiles each source on its
  own with -c into an object: with ninja on PATH through a build.ninja in the build temp
  directory (_write_ninja_file_and_compile_objects), .cpp with rule compile ($CXX, else
  c++: get_cxx_compiler()) and, on a ROCm torch (ROCM_HOME found and torch.version.hip),
  .hip/.cu with rule cuda_compile (ROCM_HOME/bin/hipcc, --offload-arch= for each arch of
  PYTORCH_ROCM_ARCH); a failure is RuntimeError "Error compiling objects for extension".
  Without ninja (or use_ninja=False) it warns and lets setuptools compile each source,
  hipcc for the HIP ones. Then setuptools links the objects itself (link_shared_object: its
  linker_so, from LDSHARED/CC, with $CXX in front for c++), as PyTorch's leaves it to do.
  The stand-in is stricter in one place: an empty PYTORCH_ROCM_ARCH with a HIP source fails
  (PyTorch's falls back to the archs torch was built for);

the JIT (load_inline, load), like PyTorch's:
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
  <name>.so against torch's lib/ (-lc10 -ltorch_cpu), imported from there;
- a compile or link failure is RuntimeError "Error building extension '<name>': <output>".

CUDA/HIP sources of the JIT (cuda_sources, .cu files) are not rehearsed: they raise.
"""

from __future__ import annotations

import copy
import hashlib
import importlib.util
import logging
import os
import shlex
import shutil
import subprocess
import sys
import sysconfig
import time
import warnings

import torch

logger = logging.getLogger(__name__)

_TORCH_PATH = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TORCH_LIB_PATH = os.path.join(_TORCH_PATH, "lib")
LIB_EXT = ".so"
SHARED_FLAG = "-shared"
COMMON_CFLAGS = ["-DTORCH_API_INCLUDE_EXTENSION_H"]
# PyTorch's: -D__HIP_PLATFORM_AMD__=1 -DUSE_ROCM=1 -DHIPBLAS_V2 -fPIC for every source of a
# ROCm build, and for hipcc's these too
COMMON_HIP_FLAGS = ["-D__HIP_PLATFORM_AMD__=1", "-DUSE_ROCM=1", "-DHIPBLAS_V2", "-fPIC"]
COMMON_HIPCC_FLAGS = [
    "-DCUDA_HAS_FP16=1",
    "-D__HIP_NO_HALF_OPERATORS__=1",
    "-D__HIP_NO_HALF_CONVERSIONS__=1",
    "-DHIP_ENABLE_WARP_SYNC_BUILTINS=1",
]
# the libraries of the stand-in's lib/ an extension links (PyTorch's adds torch and
# torch_python, which the stand-in does not ship)
TORCH_LIBRARIES = ["c10", "torch_cpu"]
TORCH_HIP_LIBRARIES = ["amdhip64", "c10_hip", "torch_hip"]


def _find_rocm_home() -> str | None:
    """ROCM_HOME, else ROCM_PATH, else the tree of hipcc on PATH, else /opt/rocm if it is
    there (PyTorch's _find_rocm_home)."""
    rocm_home = os.environ.get("ROCM_HOME") or os.environ.get("ROCM_PATH")
    if rocm_home is None:
        hipcc = shutil.which("hipcc")
        if hipcc is not None:
            rocm_home = os.path.dirname(os.path.dirname(os.path.realpath(hipcc)))
            if os.path.basename(rocm_home) == "hip":
                rocm_home = os.path.dirname(rocm_home)
        elif os.path.exists("/opt/rocm"):
            rocm_home = "/opt/rocm"
    return rocm_home


ROCM_HOME = _find_rocm_home()
HIP_HOME = os.path.join(ROCM_HOME, "hip") if ROCM_HOME else None
IS_HIP_EXTENSION = ROCM_HOME is not None and getattr(torch.version, "hip", None) is not None


def _join_rocm_home(*paths: str) -> str:
    if ROCM_HOME is None:
        raise OSError(
            "ROCM_HOME environment variable is not set. Please set it to your ROCm install root."
        )
    return os.path.join(ROCM_HOME, *paths)


def include_paths(device_type: str = "cpu") -> list[str]:
    """torch's header directories (torch/include and its C++ API's), and ROCm's for
    device_type cuda on a ROCm torch."""
    lib_include = os.path.join(_TORCH_PATH, "include")
    paths = [lib_include, os.path.join(lib_include, "torch", "csrc", "api", "include")]
    if device_type == "cuda" and IS_HIP_EXTENSION:
        paths.append(os.path.join(lib_include, "THH"))
        paths.append(_join_rocm_home("include"))
    return paths


def library_paths(device_type: str = "cpu") -> list[str]:
    """torch's lib/, and ROCm's lib/ for device_type cuda on a ROCm torch."""
    paths = [TORCH_LIB_PATH]
    if device_type == "cuda" and IS_HIP_EXTENSION:
        paths.append(_join_rocm_home("lib"))
        if HIP_HOME is not None:
            paths.append(os.path.join(HIP_HOME, "lib"))
    return paths


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
    """.cu and .cuh, and .hip on a ROCm torch: hipcc's (nvcc's) sources."""
    valid = [".cu", ".cuh"]
    if IS_HIP_EXTENSION:
        valid.append(".hip")
    return os.path.splitext(path)[1] in valid


def _python_include() -> str:
    return sysconfig.get_path("include", scheme="posix_prefix")


def _get_hipcc_path() -> str:
    return _join_rocm_home("bin", "hipcc")


def _get_rocm_arch_flags(cflags: list[str] | None = None) -> list[str]:
    """--offload-arch= for each arch of PYTORCH_ROCM_ARCH (';' or ' ' separated), unless
    the flags name archs already; -fno-gpu-rdc (PyTorch's _get_rocm_arch_flags)."""
    for flag in cflags or []:
        if "amdgpu-target" in flag or "offload-arch" in flag:
            return ["-fno-gpu-rdc"]
    archs = [a for a in os.environ.get("PYTORCH_ROCM_ARCH", "").replace(" ", ";").split(";") if a]
    if not archs:
        # PyTorch's falls back to the archs torch was built for; the stand-in fails
        raise RuntimeError(
            "PYTORCH_ROCM_ARCH is empty: set it to the GPU archs (e.g. gfx942) to compile"
            " HIP sources for"
        )
    return [f"--offload-arch={arch}" for arch in archs] + ["-fno-gpu-rdc"]


def _append_std17_if_no_std_present(cflags: list[str]) -> None:
    if not any(flag.startswith("-std=") for flag in cflags):
        cflags.append("-std=c++17")


def _write_ninja_file(
    path: str,
    cflags: list[str] | None,
    post_cflags: list[str] | None,
    cuda_cflags: list[str] | None,
    cuda_post_cflags: list[str] | None,
    sources: list[str],
    objects: list[str],
    ldflags: list[str] | None,
    library_target: str | None,
    with_cuda: bool,
) -> None:
    """build.ninja: rule compile ($cxx -c) for each C++ source and rule cuda_compile
    ($nvcc: hipcc, -c) for each HIP one, one build statement a source; rule link when
    there is a library_target (the JIT's), none for BuildExtension, whose objects
    setuptools links (PyTorch's _write_ninja_file)."""
    assert len(sources) == len(objects) and sources

    def sanitize(flags: list[str] | None) -> list[str]:
        return [] if flags is None else [flag.strip() for flag in flags]

    cflags, post_cflags, ldflags = sanitize(cflags), sanitize(post_cflags), sanitize(ldflags)
    cuda_cflags, cuda_post_cflags = sanitize(cuda_cflags), sanitize(cuda_post_cflags)
    config = ["ninja_required_version = 1.3", f"cxx = {get_cxx_compiler()}"]
    if with_cuda:
        # PYTORCH_NVCC: PyTorch's hook for a compiler launcher in front of nvcc/hipcc
        config.append(f"nvcc = {os.environ.get('PYTORCH_NVCC') or _get_hipcc_path()}")
    if IS_HIP_EXTENSION:
        post_cflags = COMMON_HIP_FLAGS + post_cflags
    flags = [f"cflags = {' '.join(cflags)}", f"post_cflags = {' '.join(post_cflags)}"]
    if with_cuda:
        flags.append(f"cuda_cflags = {' '.join(cuda_cflags)}")
        flags.append(f"cuda_post_cflags = {' '.join(cuda_post_cflags)}")
    flags.append(f"ldflags = {' '.join(ldflags)}")
    compile_rule = [
        "rule compile",
        "  command = $cxx -MMD -MF $out.d $cflags -c $in -o $out $post_cflags",
        "  depfile = $out.d",
        "  deps = gcc",
    ]
    # hipcc writes no depfile (PyTorch's asks nvcc for one, not hipcc)
    cuda_rule = [
        "rule cuda_compile",
        "  command = $nvcc $cuda_cflags -c $in -o $out $cuda_post_cflags",
    ]
    build = []
    for source, obj in zip(sources, objects, strict=True):
        rule = "cuda_compile" if with_cuda and _is_cuda_file(source) else "compile"
        source = os.path.abspath(source).replace(" ", "$ ")
        build.append(f"build {obj.replace(' ', '$ ')}: {rule} {source}")
    if library_target is not None:
        link_rule = ["rule link", "  command = $cxx $in $ldflags -o $out"]
        link = [f"build {library_target}: link {' '.join(objects)}"]
        default = [f"default {library_target}"]
    else:
        link_rule, link, default = [], [], []
    blocks = [config, flags, compile_rule]
    if with_cuda:
        blocks.append(cuda_rule)
    blocks += [link_rule, build, link, default]
    _maybe_write(path, "\n\n".join("\n".join(b) for b in blocks if b) + "\n")


def _write_ninja_file_to_build_library(
    path: str,
    name: str,
    sources: list[str],
    extra_cflags: list[str],
    extra_ldflags: list[str],
    extra_include_paths: list[str],
) -> None:
    """The JIT's build.ninja: the sources compiled and linked into <name>.so."""
    includes = [os.path.abspath(p) for p in extra_include_paths]
    system_includes = [*include_paths(), _python_include()]
    cflags = [f"-DTORCH_EXTENSION_NAME={name}", *COMMON_CFLAGS]
    cflags += [f"-I{shlex.quote(p)}" for p in includes]
    cflags += [f"-isystem {shlex.quote(p)}" for p in system_includes]
    cflags += ["-fPIC", "-std=c++17", *extra_cflags]
    ldflags = [SHARED_FLAG, *(f"-L{shlex.quote(p)}" for p in library_paths())]
    ldflags += [*(f"-l{lib}" for lib in TORCH_LIBRARIES), *extra_ldflags]
    objects = [os.path.splitext(os.path.basename(s))[0] + ".o" for s in sources]
    _write_ninja_file(
        path,
        cflags=cflags,
        post_cflags=None,
        cuda_cflags=None,
        cuda_post_cflags=None,
        sources=sources,
        objects=objects,
        ldflags=ldflags,
        library_target=f"{name}{LIB_EXT}",
        with_cuda=False,
    )


def _write_ninja_file_and_compile_objects(
    sources: list[str],
    objects: list[str],
    cflags: list[str],
    post_cflags: list[str],
    cuda_cflags: list[str] | None,
    cuda_post_cflags: list[str] | None,
    build_directory: str,
    verbose: bool,
    with_cuda: bool | None,
) -> None:
    """BuildExtension's compile: build.ninja in the build temp directory, run; objects only."""
    verify_ninja_availability()
    if with_cuda is None:
        with_cuda = any(map(_is_cuda_file, sources))
    build_file_path = os.path.join(build_directory, "build.ninja")
    if verbose:
        print(f"Emitting ninja build file {build_file_path}...", file=sys.stderr)
    os.makedirs(build_directory, exist_ok=True)
    _write_ninja_file(
        build_file_path,
        cflags=cflags,
        post_cflags=post_cflags,
        cuda_cflags=cuda_cflags,
        cuda_post_cflags=cuda_post_cflags,
        sources=sources,
        objects=objects,
        ldflags=None,
        library_target=None,
        with_cuda=with_cuda,
    )
    if verbose:
        print("Compiling objects...", file=sys.stderr)
    # PyTorch's cannot tell which extension failed here either
    _run_ninja_build(build_directory, verbose, "Error compiling objects for extension")


def _setuptools_api() -> dict:
    """BuildExtension, CppExtension and CUDAExtension, made on first use: PyTorch's imports
    setuptools with the module (its wheels require setuptools); the stand-in torch does not
    require it, and the JIT (load_inline in the runtime images) needs none."""
    import setuptools
    from setuptools.command.build_ext import build_ext

    class BuildExtension(build_ext):
        """setuptools' build_ext that compiles each source with -c (through ninja, else
        setuptools' own compile) and leaves linking to setuptools (PyTorch's BuildExtension)."""

        @classmethod
        def with_options(cls, **options):
            """The class with ``options`` (no_python_abi_suffix, use_ninja) as constructor
            arguments, for cmdclass."""

            class cls_with_options(cls):  # type: ignore[misc, valid-type]
                def __init__(self, *args, **kwargs):
                    kwargs.update(options)
                    super().__init__(*args, **kwargs)

            return cls_with_options

        def __init__(self, *args, **kwargs) -> None:
            super().__init__(*args, **kwargs)
            self.no_python_abi_suffix = kwargs.get("no_python_abi_suffix", False)
            self.use_ninja = kwargs.get("use_ninja", True)
            if self.use_ninja and not is_ninja_available():
                logger.warning(
                    "Attempted to use ninja as the BuildExtension backend but we could not find"
                    " ninja.. Falling back to using the slow distutils backend."
                )
                self.use_ninja = False

        def finalize_options(self) -> None:
            super().finalize_options()
            if self.use_ninja:
                # ninja decides what is up to date
                self.force = True

        def build_extensions(self) -> None:
            for extension in self.extensions:
                # PyTorch's: a dict of flags has 'cxx' and 'nvcc', else torch's flags would
                # reach only one of the compilers
                if isinstance(extension.extra_compile_args, dict):
                    for key in ("cxx", "nvcc"):
                        extension.extra_compile_args.setdefault(key, [])
                self._add_compile_flag(extension, "-DTORCH_API_INCLUDE_EXTENSION_H")
                # pybind11 takes no dots: torchvision._C is TORCH_EXTENSION_NAME=_C
                name = extension.name.split(".")[-1]
                self._add_compile_flag(extension, f"-DTORCH_EXTENSION_NAME={name}")
            self.compiler.src_extensions += [".cu", ".cuh", ".hip"]
            original_compile = self.compiler._compile

            def unix_wrap_single_compile(obj, src, ext, cc_args, extra_postargs, pp_opts) -> None:
                cflags = copy.deepcopy(extra_postargs)
                original_compiler = self.compiler.compiler_so
                try:
                    if _is_cuda_file(src):
                        self.compiler.set_executable("compiler_so", [_get_hipcc_path()])
                        if isinstance(cflags, dict):
                            cflags = cflags["nvcc"]
                        cflags = COMMON_HIPCC_FLAGS + cflags + _get_rocm_arch_flags(cflags)
                    elif isinstance(cflags, dict):
                        cflags = cflags["cxx"]
                    if IS_HIP_EXTENSION:
                        cflags = COMMON_HIP_FLAGS + cflags
                    _append_std17_if_no_std_present(cflags)
                    original_compile(obj, src, ext, cc_args, cflags, pp_opts)
                finally:
                    self.compiler.set_executable("compiler_so", original_compiler)

            def unix_wrap_ninja_compile(
                sources,
                output_dir=None,
                macros=None,
                include_dirs=None,
                debug=0,
                extra_preargs=None,
                extra_postargs=None,
                depends=None,
            ):
                output_dir = os.path.abspath(output_dir)
                # the ninja file runs elsewhere: relative include directories made absolute
                if self.compiler.include_dirs is not None:
                    self.compiler.include_dirs = [
                        os.path.abspath(p) for p in self.compiler.include_dirs
                    ]
                _, objects, extra_postargs, pp_opts, _ = self.compiler._setup_compile(
                    output_dir, macros, include_dirs, sources, depends, extra_postargs
                )
                common_cflags = self.compiler._get_cc_args(pp_opts, debug, extra_preargs)
                # the flags of setuptools' compiler (Python's CFLAGS, CCSHARED), not its program
                extra_cc_cflags = self.compiler.compiler_so[1:]
                with_cuda = any(map(_is_cuda_file, sources))
                if isinstance(extra_postargs, dict):
                    post_cflags = list(extra_postargs["cxx"])
                else:
                    post_cflags = list(extra_postargs)
                _append_std17_if_no_std_present(post_cflags)
                cuda_cflags = cuda_post_cflags = None
                if with_cuda:
                    cuda_cflags = [shlex.quote(f) for f in common_cflags]
                    if isinstance(extra_postargs, dict):
                        cuda_post_cflags = list(extra_postargs["nvcc"])
                    else:
                        cuda_post_cflags = list(extra_postargs)
                    cuda_post_cflags = cuda_post_cflags + _get_rocm_arch_flags(cuda_post_cflags)
                    cuda_post_cflags = COMMON_HIP_FLAGS + COMMON_HIPCC_FLAGS + cuda_post_cflags
                    _append_std17_if_no_std_present(cuda_post_cflags)
                    cuda_post_cflags = [shlex.quote(f) for f in cuda_post_cflags]
                _write_ninja_file_and_compile_objects(
                    sources=sources,
                    objects=objects,
                    cflags=[shlex.quote(f) for f in extra_cc_cflags + common_cflags],
                    post_cflags=[shlex.quote(f) for f in post_cflags],
                    cuda_cflags=cuda_cflags,
                    cuda_post_cflags=cuda_post_cflags,
                    build_directory=output_dir,
                    verbose=True,
                    with_cuda=with_cuda,
                )
                # all the objects, for setuptools' link
                return objects

            if self.use_ninja:
                self.compiler.compile = unix_wrap_ninja_compile
            else:
                self.compiler._compile = unix_wrap_single_compile
            build_ext.build_extensions(self)

        def get_ext_filename(self, ext_name: str) -> str:
            """<name>.cpython-XY-<platform>.so, or <name>.so with no_python_abi_suffix."""
            ext_filename = super().get_ext_filename(ext_name)
            if self.no_python_abi_suffix:
                parts = ext_filename.split(".")
                ext_filename = ".".join(parts[:-2] + parts[-1:])
            return ext_filename

        def _add_compile_flag(self, extension, flag: str) -> None:
            extension.extra_compile_args = copy.deepcopy(extension.extra_compile_args)
            if isinstance(extension.extra_compile_args, dict):
                for args in extension.extra_compile_args.values():
                    args.append(flag)
            else:
                extension.extra_compile_args.append(flag)

    def CppExtension(name: str, sources: list[str], *args, **kwargs) -> setuptools.Extension:
        """A setuptools.Extension for C++ against torch: torch's include and library
        directories, c10 and torch_cpu (PyTorch's also torch and torch_python, which the
        stand-in does not ship), language c++."""
        kwargs["include_dirs"] = kwargs.get("include_dirs", []) + include_paths()
        kwargs["library_dirs"] = kwargs.get("library_dirs", []) + library_paths()
        kwargs["libraries"] = kwargs.get("libraries", []) + TORCH_LIBRARIES
        kwargs["language"] = "c++"
        return setuptools.Extension(name, sources, *args, **kwargs)

    def CUDAExtension(name: str, sources: list[str], *args, **kwargs) -> setuptools.Extension:
        """A setuptools.Extension for HIP/C++ against a ROCm torch: CppExtension's, with ROCm's
        include and library directories and amdhip64, c10_hip and torch_hip, language c++.
        PyTorch's hipifies the sources first; the stand-in takes them as HIP already."""
        kwargs["library_dirs"] = kwargs.get("library_dirs", []) + library_paths(device_type="cuda")
        libraries = kwargs.get("libraries", []) + TORCH_LIBRARIES
        if IS_HIP_EXTENSION:
            libraries += TORCH_HIP_LIBRARIES
        else:
            # PyTorch's links cudart, c10_cuda and torch_cuda: no CUDA torch is rehearsed
            raise RuntimeError(
                "stand-in torch: CUDAExtension needs a ROCm torch and ROCm (ROCM_HOME, ROCM_PATH,"
                " hipcc on PATH or /opt/rocm)"
            )
        kwargs["libraries"] = libraries
        kwargs["include_dirs"] = kwargs.get("include_dirs", []) + include_paths(device_type="cuda")
        kwargs["language"] = "c++"
        return setuptools.Extension(name, sources, *args, **kwargs)

    return {
        "BuildExtension": BuildExtension,
        "CppExtension": CppExtension,
        "CUDAExtension": CUDAExtension,
    }


_SETUPTOOLS_API: dict = {}


def __getattr__(name: str):
    if name in ("BuildExtension", "CppExtension", "CUDAExtension"):
        if not _SETUPTOOLS_API:
            _SETUPTOOLS_API.update(_setuptools_api())
        return _SETUPTOOLS_API[name]
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


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
    if any(os.path.splitext(s)[1] in (".cu", ".cuh", ".hip") for s in sources):
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
            _write_ninja_file_to_build_library(
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
