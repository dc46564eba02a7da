"""Stand-in FlashAttention: the ROCm CK build of flash_attn_2_cuda, with hipcc."""

import ast
import concurrent.futures
import glob
import os
import platform
import re
import subprocess
import sys
import sysconfig
from pathlib import Path

import torch
from packaging.version import Version, parse
from setuptools import Extension, find_packages, setup
from setuptools.command.build_ext import build_ext
from wheel.bdist_wheel import bdist_wheel as _bdist_wheel

this_dir = os.path.dirname(os.path.abspath(__file__))
BUILD_TARGET = os.environ.get("BUILD_TARGET", "auto")
IS_ROCM = bool(torch.version.hip) if BUILD_TARGET == "auto" else BUILD_TARGET == "rocm"
PACKAGE_NAME = "flash_attn"
BASE_WHEEL_URL = (
    "https://github.com/Dao-AILab/flash-attention/releases/download/{tag_name}/{wheel_name}"
)
FORCE_BUILD = os.getenv("FLASH_ATTENTION_FORCE_BUILD", "FALSE") == "TRUE"
SKIP_CUDA_BUILD = os.getenv("FLASH_ATTENTION_SKIP_CUDA_BUILD", "FALSE") == "TRUE"
USE_TRITON_ROCM = os.getenv("FLASH_ATTENTION_TRITON_AMD_ENABLE", "FALSE") == "TRUE"
SKIP_CK_BUILD = (
    os.getenv("FLASH_ATTENTION_SKIP_CK_BUILD", "TRUE") == "TRUE" if USE_TRITON_ROCM else False
)
ROCM_HOME = os.environ.get("ROCM_HOME") or os.environ.get("ROCM_PATH", "/opt/rocm")
CK = "csrc/composable_kernel"


def get_hip_version() -> Version:
    return parse(torch.version.hip.split()[-1].rstrip("-").replace("-", "+"))


def validate_and_update_archs(archs):
    allowed_archs = ["native", "gfx90a", "gfx950", "gfx942"]
    assert all(arch in allowed_archs for arch in archs), (
        f"One of GPU archs of {archs} is invalid or not supported by Flash-Attention"
    )


if os.path.isdir(".git"):
    if not SKIP_CK_BUILD:
        subprocess.run(["git", "submodule", "update", "--init", CK], check=True)
        subprocess.run(["git", "submodule", "update", "--init", "csrc/cutlass"], check=True)
elif IS_ROCM and not SKIP_CK_BUILD:
    assert os.path.exists(f"{CK}/example/ck_tile/01_fmha/generate.py"), (
        "csrc/composable_kernel is missing, please use source distribution or git clone"
    )

ext_modules = []
cc_flag: list[str] = []
if not SKIP_CUDA_BUILD and not IS_ROCM:
    sys.exit("stand-in flash-attention: only the ROCm (CK) build is here, not CUDA's")
elif not SKIP_CUDA_BUILD and IS_ROCM and not SKIP_CK_BUILD:
    print(f"\n\ntorch.__version__  = {torch.__version__}\n\n")
    os.makedirs("build", exist_ok=True)
    optdim = os.getenv("OPT_DIM", "32,64,128,256")
    for direction in ("fwd", "fwd_appendkv", "fwd_splitkv", "bwd"):
        subprocess.run(
            [
                sys.executable,
                f"{CK}/example/ck_tile/01_fmha/generate.py",
                "-d",
                direction,
                "--output_dir",
                "build",
                "--receipt",
                "2",
                "--optdim",
                optdim,
            ],
            check=True,
        )
    archs = os.getenv("GPU_ARCHS", "native").split(";")
    validate_and_update_archs(archs)
    if archs == ["native"]:
        sys.exit("stand-in flash-attention: GPU_ARCHS=native asks torch for the GPU; set GPU_ARCHS")
    cc_flag = [f"--offload-arch={arch}" for arch in archs]
    cc_flag += [
        "-O3",
        "-std=c++17",
        "-DCK_TILE_FMHA_FWD_FAST_EXP2=1",
        "-fgpu-flush-denormals-to-zero",
        "-DCK_ENABLE_BF16",
        "-DCK_ENABLE_FP16",
        "-DUSE_PROF_API=1",
        "-D__HIP_PLATFORM_HCC__=1",
        f'-DFLASH_ATTN_ARCHS="{";".join(archs)}"',
    ]
    # The CK settings by HIP version (flash-attention's setup.py sets them unchecked).
    hip_version = get_hip_version()
    if hip_version > Version("5.5.00000"):
        cc_flag += ["-mllvm", "--lsr-drop-solution=1"]
    if hip_version > Version("5.7.23302"):
        cc_flag += ["-fno-offload-uniform-block"]
    if hip_version > Version("6.1.40090"):
        cc_flag += ["-mllvm", "-enable-post-misched=0"]
    if hip_version > Version("6.2.41132"):
        cc_flag += [
            "-mllvm",
            "-amdgpu-early-inline-all=true",
            "-mllvm",
            "-amdgpu-function-calls=false",
        ]
    if hip_version > Version("6.2.41133") and hip_version < Version("6.3.00000"):
        cc_flag += ["-mllvm", "-amdgpu-coerce-illegal-types=1"]
    sources = [
        "csrc/flash_attn_ck/flash_api.cpp",
        "csrc/flash_attn_ck/mha_fwd.cpp",
        *sorted(glob.glob("build/fmha_*wd*.cpp")),
    ]
    ext_modules.append(Extension("flash_attn_2_cuda", sources))


