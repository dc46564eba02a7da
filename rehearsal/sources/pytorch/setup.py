"""The stand-in torch: builds for ROCm from the environment PyTorch's build reads.

docker/scripts/build-pytorch.sh runs `pip wheel --no-build-isolation .` after
tools/amd_build/build_amd.py, with USE_ROCM, PYTORCH_ROCM_ARCH, ROCM_PATH,
PYTORCH_BUILD_VERSION, BLAS=MKL and MKLROOT, USE_MAGMA and MAGMA_HOME,
USE_FLASH_ATTENTION and AOTRITON_INSTALLED_PREFIX, USE_DISTRIBUTED, USE_NCCL
and USE_RCCL, USE_KINETO (PyTorch's defaults: on), MAX_JOBS. This build
reads the same variables and fails where PyTorch's would, or where PyTorch's
would quietly build something else (BLAS=MKL without MKL is an error there
too). The native part builds as PyTorch's does (CMakeLists.txt): setup.py
runs CMake with Ninja, passing the environment's USE_*, BUILD_* and CMAKE_*
variables (tools/setup_helpers/cmake.py), so the compiler cache's
CMAKE_{C,CXX,HIP}_COMPILER_LAUNCHER reach every compile; torchgen generates
ATen's per-operator sources from native_functions.yaml (about 300
translation units, each CPU kernel once per CPU capability); CMake's HIP
language compiles the hipified kernels (30 files) for each arch of
PYTORCH_ROCM_ARCH into torch/lib/libtorch_hip.so, linked with libmagma.so,
libaotriton_v2.so, RCCL's librccl.so (distributed with RCCL:
torch.distributed.is_nccl_available() asks it its version) and every ROCm
library PyTorch's cmake/Dependencies.cmake and cmake/public/LoadHIP.cmake
link (torch/csrc/hip_libraries.cpp binds an entry point of each). AOTriton's
library and kernel images ship in torch/lib as aotriton.cmake installs them;
torch._C is a C extension on libtorch_hip.so. The operators' kernels are
compiled and registered, but the tensors of the Python side are numpy:
seconds of Python, not hours.
torch/include holds torch/extension.h, which torch.utils.cpp_extension's JIT
(load_inline, load) compiles extensions against, as PyTorch's wheel ships its
headers.
"""

import os
import subprocess
import sys
from pathlib import Path

from setuptools import Extension, find_packages, setup
from setuptools.command.build_ext import build_ext

ROOT = Path(__file__).parent.resolve()


def need(name: str) -> str:
    value = os.environ.get(name, "")
    if not value:
        sys.exit(f"stand-in torch: {name} is not set")
    return value


if os.environ.get("USE_ROCM") != "1" or os.environ.get("USE_CUDA", "0") not in ("0", ""):
    sys.exit("stand-in torch: only USE_ROCM=1 USE_CUDA=0 builds are rehearsed")
ARCHS = [a for a in need("PYTORCH_ROCM_ARCH").replace(" ", ";").split(";") if a]
VERSION = need("PYTORCH_BUILD_VERSION")
ROCM = Path(os.environ.get("ROCM_PATH", "/opt/rocm"))
if os.environ.get("BLAS") == "MKL":
    mkl = Path(need("MKLROOT"))
    if (
        not (mkl / "lib" / "libmkl_core.a").is_file()
        and not (mkl / "lib" / "libmkl_core.so").is_file()
    ):
        sys.exit(f"stand-in torch: BLAS=MKL, but MKL could not be found in {mkl}")
MAGMA = Path(need("MAGMA_HOME")) if os.environ.get("USE_MAGMA") == "1" else None
if MAGMA and not (MAGMA / "lib" / "libmagma.so").is_file():
    sys.exit(f"stand-in torch: USE_MAGMA=1 but no libmagma.so in {MAGMA}/lib")
AOTRITON = (
    Path(need("AOTRITON_INSTALLED_PREFIX"))
    if os.environ.get("USE_FLASH_ATTENTION") == "1"
    else None
)
if AOTRITON and not (AOTRITON / "lib" / "libaotriton_v2.so").is_file():
    sys.exit(f"stand-in torch: no libaotriton_v2.so in {AOTRITON}/lib")


