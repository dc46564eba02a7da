"""The stand-in torch: builds for ROCm from the environment PyTorch's build reads.

docker/scripts/build-pytorch.sh runs `pip wheel --no-build-isolation .` after
tools/amd_build/build_amd.py, with USE_ROCM, PYTORCH_ROCM_ARCH, ROCM_PATH,
PYTORCH_BUILD_VERSION, BLAS=MKL and MKLROOT, USE_MAGMA and MAGMA_HOME,
USE_FLASH_ATTENTION and AOTRITON_INSTALLED_PREFIX, USE_DISTRIBUTED, USE_NCCL
and USE_RCCL, USE_KINETO (PyTorch's defaults: on), MAX_JOBS. This build
reads the same variables and fails where PyTorch's would, or where PyTorch's
would quietly build something else (BLAS=MKL without MKL is an error there
too). hipcc compiles the hipified kernels for each arch of
PYTORCH_ROCM_ARCH into torch/lib/libtorch_hip.so, linked with libmagma.so
and libaotriton_v2.so (and RCCL's librccl.so when distributed with RCCL
is on: torch.distributed.is_nccl_available() asks it its version);
AOTriton's library and kernel images ship in
torch/lib as aotriton.cmake installs them; torch._C is a C extension on
libtorch_hip.so; libtorch_hip.so links, besides, every ROCm library
PyTorch's cmake/Dependencies.cmake and cmake/public/LoadHIP.cmake link
(ROCM_LIBRARIES; torch/csrc/hip_libraries.cpp binds an entry point of each).
The tensor library itself is numpy: seconds, not hours.
torch/include holds torch/extension.h, which torch.utils.cpp_extension's JIT
(load_inline, load) compiles extensions against, as PyTorch's wheel ships its
headers.
"""

import os
import shutil
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
HIP_SOURCES = sorted((ROOT / "aten/src/ATen/native/hip").glob("*.hip"))
if not HIP_SOURCES:
    sys.exit("stand-in torch: no hipified sources: run tools/amd_build/build_amd.py first")
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


# What cmake/Dependencies.cmake and cmake/public/LoadHIP.cmake link libtorch_hip.so
# with besides MAGMA, AOTriton and RCCL (torch/csrc/hip_libraries.cpp binds one entry
# point of each): the libraries' link names under ROCM_PATH/lib.
ROCM_LIBRARIES = (
    "amdhip64",
    "MIOpen",
    "hipblaslt",
    "hipblas",
    "rocblas",
    "hipfft",
    "hiprand",
    "hipsparse",
    "hipsolver",
    "rocsolver",
    "hiprtc",
    "roctx64",
    "hsa-runtime64",
    "rocm_smi64",
    # by its soname: Debian's hipSPARSELt has no -dev package here (docs/rehearsal.md)
    ":libhipsparselt.so.0",
)
missing = [
    n
    for n in ROCM_LIBRARIES
    if not (ROCM / "lib" / (n[1:] if n.startswith(":") else f"lib{n}.so")).exists()
]
if missing:
    sys.exit(
        f"stand-in torch: no {', '.join(n.lstrip(':') for n in missing)} (-l) in {ROCM}/lib:"
        " PyTorch's ROCm build links them (cmake/Dependencies.cmake)"
    )


def hip_version() -> str:
    try:
        return (ROCM / ".info" / "version").read_text().split("-")[0].strip()
    except OSError:
        sys.exit(f"stand-in torch: no HIP found at ROCM_PATH={ROCM} (no .info/version)")


class BuildWithHip(build_ext):
    """libtorch_hip.so first (hipcc), then torch._C on it."""

    def run(self) -> None:
        lib = Path(self.build_lib) / "torch" / "lib"
        lib.mkdir(parents=True, exist_ok=True)
        shutil.copy2(AOTRITON / "lib" / "libaotriton_v2.so", lib)
        shutil.copytree(
            AOTRITON / "lib" / "aotriton.images", lib / "aotriton.images", dirs_exist_ok=True
        )
        hipcc = [
            str(ROCM / "bin" / "hipcc"),
            "-shared",
            "-fPIC",
            "-O2",
            *(f"--offload-arch={a}" for a in ARCHS),
            f'-DTORCH_HIP_ARCH_LIST="{";".join(ARCHS)}"',
            f"-DTORCH_USE_DISTRIBUTED={int(DISTRIBUTED)}",
            f"-DTORCH_USE_RCCL={int(RCCL)}",
            f"-DTORCH_USE_KINETO={int(KINETO)}",
            f"-I{MAGMA / 'include'}",
            f"-I{ROCM / 'include'}",
            f"-I{AOTRITON / 'include'}",
            *map(str, HIP_SOURCES),
            "-x",
            "hip",
            str(ROOT / "torch" / "csrc" / "hip_info.cpp"),
            str(ROOT / "torch" / "csrc" / "hip_libraries.cpp"),
            "-o",
            str(lib / "libtorch_hip.so"),
            f"-L{MAGMA / 'lib'}",
            f"-L{lib}",
            "-lmagma",
            "-laotriton_v2",
            f"-L{ROCM / 'lib'}",
            *(f"-l{name}" for name in ROCM_LIBRARIES),
            *(["-lrccl"] if RCCL else []),
            "-Wl,-rpath,$ORIGIN",
        ]
        print(" ".join(hipcc), flush=True)
        subprocess.run(hipcc, check=True)
        for ext in self.extensions:
            ext.library_dirs.append(str(lib))
        super().run()
        version = Path(self.build_lib) / "torch" / "version.py"
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
            libraries=["torch_hip"],
            runtime_library_dirs=["$ORIGIN/lib"],
        )
    ],
    cmdclass={"build_ext": BuildWithHip},
    install_requires=["numpy", "typing-extensions"],
    python_requires=">=3.10",
    zip_safe=False,
)
