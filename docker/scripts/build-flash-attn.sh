#!/usr/bin/env bash
# shellcheck source-path=SCRIPTDIR
# CK flash-attention (flash_attn) for vLLM, on the archs vLLM builds it for.
#
# Usage: build-flash-attn.sh fetch --arch ARCH URL REF SRC_DIR
#        build-flash-attn.sh build --arch ARCH SRC_DIR OUT_DIR
#
# vLLM's ROCm base image (docker/Dockerfile.rocm_base, stage build_fa) builds
# Dao-AILab/flash-attention with GPU_ARCHS = its PYTORCH_ROCM_ARCH minus every
# gfx1xxx, and flash-attention's setup.py accepts only gfx90a, gfx942 and
# gfx950 (validate_and_update_archs); vLLM picks it for ViT attention on gfx9
# when `flash_attn` is importable, else PyTorch's SDPA (vllm/platforms/rocm.py,
# get_vit_attn_backend). The image has one arch (or one family: every member
# must be one of those), so this script decides:
#
#   fetch  on gfx90a/gfx942/gfx950: fetch-source.sh URL REF SRC_DIR with the
#          submodules (setup.py runs `git submodule update --init` for
#          csrc/composable_kernel and csrc/cutlass; with both checked out at
#          their pinned commits that is a no-op and the build fetches
#          nothing); on any other arch: nothing.
#   build  on gfx90a/gfx942/gfx950: the flash_attn wheel with build-wheel.sh
#          (against our torch, no build isolation, the compiler cache and
#          MAX_JOBS of build-env.sh) into OUT_DIR, checked for its extension
#          flash_attn_2_cuda; on any other arch: OUT_DIR holding only
#          NOT-BUILT, one sentence why (as an optional parent's context that
#          was not built for the arch).
#
# The settings setup.py reads: BUILD_TARGET=rocm (not guessed from torch),
# GPU_ARCHS=ARCH, FLASH_ATTENTION_FORCE_BUILD=TRUE (else its bdist_wheel
# first tries to download a prebuilt wheel from the project's GitHub
# releases), FLASH_ATTENTION_TRITON_AMD_ENABLE=FALSE and
# FLASH_ATTENTION_SKIP_CUDA_BUILD=FALSE (the CK kernels, not the Triton
# backend or no extension at all).
set -euo pipefail

die() { echo "build-flash-attn: $*" >&2; exit 1; }

usage="usage: build-flash-attn.sh fetch --arch ARCH URL REF SRC_DIR | build --arch ARCH SRC_DIR OUT_DIR"
# The archs flash-attention's setup.py builds CK kernels for (but `native`).
FA_ARCHS=(gfx90a gfx942 gfx950)

if [ "${1:-}" = --help ] || [ "${1:-}" = -h ]; then
    sed -n '3,/^set -euo/p' "$0" | sed -e '$d' -e 's/^# \{0,1\}//'
    exit 0
fi
[ "$#" -ge 3 ] || die "$usage"
command=$1
[ "$2" = --arch ] || die "$usage"
arch=$3
shift 3
[ -n "$arch" ] || die "--arch is empty"
# One arch, or an arch family's `;`-separated archs (GPU_ARCHS takes that
# list): built when flash-attention builds for every one of them.
[[ "$arch" =~ ^gfx[0-9a-z]+(\;gfx[0-9a-z]+)*$ ]] \
    || die "--arch takes a GPU arch (gfx942) or several separated by ';', not '$arch'"

built_here=1
IFS=';' read -r -a archs <<<"$arch"
for member in "${archs[@]}"; do
    known=0
    for a in "${FA_ARCHS[@]}"; do
        [ "$a" = "$member" ] && known=1
    done
    [ "$known" -eq 1 ] || built_here=0
done
why="flash-attention's CK kernels are built for ${FA_ARCHS[*]} only, as vLLM's ROCm image builds them; on $arch vLLM uses PyTorch's SDPA for ViT attention"

script_dir=$(cd "$(dirname "$0")" && pwd)

case "$command" in
    fetch)
        [ "$#" -eq 3 ] || die "$usage"
        url=$1 ref=$2 src=$3
        if [ "$built_here" -eq 0 ]; then
            echo "build-flash-attn: nothing to fetch for $arch: $why"
            exit 0
        fi
        "$script_dir/fetch-source.sh" "$url" "$ref" "$src" --recursive
        [ -f "$src/csrc/composable_kernel/example/ck_tile/01_fmha/generate.py" ] \
            || die "$url $ref has no csrc/composable_kernel/example/ck_tile/01_fmha/generate.py"
        ;;
    build)
        [ "$#" -eq 2 ] || die "$usage"
        src=$1 out=$2
        if [ "$built_here" -eq 0 ]; then
            if [ -d "$out" ] && [ -n "$(ls -A "$out")" ]; then
                die "$out is not empty"
            fi
            mkdir -p "$out"
            echo "$why." >"$out/NOT-BUILT"
            echo "build-flash-attn: not built: $why"
            exit 0
        fi
        [ -f "$src/setup.py" ] || die "no setup.py in $src"
        [ -f "$src/csrc/composable_kernel/example/ck_tile/01_fmha/generate.py" ] \
            || die "no csrc/composable_kernel in $src (fetch it with its submodules)"
        BUILD_TARGET=rocm \
            GPU_ARCHS=$arch \
            FLASH_ATTENTION_FORCE_BUILD=TRUE \
            FLASH_ATTENTION_TRITON_AMD_ENABLE=FALSE \
            FLASH_ATTENTION_SKIP_CUDA_BUILD=FALSE \
            "$script_dir/build-wheel.sh" --arch "$arch" "$src" "$out"
        wheels=("$out"/flash_attn-*.whl)
        [ -f "${wheels[0]}" ] || die "build-wheel.sh made no flash_attn wheel in $out"
        [ "${#wheels[@]}" -eq 1 ] || die "more than one flash_attn wheel in $out"
        # The whole listing is read (with pipefail, grep -q could fail a listing it matched).
        python -m zipfile -l "${wheels[0]}" | grep -E '^flash_attn_2_cuda[^/ ]*\.so ' >/dev/null \
            || die "${wheels[0]##*/} has no flash_attn_2_cuda extension"
        echo "build-flash-attn: ${wheels[0]##*/} for $arch"
        ;;
    *) die "unknown command '$command' ($usage)" ;;
esac
