"""The stand-in vLLM (rehearsal): built as vLLM's setup.py builds it for ROCm.

Read by the same variables and tools: VLLM_TARGET_DEVICE (rocm, or cuda with
a HIP torch), the torch installed in the image (no build isolation; a torch
that is not a ROCm build fails), PYTORCH_ROCM_ARCH, ROCM_PATH, MAX_JOBS,
TRITON_KERNELS_SRC_DIR (the Python files of triton_kernels, copied into
vllm/third_party/triton_kernels; unset, vLLM's CMake clones ROCm's Triton, as
this does), VLLM_REQUIRE_RUST_FRONTEND (without it the Rust parts are
optional: setuptools-rust skips them when cargo is missing or fails). The
version is setuptools-scm's from the git tag plus `+rocm<major><minor><patch>`
from ROCm's librocm-core (else torch.version.hip), as vLLM's get_vllm_version.

hipcc compiles csrc/ for each arch into vllm/_C.abi3.so, linked with torch's
libtorch_hip.so (vLLM's CMake does this with more kernels); setuptools-rust
builds vllm-rs and vllm/_rust_tool_parser.abi3.so from rust/ (tools/build_rust.py),
and vllm-rs ships in the package, vllm/vllm-rs, where vLLM's envs look for it.
"""

import ctypes
import importlib.util
import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import torch
from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext
from setuptools_rust.build import build_rust
from setuptools_scm import get_version

ROOT_DIR = Path(__file__).parent.resolve()


