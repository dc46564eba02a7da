"""Stand-in torchvision: its extension built with hipcc against the installed torch."""

import os
import subprocess
import sys
import sysconfig
from pathlib import Path

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

ROOT = Path(__file__).parent.resolve()
VERSION = (ROOT / "version.txt").read_text().strip()
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
TORCH_LIB = Path(torch.__file__).parent / "lib"
ROCM = Path(os.environ.get("ROCM_PATH", "/opt/rocm"))


class HipExtension(build_ext):
    def build_extension(self, ext: Extension) -> None:
        out = Path(self.get_ext_fullpath(ext.name))
        out.parent.mkdir(parents=True, exist_ok=True)
        cmd = [
            str(ROCM / "bin" / "hipcc"),
            "-shared",
            "-fPIC",
            "-O2",
            *(f"--offload-arch={a}" for a in ARCHS),
            f'-DTORCHVISION_ARCHS="{";".join(ARCHS)}"',
            f'-DTORCHVISION_VERSION="{VERSION}"',
            f"-I{sysconfig.get_paths()['include']}",
            *(str(ROOT / s) for s in ext.sources),
            "-o",
            str(out),
            f"-L{TORCH_LIB}",
            "-ltorch_hip",
            "-ljpeg",
            "-lpng",
            "-Wl,-rpath,$ORIGIN/../torch/lib",
        ]
        print(" ".join(cmd), flush=True)
        subprocess.run(cmd, check=True)


setup(
    name="torchvision",
    version=VERSION,
    description="Image and video datasets and models for torch (rehearsal stand-in)",
    packages=["torchvision"],
    ext_modules=[
        Extension(
            "torchvision._C",
            [
                "torchvision/csrc/vision.cpp",
                "torchvision/csrc/ops/hip/roi_scale.hip",
                "torchvision/csrc/io/decode.cpp",
            ],
        )
    ],
    cmdclass={"build_ext": HipExtension},
    install_requires=[f"torch=={torch.__version__}"],
    python_requires=">=3.10",
    zip_safe=False,
)