def option(name: str, default: str) -> bool:
    """A PyTorch build option from the environment (1, ON, YES, TRUE: tools/setup_helpers)."""
    return os.environ.get(name, default).upper() in ("1", "ON", "YES", "TRUE", "Y")


# torch.distributed with the NCCL backend, which on ROCm is RCCL (LoadHIP.cmake finds it
# in ROCM_PATH), and the Kineto profiler: PyTorch builds both by default on Linux.
DISTRIBUTED = option("USE_DISTRIBUTED", "1")
RCCL = DISTRIBUTED and option("USE_NCCL", "1") and option("USE_RCCL", "1")
KINETO = option("USE_KINETO", "1")
if RCCL and not (ROCM / "include" / "rccl" / "rccl.h").is_file():
    sys.exit(
        f"stand-in torch: USE_RCCL is on, but there is no RCCL in {ROCM} (include/rccl/rccl.h)"
    )
if not MAGMA or not AOTRITON:
    sys.exit(
        "stand-in torch: the family builds with MAGMA and AOTriton;"
        " set USE_MAGMA and USE_FLASH_ATTENTION"
    )


def hip_version() -> str:
    try:
        return (ROCM / ".info" / "version").read_text().split("-")[0].strip()
    except OSError:
        sys.exit(f"stand-in torch: no HIP found at ROCM_PATH={ROCM} (no .info/version)")


def cmake_args(install: Path) -> list[str]:
    """PyTorch's tools/setup_helpers/cmake.py: the environment's USE_*, BUILD_* and
    CMAKE_* variables become -D options (the compiler cache's
    CMAKE_{C,CXX,HIP}_COMPILER_LAUNCHER among them), with the Ninja generator."""
    args = [
        "cmake",
        "-S",
        str(ROOT),
        "-B",
        str(ROOT / "build"),
        "-G",
        "Ninja",
        f"-DCMAKE_INSTALL_PREFIX={install}",
        f"-DPython_EXECUTABLE={sys.executable}",
    ]
    for name, value in sorted(os.environ.items()):
        if name.startswith(("USE_", "BUILD_", "CMAKE_")) and name not in (
            "CMAKE_PREFIX_PATH",  # a path list CMake reads from the environment itself
            "CMAKE_INCLUDE_PATH",
            "CMAKE_LIBRARY_PATH",
            "CMAKE_BUILD_PARALLEL_LEVEL",
        ):
            args.append(f"-D{name}={value}")
    return args


class BuildWithCMake(build_ext):
    """libc10, libtorch_cpu and libtorch_hip with CMake and Ninja, installed into
    torch/lib; then torch._C on libtorch_hip.so."""

    def run(self) -> None:
        torch_dir = (Path(self.build_lib) / "torch").resolve()
        lib = torch_dir / "lib"
        lib.mkdir(parents=True, exist_ok=True)
        for cmd in (
            cmake_args(torch_dir),
            [
                "cmake",
                "--build",
                str(ROOT / "build"),
                "--target",
                "install",
                "--",
                "-j",
                os.environ.get("MAX_JOBS") or str(os.cpu_count() or 1),
            ],
        ):
            print(" ".join(cmd), flush=True)
            subprocess.run(cmd, check=True)
        for ext in self.extensions:
            ext.library_dirs.append(str(lib))
        super().run()
        version = torch_dir / "version.py"
        version.write_text(
            f'__version__ = "{VERSION}"\nhip = "{hip_version()}"\ncuda = None\n'
            f'git_version = "rehearsal"\n'
        )


setup(
    name="torch",
    version=VERSION,
    description="Tensors and dynamic neural networks (rehearsal stand-in)",
    packages=find_packages(include=["torch", "torch.*"]),
    # torch's headers, which torch.utils.cpp_extension compiles extensions against
    package_data={"torch": ["include/torch/*.h"]},
    ext_modules=[
        Extension(
            "torch._C",
            ["torch/csrc/Module.c"],
            libraries=["torch_hip", "torch_cpu", "c10"],
            runtime_library_dirs=["$ORIGIN/lib"],
        )
    ],
    cmdclass={"build_ext": BuildWithCMake},
    install_requires=["numpy", "typing-extensions"],
    python_requires=">=3.10",
    zip_safe=False,
)
