#!/usr/bin/env bash
# shellcheck source-path=SCRIPTDIR
# Build the torch wheel for ROCm from a PyTorch source checkout.
#
# Usage: build-pytorch.sh --version PYTORCH_VERSION --rocm ROCM_VERSION \
#            --arch PYTORCH_ROCM_ARCH --magma MAGMA_HOME \
#            --aotriton AOTRITON_PREFIX SRC_DIR OUT_DIR
#
# SRC_DIR must be writable: hipify (tools/amd_build/build_amd.py) rewrites
# the CUDA sources in place. Dockerfile.pytorch bind-mounts the pytorch-src
# image read-write for the one RUN, so neither the hipified tree nor the
# multi-GB build directory ends up in a layer; only the wheel does.
#
# The wheel is versioned <PYTORCH_VERSION>+rocm<release>, like PyTorch's own
# ROCm wheels. It declares no triton requirement: the images install our
# triton wheel next to it where they need one.
#
# MAGMA_HOME is MAGMA built for the arch (build-magma.sh), AOTRITON_PREFIX
# AOTriton built for it (build-aotriton.sh). Both are required: PyTorch
# builds without MAGMA when it finds none (cmake/Dependencies.cmake: "MAGMA
# not found. Compiling without MAGMA support"), and without
# AOTRITON_INSTALLED_PREFIX it downloads a prebuilt AOTriton
# (cmake/External/aotriton.cmake). The wheel carries libmagma.so next to
# libtorch_hip.so, as PyTorch's own ROCm wheels do
# (.ci/manywheel/build_rocm.sh bundles it); the build fails unless torch
# links MAGMA and ships the AOTriton it was given.
set -euo pipefail

die() { echo "build-pytorch: $*" >&2; exit 1; }

usage="usage: build-pytorch.sh --version V --rocm ROCM_VERSION --arch ARCH --magma DIR --aotriton DIR SRC_DIR OUT_DIR"
version="" rocm="" arch="" magma="" aotriton=""
while [ "$#" -gt 2 ]; do
    case "$1" in
        --version) version=$2 ;;
        --rocm) rocm=$2 ;;
        --arch) arch=$2 ;;
        --magma) magma=$2 ;;
        --aotriton) aotriton=$2 ;;
        *) die "$usage" ;;
    esac
    shift 2
done
[ "$#" -eq 2 ] && [ -n "$version" ] && [ -n "$rocm" ] && [ -n "$arch" ] \
    && [ -n "$magma" ] && [ -n "$aotriton" ] || die "$usage"
src=$1
out=$2
# What FindMAGMA.cmake looks for (libmagma, magma.h under MAGMA_HOME), and
# what aotriton.cmake installs from AOTRITON_INSTALLED_PREFIX (lib, include),
# with the kernel images build-aotriton.sh compiled.
[ -f "$magma/lib/libmagma.so" ] && [ -f "$magma/include/magma.h" ] \
    || die "no MAGMA at $magma (lib/libmagma.so, include/magma.h): build it with build-magma.sh"
[ -f "$aotriton/lib/libaotriton_v2.so" ] && [ -d "$aotriton/include/aotriton" ] \
    || die "no AOTriton at $aotriton (lib/libaotriton_v2.so, include/aotriton): build it with build-aotriton.sh"
[ -d "$aotriton/lib/aotriton.images" ] || die "AOTriton at $aotriton has no lib/aotriton.images (kernels)"
magma=$(cd "$magma" && pwd)
aotriton=$(cd "$aotriton" && pwd)
script_dir=$(cd "$(dirname "$0")" && pwd)
# PyTorch's own CI pin (.ci/docker/common/install_mkl.sh, MKL_VERSION)
MKL_VERSION=${MKL_VERSION:-2025.3.0}

# shellcheck source=rocm-release.sh
. "$script_dir/rocm-release.sh"
release=$(rocm_release "$rocm")
# PyTorch's own scripts read ROCM_VERSION as a plain release number; the
# image tag form ("10.1.0-full") must not leak into the build.
unset ROCM_VERSION
export PYTORCH_ROCM_ARCH=$arch

cd "$src"
[ -f tools/amd_build/build_amd.py ] || die "$src is not a PyTorch source tree"
# shellcheck source=build-env.sh
. "$script_dir/build-env.sh"

# PyTorch's requirements, its build requirements (requirements-build.txt:
# scikit-build-core, cmake, ninja since PyTorch moved its build backend) and
# [build-system] requires, with our packages and our build tools pinned: a
# pin of PyTorch's that would move setuptools fails here, loudly.
constraints=$(mktemp)
build_requires=$(mktemp)
trap 'rm -f "$constraints" "$build_requires"' EXIT
python "$script_dir/own-packages.py" --build-tools >"$constraints"
requirements=(--requirement requirements.txt)
if [ -f requirements-build.txt ]; then requirements+=(--requirement requirements-build.txt); fi
if [ -f pyproject.toml ]; then
    python "$script_dir/own-packages.py" --build-requires pyproject.toml >"$build_requires"
    requirements+=(--requirement "$build_requires")
