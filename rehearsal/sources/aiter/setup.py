"""Stand-in aiter: PREBUILD_KERNELS compiles its modules with hipcc into the wheel."""

import os
import shutil
import sys

from setuptools import Distribution, setup

# As aiter's setup.py: never import aiter here (it imports torch and the modules).
sys.path.insert(0, f"{os.path.dirname(os.path.abspath(__file__))}/aiter/")
from jit import core

this_dir = os.path.dirname(os.path.abspath(__file__))
ck_dir = os.environ.get("CK_DIR", f"{this_dir}/3rdparty/composable_kernel")
PACKAGE_NAME = "amd-aiter"
BUILD_TARGET = os.environ.get("BUILD_TARGET", "auto")
PREBUILD_KERNELS = int(os.environ.get("PREBUILD_KERNELS", 0))

if BUILD_TARGET == "cuda":
    raise NotImplementedError("Only ROCM is supported")
if not os.path.exists(f"{ck_dir}/example/ck_tile/01_fmha/generate.py"):
    sys.exit(
        "stand-in aiter: CK is needed by aiter: clone with --recursive"
        f" ({ck_dir} has no example/ck_tile/01_fmha/generate.py)"
    )
if PREBUILD_KERNELS == 0:
    sys.exit(
        "stand-in aiter: PREBUILD_KERNELS is not set: the wheel would hold no kernels and"
        " compile each module on first use (hipcc, a writable package directory)"
    )
if os.environ.get("GPU_ARCHS", "native").strip() in ("", "native"):
    sys.exit("stand-in aiter: GPU_ARCHS is native: that reads rocminfo, which needs a GPU")
try:
    import torch  # the torch of this image, which the modules link
except ImportError:
    sys.exit("stand-in aiter: PREBUILD_KERNELS needs torch installed (build without isolation)")
if not torch.version.hip:
    sys.exit(f"stand-in aiter: torch {torch.__version__} is not a ROCm build")

with open("./aiter/install_mode", "w") as f:
    f.write("install")

if os.path.isdir("aiter_meta"):
    shutil.rmtree("aiter_meta")
# The sources a module needs to be built on first use ship in the wheel.
shutil.copytree("3rdparty", "aiter_meta/3rdparty")
shutil.copytree("csrc", "aiter_meta/csrc")


def exclude_ops() -> list[str]:
    """The modules PREBUILD_KERNELS leaves to JIT: tuning ones, and for 1 the mha ones
    (but the fmha_v3 ones): their variants below are prebuilt instead."""
    out = []
    for module in core.get_args_of_build("all"):
        name = module["md_name"]
        if "_tune" in name:
            out.append(name)
        elif PREBUILD_KERNELS == 1 and "mha" in name and "fmha_v3" not in name:
            out.append(name)
    return out


# The kernels and modules of earlier builds go first.
shutil.rmtree(os.path.join(core.get_user_jit_dir(), "build"), ignore_errors=True)
for old in os.listdir(core.get_user_jit_dir()):
    if old.endswith(".so"):
        os.remove(os.path.join(core.get_user_jit_dir(), old))

all_args = core.get_args_of_build("all", exclude=exclude_ops())
if PREBUILD_KERNELS == 1:
    all_args += [core.mha_varlen_fwd_variant(n) for n in core.MHA_VARLEN_FWD_PREBUILT]
max_jobs = os.environ.get("MAX_JOBS", "")
threads = min(5, int(max_jobs)) if max_jobs.isdigit() and int(max_jobs) > 0 else 1
core.build_modules(all_args, threads, prebuilt=True)


class ForcePlatlibDistribution(Distribution):
    def has_ext_modules(self):
        return True


setup(
    name=PACKAGE_NAME,
    use_scm_version=True,
    packages=["aiter_meta", "aiter"],
    include_package_data=True,
    package_data={"": ["*"]},
    python_requires=">=3.8",
    install_requires=["pybind11>=3.0.1", "ninja", "pandas", "einops", "psutil", "packaging"],
    distclass=ForcePlatlibDistribution,
)

if os.path.isdir("aiter_meta"):
    shutil.rmtree("aiter_meta")