class HipBuildExtension(build_ext):
    """The extension's sources compiled by hipcc, MAX_JOBS at a time, then linked."""

    def build_extension(self, ext: Extension) -> None:
        out = Path(self.get_ext_fullpath(ext.name)).resolve()
        objdir = Path(self.build_temp).resolve() / ext.name
        objdir.mkdir(parents=True, exist_ok=True)
        hipcc = os.path.join(ROCM_HOME, "bin", "hipcc")
        include = [
            f"-I{this_dir}/csrc/flash_attn_ck",
            f"-I{this_dir}/{CK}/include",
            f"-I{this_dir}/{CK}/library/include",
            f"-I{this_dir}/{CK}/example/ck_tile/01_fmha",
            f"-I{sysconfig.get_paths()['include']}",
        ]

        def compile_one(src: str) -> str:
            obj = str(objdir / (Path(src).stem + ".o"))
            cmd = [hipcc, "-x", "hip", "-c", "-fPIC", *cc_flag, *include, src, "-o", obj]
            print(" ".join(cmd), flush=True)
            subprocess.run(cmd, check=True)
            return obj

        jobs = int(os.environ.get("MAX_JOBS", "1"))
        with concurrent.futures.ThreadPoolExecutor(max_workers=jobs) as pool:
            objects = list(pool.map(compile_one, ext.sources))
        torch_lib = Path(torch.__file__).parent / "lib"
        out.parent.mkdir(parents=True, exist_ok=True)
        link = [hipcc, "-shared", *cc_flag[: len(archs)], *objects, "-o", str(out)]
        link += [f"-L{torch_lib}", "-ltorch_hip", "-Wl,-rpath,$ORIGIN/torch/lib"]
        print(" ".join(link), flush=True)
        subprocess.run(link, check=True)


def get_package_version():
    with open(Path(this_dir) / "flash_attn" / "__init__.py") as f:
        version_match = re.search(r"^__version__\s*=\s*(.*)$", f.read(), re.MULTILINE)
    public_version = ast.literal_eval(version_match.group(1))
    local_version = os.environ.get("FLASH_ATTN_LOCAL_VERSION")
    return f"{public_version}+{local_version}" if local_version else str(public_version)


def get_wheel_url():
    torch_version_raw = parse(torch.__version__)
    python_version = f"cp{sys.version_info.major}{sys.version_info.minor}"
    hip = get_hip_version()
    cxx11_abi = str(getattr(torch._C, "_GLIBCXX_USE_CXX11_ABI", True)).upper()
    wheel_filename = (
        f"{PACKAGE_NAME}-{get_package_version()}+rocm{hip.major}{hip.minor}"
        f"torch{torch_version_raw.major}.{torch_version_raw.minor}cxx11abi{cxx11_abi}"
        f"-{python_version}-{python_version}-linux_{platform.uname().machine}.whl"
    )
    tag_name = f"v{get_package_version()}"
    return BASE_WHEEL_URL.format(tag_name=tag_name, wheel_name=wheel_filename), wheel_filename


class CachedWheelsCommand(_bdist_wheel):
    """Without FLASH_ATTENTION_FORCE_BUILD the real command first downloads a prebuilt
    wheel from the project's GitHub releases; the stand-in refuses instead."""

    def run(self):
        if FORCE_BUILD:
            return super().run()
        wheel_url, _ = get_wheel_url()
        sys.exit(
            f"stand-in flash-attention: FLASH_ATTENTION_FORCE_BUILD is not TRUE: this would"
            f" first download {wheel_url}"
        )


setup(
    name=PACKAGE_NAME,
    version=get_package_version(),
    packages=find_packages(
        exclude=("build", "csrc", "include", "tests", "dist", "docs", "benchmarks")
    ),
    description="Flash Attention: Fast and Memory-Efficient Exact Attention (rehearsal stand-in)",
    ext_modules=ext_modules,
    cmdclass={"bdist_wheel": CachedWheelsCommand, "build_ext": HipBuildExtension}
    if ext_modules
    else {"bdist_wheel": CachedWheelsCommand},
    python_requires=">=3.9",
    install_requires=["torch", "einops"],
)
