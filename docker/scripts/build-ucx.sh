#!/usr/bin/env bash
# Build UCX with ROCm support, for NIXL's UCX backend.
#
# Usage: build-ucx.sh --ref UCX_REF PREFIX
#
# Ubuntu's libucx is built without ROCm, so it cannot move GPU memory; this
# one can (rocm_copy / rocm_ipc transports). It is installed to PREFIX only
# inside the nixl build stage: repair-wheel.py then ships the libraries inside
# the nixl wheel, which is all the nixl-wheel image may contain.
set -euo pipefail

die() { echo "build-ucx: $*" >&2; exit 1; }

[ "$#" -eq 3 ] && [ "$1" = --ref ] && [ -n "$2" ] || die "usage: build-ucx.sh --ref UCX_REF PREFIX"
ref=$2
prefix=$3
script_dir=$(cd "$(dirname "$0")" && pwd)

src=$(mktemp -d)/ucx
"$script_dir/fetch-source.sh" https://github.com/openucx/ucx.git "$ref" "$src"
cd "$src"
./autogen.sh
# Verbs and rdmacm cover InfiniBand/RoCE NICs; the NIC drivers themselves
# come from the host.
./configure --prefix="$prefix" \
    --enable-shared --disable-static --disable-doxygen-doc \
    --enable-optimizations --enable-mt --enable-cma \
    --with-rocm="${ROCM_PATH:-/opt/rocm}" \
    --with-verbs --with-rdmacm \
    --without-cuda --without-go --without-java
make -j"$(nproc)"
make install-strip
"$prefix/bin/ucx_info" -v
