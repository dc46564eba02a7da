"""Stand-in CuPy: cupy._core.core built by hipcc for HCC_AMDGPU_TARGET."""

import os
import subprocess
import sys
import sysconfig
from pathlib import Path

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

ROOT = Path(__file__).parent.resolve()
VERSION = "14.2.0"
if os.environ.get("CUPY_INSTALL_USE_HIP") != "1":
    sys.exit("stand-in cupy: CUPY_INSTALL_USE_HIP is not 1: this would look for CUDA")
ROCM = Path(os.environ.get("ROCM_HOME", ""))
if not (ROCM / "bin" / "hipcc").is_file():
    sys.exit(f"stand-in cupy: ROCM_HOME={ROCM} has no bin/hipcc")
TARGETS = os.environ.get("HCC_AMDGPU_TARGET", "").split(",")
if not TARGETS[0]:
    sys.exit("stand-in cupy: HCC_AMDGPU_TARGET is empty")
if not (ROOT / "third_party" / "jitify" / "jitify.hpp").is_file():
    sys.exit("stand-in cupy: third_party/jitify is missing: check out the submodules")


# What CuPy's ROCm build links every extension module with
# (install/cupy_builder/_features.py, HIP_cuda_nvtx_cusolver), and RCCL for its
# nccl module (HIP_nccl); not roctracer64, which Debian does not package
# (docs/rehearsal.md). rocSPARSE by its soname: Debian's -dev package of it is
# not in the stand-in.
HIP_LIBRARIES = (
    "amdhip64",
    "hipblas",
    "hipfft",
    "hiprand",
    "hipsparse",
    "rocfft",
    "roctx64",
    "rocblas",
    "rocsolver",
    ":librocsparse.so.1",
    "rccl",
)


class HipBuild(build_ext):
    def build_extension(self, ext: Extension) -> None:
        out = Path(self.get_ext_fullpath(ext.name))
        out.parent.mkdir(parents=True, exist_ok=True)
        cmd = [
            str(ROCM / "bin" / "hipcc"),
            "-shared",
            "-fPIC",
            *(f"--offload-arch={t}" for t in TARGETS),
            f'-DCUPY_TARGETS="{",".join(TARGETS)}"',
            f'-DCUPY_VERSION="{VERSION}"',
            f"-I{sysconfig.get_paths()['include']}",
            f"-I{ROOT / 'third_party' / 'jitify'}",
            *(str(ROOT / s) for s in ext.sources),
            "-o",
            str(out),
            f"-L{ROCM / 'lib'}",
            *(f"-l{name}" for name in HIP_LIBRARIES),
        ]
        print(" ".join(cmd), flush=True)
        subprocess.run(cmd, check=True)


setup(
    name="cupy",
    version=VERSION,
    description="NumPy & SciPy for GPU (rehearsal stand-in, ROCm)",
    packages=["cupy", "cupy._core"],
    ext_modules=[Extension("cupy._core.core", ["cupy/_core/core.hip"])],
    cmdclass={"build_ext": HipBuild},
    python_requires=">=3.10",
    zip_safe=False,
)
