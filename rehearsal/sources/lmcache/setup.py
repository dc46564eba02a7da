"""The stand-in LMCache (rehearsal): built as LMCache's setup.py builds it for ROCm.

BUILD_WITH_HIP=1 selects the ROCm build (without it LMCache builds CUDA
kernels, which the stand-in refuses): the CUDA sources of csrc/ are hipified
(mem_kernels.cu -> mem_kernels.hip, pybind.cpp -> pybind_hip.cpp), and
rocm_extension() makes lmcache.c_ops of them with torch.utils.cpp_extension,
built by its BuildExtension as LMCache's is: pybind_hip.cpp compiled with -c
by $CXX, mem_kernels.hip by hipcc for each arch of PYTORCH_ROCM_ARCH, the
objects linked by setuptools (LDSHARED/CC) with the installed torch's
libraries (no build isolation: a torch that is not a ROCm build fails).
requirements/rocm_core.txt joins requirements/common.txt in install_requires.
The version is setuptools-scm's (pyproject.toml).
"""

import os
import re
import sys
from pathlib import Path

from setuptools import find_packages, setup

ROOT_DIR = Path(__file__).parent
CSRC_DIR = ROOT_DIR / "csrc"

# python -m build --sdist
BUILDING_SDIST = "sdist" in sys.argv or os.environ.get("NO_CUDA_EXT", "0") == "1"
BUILD_WITH_HIP = os.environ.get("BUILD_WITH_HIP", "0") == "1"

# The CUDA names csrc/ uses, and their HIP names (torch's hipify knows them all).
HIPIFY = {
    "cuda_runtime.h": "hip/hip_runtime.h",
    "cudaStream_t": "hipStream_t",
    "cudaGetLastError": "hipGetLastError",
    "cudaRuntimeGetVersion": "hipRuntimeGetVersion",
    "cudaSuccess": "hipSuccess",
}


def _read_requirements(path: Path) -> list[str]:
    if not path.exists():
        return []
    reqs = []
    for raw in path.read_text().splitlines():
        line = raw.split("#", 1)[0].strip()
        if line:
            reqs.append(line)
    return reqs


def hipify_wrapper() -> list[Path]:
    """The HIP sources: each CUDA source of csrc/ with the HIP names."""
    print("Hipifying sources ")
    pattern = re.compile("|".join(re.escape(k) for k in sorted(HIPIFY, key=len, reverse=True)))
    out = []
    for source in sorted(CSRC_DIR.iterdir()):
        if source.suffix == ".cu":
            target = source.with_suffix(".hip")
        elif source.suffix == ".cpp" and not source.stem.endswith("_hip"):
            target = source.with_name(f"{source.stem}_hip.cpp")
        else:
            continue
        target.write_text(pattern.sub(lambda m: HIPIFY[m.group(0)], source.read_text()))
        out.append(target)
    return out


def rocm_extension() -> tuple[list, dict]:
    # the torch of this image, as LMCache's build uses it (no build isolation)
    import torch
    from torch.utils import cpp_extension  # Import here

    if not torch.version.hip:
        sys.exit(f"stand-in lmcache: torch {torch.__version__} is not a ROCm build")
    archs = [a for a in os.environ.get("PYTORCH_ROCM_ARCH", "").replace(" ", ";").split(";")]
    archs = [a for a in archs if a]
    if not archs:
        sys.exit("stand-in lmcache: PYTORCH_ROCM_ARCH is empty")
    print("Building ROCM extensions")
    hipify_wrapper()
    hip_sources = ["csrc/pybind_hip.cpp", "csrc/mem_kernels.hip"]
    rocm = os.environ.get("ROCM_PATH", "/opt/rocm")
    define_macros = [
        ("__HIP_PLATFORM_AMD__", "1"),
        ("USE_ROCM", "1"),
        ("LMCACHE_GPU_ARCHS", f'"{";".join(archs)}"'),
    ]
    ext_modules = [
        # LMCache's is a CppExtension (BuildExtension compiles its .hip with hipcc all the
        # same) whose torch_hip and HIP runtime symbols the real torch's global deps
        # provide at import; the stand-in torch loads none globally, so c_ops is a
        # CUDAExtension, which links amdhip64, c10_hip and torch_hip.
        cpp_extension.CUDAExtension(
            "lmcache.c_ops",
            sources=hip_sources,
            extra_compile_args={"cxx": ["-O3", "-std=c++17"]},
            include_dirs=[os.path.join(rocm, "include")],
            library_dirs=[os.path.join(rocm, "lib")],
            define_macros=define_macros,
            # torch's libraries from the installed wheel's torch/lib
            extra_link_args=["-Wl,-rpath,$ORIGIN/../torch/lib"],
        )
    ]
    return ext_modules, {"build_ext": cpp_extension.BuildExtension}


def source_dist_extension() -> tuple[list, dict]:
    print("Not building CUDA/HIP extensions for sdist")
    return [], {}


if __name__ == "__main__":
    if BUILDING_SDIST:
        get_extension = source_dist_extension
    elif BUILD_WITH_HIP:
        get_extension = rocm_extension
    else:
        sys.exit("stand-in lmcache: only ROCm builds (BUILD_WITH_HIP=1) are rehearsed")

    ext_modules, cmdclass = get_extension()

    install_requires = _read_requirements(ROOT_DIR / "requirements" / "common.txt")
    if BUILD_WITH_HIP:
        install_requires += _read_requirements(ROOT_DIR / "requirements" / "rocm_core.txt")

    setup(
        packages=find_packages(exclude=("csrc",)),
        ext_modules=ext_modules,
        cmdclass=cmdclass,
        include_package_data=True,
        install_requires=install_requires,
    )