fi
python -m pip install --constraint "$constraints" "${requirements[@]}"

# CPU BLAS and LAPACK: Intel's MKL, static, as PyTorch's own x86 wheels (ROCm
# ones included) link it (.ci/docker/common/install_mkl.sh: mkl-static and
# mkl-include from PyPI). Without it PyTorch quietly falls back to Eigen and
# builds without LAPACK ("MKL could not be found. Defaulting to Eigen"), and
# torch.linalg fails on the CPU. BLAS=MKL makes a missing MKL an error. The
# static libraries stay in this build stage; only the wheel ships.
python -m pip install --constraint "$constraints" "mkl-static==$MKL_VERSION" "mkl-include==$MKL_VERSION"
venv=${VIRTUAL_ENV:-/opt/venv}
export BLAS=MKL MKLROOT=$venv
export CMAKE_INCLUDE_PATH=$venv/include CMAKE_LIBRARY_PATH=$venv/lib

python tools/amd_build/build_amd.py

export USE_ROCM=1
export USE_CUDA=0
export BUILD_TEST=0
export PYTORCH_BUILD_VERSION="${version}+rocm${release}"
export PYTORCH_BUILD_NUMBER=1
export CMAKE_PREFIX_PATH=${VIRTUAL_ENV:-/opt/venv}
export ROCM_PATH=${ROCM_PATH:-/opt/rocm}
# MAGMA: LoadHIP.cmake defaults MAGMA_HOME to ${ROCM_PATH}/magma; named here.
export USE_MAGMA=1 MAGMA_HOME=$magma
# AOTriton: the prefix branch of aotriton.cmake, never its download or its
# ExternalProject (AOTRITON_INSTALL_FROM_SOURCE counts when merely defined).
export USE_FLASH_ATTENTION=1 USE_MEM_EFF_ATTENTION=1 AOTRITON_INSTALLED_PREFIX=$aotriton
unset AOTRITON_INSTALL_FROM_SOURCE PYTORCH_AOTRITON_COMMIT PYTORCH_AOTRITON_BASE_URL
# torch.distributed with RCCL (its nccl backend on ROCm) and the Kineto profiler
# (roctracer on ROCm): PyTorch's defaults on Linux, named here as upstream's ROCm
# wheels name them, so an environment that turns one off cannot; the smoke test
# checks both (torch.distributed.is_nccl_available(), kineto_available()).
export USE_DISTRIBUTED=1 USE_NCCL=1 USE_RCCL=1 USE_KINETO=1

mkdir -p "$out"
python -m pip wheel --no-build-isolation --no-deps --wheel-dir "$out" --verbose .

shopt -s nullglob
wheels=("$out"/torch-"$PYTORCH_BUILD_VERSION"-*.whl)
[ "${#wheels[@]}" -eq 1 ] || die "expected one torch-$PYTORCH_BUILD_VERSION wheel in $out, found: $(ls "$out")"

# MAGMA and AOTriton in the wheel, or no wheel: torch must link libmagma.so
# (its SONAME, build-magma.sh), which then ships in torch/lib where torch's
# RUNPATH ($ORIGIN) finds it, and torch/lib must hold the AOTriton of
# AOTRITON_PREFIX, byte for byte, with its kernel images.
unpacked=$(mktemp -d)
trap 'rm -rf "$constraints" "$build_requires" "$unpacked"' EXIT
python -m wheel unpack --dest "$unpacked" "${wheels[0]}"
roots=("$unpacked"/torch-*/)
[ "${#roots[@]}" -eq 1 ] || die "unpacking ${wheels[0]##*/} gave no single torch-* directory"
lib=${roots[0]%/}/torch/lib
[ -f "$lib/libtorch_hip.so" ] || die "${wheels[0]##*/} has no torch/lib/libtorch_hip.so"
# (readelf's output in a variable: `readelf | grep -q` can fail under
# pipefail when grep exits before readelf has written everything)
dynamic=$(readelf -d "$lib/libtorch_hip.so")
grep -q 'NEEDED.*\[libmagma\.so\]' <<<"$dynamic" \
    || die "libtorch_hip.so does not link libmagma.so: torch was built without MAGMA (see MAGMA in the CMake output)"
cmp -s "$aotriton/lib/libaotriton_v2.so" "$lib/libaotriton_v2.so" \
    || die "torch/lib/libaotriton_v2.so is missing or not the one from $aotriton"
[ -d "$lib/aotriton.images" ] || die "${wheels[0]##*/} has no torch/lib/aotriton.images"
cp "$magma/lib/libmagma.so" "$lib/libmagma.so"
rm "${wheels[0]}"
python -m wheel pack --dest-dir "$out" "${roots[0]%/}"
[ -f "${wheels[0]}" ] || die "repacking gave $(ls "$out"), not ${wheels[0]##*/}"
echo "build-pytorch: ${wheels[0]##*/} for $PYTORCH_ROCM_ARCH, with MAGMA and AOTriton"
# what the compiler cache did, the last line (build-env.sh)
rocm_pytorch_cc_stats