def load_module_from_path(module_name, path):
    spec = importlib.util.spec_from_file_location(module_name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module
    spec.loader.exec_module(module)
    return module


# vllm is not installed yet: its envs and the Rust build description by path.
envs = load_module_from_path("envs", ROOT_DIR / "vllm" / "envs.py")
rust_build = load_module_from_path("rust_build", ROOT_DIR / "tools" / "build_rust.py")

VLLM_TARGET_DEVICE = envs.VLLM_TARGET_DEVICE
if os.getenv("VLLM_TARGET_DEVICE") is None and torch.version.hip is not None:
    VLLM_TARGET_DEVICE = "rocm"
ROCM_HOME = Path(os.environ.get("ROCM_PATH", "/opt/rocm"))
TRITON_KERNELS_GIT = "https://github.com/ROCm/triton.git"
DEFAULT_TRITON_KERNELS_TAG = "main"


def _is_hip() -> bool:
    return VLLM_TARGET_DEVICE in ("cuda", "rocm") and torch.version.hip is not None


if not _is_hip():
    sys.exit(
        f"stand-in vllm: VLLM_TARGET_DEVICE={VLLM_TARGET_DEVICE} with torch"
        f" {torch.__version__} (hip {torch.version.hip}): only ROCm builds are rehearsed"
    )
ARCHS = [a for a in os.environ.get("PYTORCH_ROCM_ARCH", "").replace(" ", ";").split(";") if a]
if not ARCHS:
    sys.exit("stand-in vllm: PYTORCH_ROCM_ARCH is empty")
TORCH_LIB = Path(torch.__file__).parent / "lib"


def should_require_rust_frontend() -> bool:
    value = os.getenv("VLLM_REQUIRE_RUST_FRONTEND", "")
    return value.lower() not in ("", "0", "false", "no")


def get_rocm_version() -> str | None:
    """ROCm's version from librocm-core (getROCmVersion), as vLLM reads it."""
    lib = ROCM_HOME / "lib" / "librocm-core.so"
    if not lib.is_file():
        return None
    try:
        core = ctypes.CDLL(str(lib))
        major, minor, patch = ctypes.c_uint32(), ctypes.c_uint32(), ctypes.c_uint32()
        if core.getROCmVersion(ctypes.byref(major), ctypes.byref(minor), ctypes.byref(patch)):
            return None
        return f"{major.value}.{minor.value}.{patch.value}"
    except (OSError, AttributeError):
        return None


def get_vllm_version() -> str:
    version = get_version(write_to="vllm/_version.py")
    sep = "+" if "+" not in version else "."  # dev versions might contain +
    rocm_version = get_rocm_version() or torch.version.hip
    if rocm_version and rocm_version != envs.VLLM_MAIN_CUDA_VERSION:
        version += f"{sep}rocm{rocm_version.replace('.', '')[:3]}"
    return version


def get_requirements() -> list[str]:
    def read(filename: str) -> list[str]:
        out = []
        for line in (ROOT_DIR / "requirements" / filename).read_text().splitlines():
            if line.startswith("-r "):
                out += read(line.split()[1])
            elif line.strip() and not line.startswith(("#", "--")):
                out.append(line)
        return out

    return read("rocm.txt")


class hip_build_ext(build_ext):
    """vllm._C with hipcc for each arch; vllm.triton_kernels: copies its Python files."""

    def build_extension(self, ext: Extension) -> None:
        if ext.name == "vllm.triton_kernels":
            self.install_triton_kernels()
            return
        out = Path(self.get_ext_fullpath(ext.name))
        out.parent.mkdir(parents=True, exist_ok=True)
        cmd = [
            str(ROCM_HOME / "bin" / "hipcc"),
            "-shared",
            "-fPIC",
            "-O2",
            *(f"--offload-arch={a}" for a in ARCHS),
            f'-DVLLM_HIP_ARCHS="{";".join(ARCHS)}"',
            f"-I{sysconfig.get_paths()['include']}",
            *(str(ROOT_DIR / s) for s in ext.sources),
            "-o",
            str(out),
            f"-L{TORCH_LIB}",
            "-ltorch_hip",
            "-Wl,-rpath,$ORIGIN/../torch/lib",
        ]
        print(" ".join(cmd), flush=True)
        subprocess.run(cmd, check=True)

    def install_triton_kernels(self) -> None:
        src = os.environ.get("TRITON_KERNELS_SRC_DIR")
        if src:
            print(f"[triton_kernels] Fetch from {src}", flush=True)
            python_dir = Path(src)
        else:
            clone = ROOT_DIR / ".deps" / "triton_kernels-src"
            print(f"[triton_kernels] Fetch from {TRITON_KERNELS_GIT}:{DEFAULT_TRITON_KERNELS_TAG}")
            if not clone.exists():
                subprocess.run(
                    [
                        "git",
                        "clone",
                        "--depth=1",
                        "--branch",
                        DEFAULT_TRITON_KERNELS_TAG,
                        TRITON_KERNELS_GIT,
                        str(clone),
                    ],
                    check=True,
                )
            python_dir = clone / "python" / "triton_kernels" / "triton_kernels"
        if not (python_dir / "__init__.py").is_file():
            raise RuntimeError(f"[triton_kernels] {python_dir} is no triton_kernels package")
        dest = Path(self.build_lib) / "vllm" / "third_party" / "triton_kernels"
        for py in sorted(python_dir.rglob("*.py")):
            target = dest / py.relative_to(python_dir)
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(py, target)
        print(f"[triton_kernels] copied {python_dir} to {dest}", flush=True)


class build_rust_into_package(build_rust):
    """setuptools-rust puts a RustBin among the scripts; vLLM's wheel has it in vllm/."""

    def run(self) -> None:
        super().run()
        scripts = Path(self.get_finalized_command("install_scripts").build_dir)
        built = scripts / "vllm-rs"
        if built.is_file():
            lib = (
                ROOT_DIR if self.inplace else Path(self.get_finalized_command("build_py").build_lib)
            )
            dest = lib / "vllm" / "vllm-rs"
            dest.parent.mkdir(parents=True, exist_ok=True)
            shutil.move(built, dest)
            print(f"moved {built} to {dest}", flush=True)


ext_modules = [
    Extension(
        "vllm._C",
        ["csrc/activation_kernels.hip", "csrc/torch_bindings.cpp"],
        py_limited_api=True,
    ),
    # Optional, as vLLM's: nothing is compiled, the Python files are copied.
    Extension("vllm.triton_kernels", [], optional=True),
]

setup(
    # static metadata is in pyproject.toml
    version=get_vllm_version(),
    ext_modules=ext_modules,
    rust_extensions=rust_build.rust_extensions(optional=not should_require_rust_frontend()),
    install_requires=get_requirements(),
    cmdclass={"build_ext": hip_build_ext, "build_rust": build_rust_into_package},
    package_data={"vllm": ["py.typed"]},
)
