#!/usr/bin/env bash
# Build the triton wheel from a source checkout.
#
# Usage: build-triton.sh --version TRITON_VERSION SRC_DIR OUT_DIR
#
# One wheel serves every GPU: triton compiles kernels just in time through
# its bundled LLVM, so nothing here depends on PYTORCH_ROCM_ARCH. Triton
# downloads its pinned LLVM build on first use; /root/.triton is a BuildKit
# cache mount, so that happens once per build host rather than per build.
set -euo pipefail

die() { echo "build-triton: $*" >&2; exit 1; }

[ "$#" -eq 4 ] && [ "$1" = --version ] && [ -n "$2" ] \
    || die "usage: build-triton.sh --version TRITON_VERSION SRC_DIR OUT_DIR"
version=$2
src=$3
out=$4

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
export TRITON_BUILD_WITH_CCACHE=true
export CCACHE_DIR=/root/.cache/ccache

mkdir -p "$out"
python -m pip wheel --no-deps --wheel-dir "$out" --verbose .

shopt -s nullglob
wheels=("$out"/triton-"$version"*.whl)
[ "${#wheels[@]}" -eq 1 ] || die "expected one triton-$version wheel in $out, found: $(ls "$out")"
echo "build-triton: ${wheels[0]##*/}"
