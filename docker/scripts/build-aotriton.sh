#!/usr/bin/env bash
# shellcheck source-path=SCRIPTDIR
# Build AOTriton (the flash and memory-efficient attention kernels of
# PyTorch's SDPA on ROCm) from source for one GPU architecture, at the commit
# the PyTorch source tree pins.
#
# Usage: build-aotriton.sh --arch PYTORCH_ROCM_ARCH --pytorch-src DIR [--source DIR] PREFIX
#        build-aotriton.sh --help
#
# PREFIX receives lib/libaotriton_v2.so, lib/aotriton.images/ (the kernels,
# compiled ahead of time for the arch) and include/. build-pytorch.sh passes
# it to PyTorch as AOTRITON_INSTALLED_PREFIX.
#
# Why here and not inside PyTorch's build (cmake/External/aotriton.cmake of
# the PyTorch tree, included when USE_FLASH_ATTENTION or USE_MEM_EFF_ATTENTION
# is on):
#   - by default it downloads a prebuilt runtime and per-arch kernel images
#     from AOTriton's GitHub releases, chosen by the HIP version it finds,
#     i.e. possibly made for another ROCm; for a HIP version missing from its
#     table it clones and builds the runtime and still downloads the images;
#   - AOTRITON_INSTALL_FROM_SOURCE builds everything, but as an
#     ExternalProject inside the multi-hour torch build, so a failure in
#     AOTriton's Triton costs the torch build and every rebuild of torch
#     rebuilds AOTriton;
#   - AOTRITON_INSTALLED_PREFIX takes a finished install; that is what this
#     script makes, once per arch, in its own stage.
# The commit is read from the PyTorch tree (`set(__AOTRITON_CI_COMMIT ...)`),
# so AOTriton moves with PyTorch. The CMake arguments are the ones
# aotriton.cmake's aotriton_build_from_source passes (AOTRITON_TARGET_ARCH =
# PYTORCH_ROCM_ARCH, AOTRITON_NO_PYTHON=ON, AOTRITON_NOIMAGE_MODE=OFF,
# AOTRITON_GPU_BUILD_TIMEOUT=0, HIP_PLATFORM=amd).
#
# Network: AOTriton's CMakeLists.txt makes a venv and pip-installs its
# requirements.txt and its own code generator into it, then builds its Triton
# (third_party/triton, a submodule) with `pip install .`: all through the
# mirror settings of the RUN. Triton's setup.py also downloads its pinned
# LLVM build and NVIDIA's CUDA tools from their vendors' servers, which no
# mirror setting reaches. As in build-triton.sh, NVIDIA's tools are switched
# off (each TRITON_*_PATH names an empty directory, no Proton) and the LLVM
# download lands in /root/.triton, a BuildKit cache mount, so it happens once
# per build host. Needs liblzma-dev and pkg-config (AOTriton's README,
# `pkg_search_module(LZMA REQUIRED liblzma)`), cmake >= 3.26 and ninja.
set -euo pipefail

die() { echo "build-aotriton: $*" >&2; exit 1; }

usage="usage: build-aotriton.sh --arch PYTORCH_ROCM_ARCH --pytorch-src DIR [--source DIR] PREFIX"
AOTRITON_REPO=https://github.com/ROCm/aotriton.git

arch="" pytorch_src="" source_dir=""
while [ "$#" -gt 0 ]; do
    case "$1" in
        -h|--help) echo "$usage"; exit 0 ;;
        --arch) [ "$#" -ge 2 ] || die "$usage"; arch=$2; shift 2 ;;
        --pytorch-src) [ "$#" -ge 2 ] || die "$usage"; pytorch_src=$2; shift 2 ;;
        --source) [ "$#" -ge 2 ] || die "$usage"; source_dir=$2; shift 2 ;;
        -*) die "unknown option '$1'; $usage" ;;
        *) break ;;
    esac
