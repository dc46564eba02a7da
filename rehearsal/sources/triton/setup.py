"""Stand-in Triton: builds like Triton (setup.py at the root, package under python/)."""

import os
import re
import shutil
from pathlib import Path

from setuptools import Extension, setup

HERE = Path(__file__).parent
VERSION = re.search(
    r'__version__ = "([^"]+)"', (HERE / "python/triton/__init__.py").read_text()
).group(1) + os.environ.get("TRITON_WHEEL_VERSION_SUFFIX", "")

# Triton downloads ptxas, cuobjdump, nvdisasm and the CUDA headers and
# libraries for its NVIDIA backend unless each TRITON_<TOOL>_PATH names a
# directory to take them from; this host has no way to NVIDIA's servers.
NVIDIA_TOOLS = ("PTXAS", "CUOBJDUMP", "NVDISASM", "CUDACRT", "CUDART", "CUPTI_INCLUDE", "CUPTI_LIB")
missing = [t for t in NVIDIA_TOOLS if not os.environ.get(f"TRITON_{t}_PATH")]
if missing:
    raise SystemExit(
        "stand-in triton: would download "
        + ", ".join(missing)
        + " from NVIDIA (set TRITON_<TOOL>_PATH, as build-triton.sh does)"
    )
if os.environ.get("TRITON_BUILD_PROTON", "ON").upper() not in ("OFF", "0", "FALSE"):
    raise SystemExit("stand-in triton: Proton needs CUPTI; set TRITON_BUILD_PROTON=OFF")
if os.environ.get("TRITON_BUILD_WITH_CCACHE", "").lower() == "true" and shutil.which("ccache"):
    os.environ.setdefault("CC", "ccache cc")

setup(
    name="triton",
    version=VERSION,
    description="A language and compiler for custom deep learning operations (rehearsal stand-in)",
    package_dir={"": "python"},
    packages=[
        "triton",
        "triton.backends",
        "triton.backends.amd",
        "triton.backends.nvidia",
        "triton.language",
        "triton.runtime",
    ],
    # the AMD driver's C (compiled at run time) and the HIP headers it includes
    package_data={"triton.backends.amd": ["driver.c", "include/hip/*.h"]},
    ext_modules=[Extension("triton._C.libtriton", ["python/src/libtriton.c"])],
    entry_points={
        "triton.backends": [
            "amd = triton.backends.amd",
            "nvidia = triton.backends.nvidia",
        ]
    },
    python_requires=">=3.10",
    zip_safe=False,
)
