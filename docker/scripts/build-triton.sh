#!/usr/bin/env bash
# shellcheck source-path=SCRIPTDIR
# Build the triton wheel from a source checkout.
#
# Usage: build-triton.sh --version TRITON_VERSION SRC_DIR OUT_DIR
#
# One wheel serves every GPU: triton compiles kernels just in time through
# its bundled LLVM, so nothing here depends on PYTORCH_ROCM_ARCH. Triton
# downloads its pinned LLVM build on first use; /root/.triton is a BuildKit
# cache mount, so that happens once per build host rather than per build.
#
# AMD only, as far as Triton allows: its setup.py always builds the NVIDIA
# backend next to the AMD one (`BackendInstaller.copy(["nvidia", "amd"])`;
# the core library links NVIDIA's dialects, so it cannot be dropped), but the
# CUDA tools it would download for it (ptxas, cuobjdump, nvdisasm, the CUDA
# and CUPTI headers and libraries, from NVIDIA's servers) are switched off:
# each TRITON_*_PATH override names an empty directory, and Proton, the
# profiler that needs CUPTI, is not built. The wheel keeps the backend's
# Python package (backends are found by entry point), without CUDA binaries.
#
# The build runs without isolation, on the image's packaging tools: the
# project's [build-system] requires are installed with our pins
# (own-packages.py --build-tools), so a Triton that wants another setuptools
# fails here instead of building with whatever PyPI has that day.
set -euo pipefail

die() { echo "build-triton: $*" >&2; exit 1; }

[ "$#" -eq 4 ] && [ "$1" = --version ] && [ -n "$2" ] \
    || die "usage: build-triton.sh --version TRITON_VERSION SRC_DIR OUT_DIR"
version=$2
src=$3
out=$(mkdir -p "$4" && cd "$4" && pwd)
script_dir=$(cd "$(dirname "$0")" && pwd)

# setup.py moved from python/ to the repository root in triton 3.4.
if [ -f "$src/setup.py" ]; then
    cd "$src"
elif [ -f "$src/python/setup.py" ]; then
    cd "$src/python"
else
    die "no setup.py in $src or $src/python"
fi

cores=$(nproc)
mem_jobs=$(awk '/^MemTotal:/ {print int($2 / (3 * 1024 * 1024))}' /proc/meminfo)
jobs=$((mem_jobs < cores ? mem_jobs : cores))
export MAX_JOBS=$((jobs > 0 ? jobs : 1))
# The build host's compiler cache (build-env.sh, compiler cache only: this
# build has no GPU arch): ccache in the cache mount, or with it the
# ccache-http server of the host's settings; the image has no sccache, so an
# sccache backend leaves triton on the local ccache. Triton's setup.py puts
# ccache in front of the compilers with TRITON_BUILD_WITH_CCACHE.
# shellcheck source=build-env.sh
ROCM_PYTORCH_BUILD_ENV=compiler-cache . "$script_dir/build-env.sh"
if [ "${CMAKE_CXX_COMPILER_LAUNCHER:-}" = ccache ]; then
    export TRITON_BUILD_WITH_CCACHE=true
fi

nvidia_tools=$(mktemp -d)
constraints=$(mktemp)
build_requires=$(mktemp)
trap 'rm -rf "$nvidia_tools" "$constraints" "$build_requires"' EXIT
for tool in PTXAS PTXAS_BLACKWELL CUOBJDUMP NVDISASM CUDACRT CUDART \
    CUPTI_INCLUDE CUPTI_LIB CUPTI_LIB_BLACKWELL; do
    export "TRITON_${tool}_PATH=$nvidia_tools"
done
export TRITON_BUILD_PROTON=OFF

python "$script_dir/own-packages.py" --build-tools >"$constraints"
if [ -f pyproject.toml ]; then
    python "$script_dir/own-packages.py" --build-requires pyproject.toml >"$build_requires"
    python -m pip install --constraint "$constraints" --requirement "$build_requires"
fi

mkdir -p "$out"
python -m pip wheel --no-build-isolation --no-deps --wheel-dir "$out" --verbose .

shopt -s nullglob
wheels=("$out"/triton-"$version"*.whl)
[ "${#wheels[@]}" -eq 1 ] || die "expected one triton-$version wheel in $out, found: $(ls "$out")"
echo "build-triton: ${wheels[0]##*/}"
# what the compiler cache did, the last line (build-env.sh)
rocm_pytorch_cc_stats