done
[ "$#" -eq 1 ] && [ -n "$arch" ] && [ -n "$pytorch_src" ] || die "$usage"
prefix=$1
script_dir=$(cd "$(dirname "$0")" && pwd)
# One arch, or several `;`-separated (an arch family): AOTRITON_TARGET_ARCH
# is a CMake list, as PYTORCH_ROCM_ARCH, which build-env.sh checks.
export PYTORCH_ROCM_ARCH=$arch
# shellcheck source=build-env.sh
. "$script_dir/build-env.sh"

cmake_file=$pytorch_src/cmake/External/aotriton.cmake
[ -f "$cmake_file" ] || die "$pytorch_src has no cmake/External/aotriton.cmake (not a PyTorch tree?)"
# The pin is the literal default; the other assignment reads
# $ENV{PYTORCH_AOTRITON_COMMIT}.
pins=$(grep -oE 'set\(__AOTRITON_CI_COMMIT "[0-9a-f]{40}"\)' "$cmake_file" | grep -oE '[0-9a-f]{40}' || true)
[ -n "$pins" ] || die "no set(__AOTRITON_CI_COMMIT \"<40-hex commit>\") in $cmake_file"
[ "$(echo "$pins" | sort -u | wc -l)" -eq 1 ] || die "several AOTriton commits in $cmake_file: $(echo "$pins" | tr '\n' ' ')"
commit=$(echo "$pins" | head -n 1)
version=$(grep -oE 'set\(__AOTRITON_VER "[^"]+"\)' "$cmake_file" | head -n 1 | cut -d'"' -f2 || true)
if [ -n "$source_dir" ]; then
    [ -f "$source_dir/CMakeLists.txt" ] && [ -d "$source_dir/v3src" ] \
        || die "$source_dir is not an AOTriton checkout (no CMakeLists.txt and v3src/)"
    [ -f "$source_dir/third_party/triton/setup.py" ] || [ -f "$source_dir/third_party/triton/python/setup.py" ] \
        || die "$source_dir has no third_party/triton: check it out with its submodules"
fi
export ROCM_PATH=${ROCM_PATH:-/opt/rocm}

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
src=$work/aotriton
if [ -n "$source_dir" ]; then
    cp -a "$source_dir" "$src"
else
    "$script_dir/fetch-source.sh" "$AOTRITON_REPO" "$commit" "$src" --recursive
fi

# Triton's downloads from NVIDIA, off (see build-triton.sh).
nvidia_tools=$work/no-nvidia-tools
mkdir -p "$nvidia_tools"
for tool in PTXAS PTXAS_BLACKWELL CUOBJDUMP NVDISASM CUDACRT CUDART \
    CUPTI_INCLUDE CUPTI_LIB CUPTI_LIB_BLACKWELL; do
    export "TRITON_${tool}_PATH=$nvidia_tools"
done
export TRITON_BUILD_PROTON=OFF

cmake -S "$src" -B "$work/build" -G Ninja \
    -DCMAKE_INSTALL_PREFIX="$prefix" \
    -DCMAKE_BUILD_TYPE=Release \
    -DAOTRITON_TARGET_ARCH="$arch" \
    -DAOTRITON_GPU_BUILD_TIMEOUT=0 \
    -DAOTRITON_NO_PYTHON=ON \
    -DAOTRITON_NOIMAGE_MODE=OFF \
    -DHIP_PLATFORM=amd
# AOTriton's README: `ninja install` runs the whole build; no separate `ninja`.
cmake --build "$work/build" --target install

[ -f "$prefix/lib/libaotriton_v2.so" ] || die "no $prefix/lib/libaotriton_v2.so after the build"
[ -d "$prefix/include/aotriton" ] || die "no $prefix/include/aotriton after the build"
images=$(find "$prefix/lib/aotriton.images" -mindepth 1 -maxdepth 1 2>/dev/null | head -n 1)
[ -n "$images" ] || die "no kernel images in $prefix/lib/aotriton.images: nothing was compiled for $arch"
echo "build-aotriton: AOTriton ${version:-?} $commit for $arch -> $prefix"
# what the compiler cache did, the last line (build-env.sh)
rocm_pytorch_cc_stats
