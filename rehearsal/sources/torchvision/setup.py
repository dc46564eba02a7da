"""Stand-in torchvision: torchvision._C built as torchvision's setup.py builds it on ROCm,
with torch's torch.utils.cpp_extension (CUDAExtension, BuildExtension) against the
installed torch.

As torchvision's make_C_extension(): FORCE_CUDA=1 makes _C a CUDAExtension of the C++
sources and the HIP kernels (csrc/ops/hip/*.hip), include_dirs csrc, WITH_HIP, and
BuildExtension.with_options(no_python_abi_suffix=True) builds it (torchvision/_C.so):
each .cpp compiled with -c by $CXX, each .hip by ROCM_HOME's hipcc for every arch of
PYTORCH_ROCM_ARCH, the objects linked by setuptools (LDSHARED/CC). torchvision builds its
image decoders into a second extension (make_image_extension: torchvision.image, linked
with libjpeg and libpng); the stand-in keeps them in _C, linked with jpeg and png.
"""

import os
import sys
from pathlib import Path

from setuptools import setup

ROOT = Path(__file__).parent.resolve()
VERSION = (ROOT / "version.txt").read_text().strip()
CSRC = Path("torchvision/csrc")
if os.environ.get("FORCE_CUDA") != "1":
    sys.exit("stand-in torchvision: FORCE_CUDA is not 1: this would build without GPU kernels")
ARCHS = [a for a in os.environ.get("PYTORCH_ROCM_ARCH", "").replace(" ", ";").split(";") if a]
if not ARCHS:
    sys.exit("stand-in torchvision: PYTORCH_ROCM_ARCH is empty")
try:
    import torch  # the torch of this image, as torchvision's build uses it
except ImportError:
    sys.exit("stand-in torchvision: no torch to build against (build without isolation)")
if not torch.version.hip:
    sys.exit(f"stand-in torchvision: torch {torch.__version__} is not a ROCm build")
from torch.utils.cpp_extension import ROCM_HOME, BuildExtension, CUDAExtension  # noqa: E402

if ROCM_HOME is None:
    sys.exit("stand-in torchvision: no ROCm found (ROCM_HOME, ROCM_PATH, hipcc, /opt/rocm)")


def make_C_extension():
    sources = [CSRC / "vision.cpp", CSRC / "io/decode.cpp", *sorted(CSRC.glob("ops/hip/*.hip"))]
    return CUDAExtension(
        name="torchvision._C",
        sources=sorted(str(s) for s in sources),
        include_dirs=[str(CSRC)],
        define_macros=[
            ("WITH_HIP", None),
            ("TORCHVISION_ARCHS", f'"{";".join(ARCHS)}"'),
            ("TORCHVISION_VERSION", f'"{VERSION}"'),
        ],
        libraries=["jpeg", "png"],
        extra_compile_args={"cxx": ["-O2"], "nvcc": ["-O2"]},
        # torch's libraries from the installed wheel's torch/lib
        extra_link_args=["-Wl,-rpath,$ORIGIN/../torch/lib"],
    )


setup(
    name="torchvision",
    version=VERSION,
    description="Image and video datasets and models for torch (rehearsal stand-in)",
    packages=["torchvision"],
    ext_modules=[make_C_extension()],
    cmdclass={"build_ext": BuildExtension.with_options(no_python_abi_suffix=True)},
    install_requires=[f"torch=={torch.__version__}"],
    python_requires=">=3.10",
    zip_safe=False,
)
