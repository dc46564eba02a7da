#!/usr/bin/env bash
# Build UCX with ROCm support, for NIXL's UCX backend.
#
# Usage: build-ucx.sh --ref UCX_REF PREFIX
#
# Ubuntu's libucx is built without ROCm, so it cannot move GPU memory; this
# one can (rocm_copy / rocm_ipc transports). It is installed to PREFIX only
# inside the nixl build stage: repair-wheel.py then ships the libraries inside
# the nixl wheel, which is all the nixl-wheel image may contain.
#
# Its C, C++ and HIP compiles go through the build host's compiler cache
# (build-env.sh; the RUN mounts the compiler-cache secrets and the ccache
# cache mount): autotools takes the compilers from CC and CXX, which
# rocm_pytorch_cc_compilers points at the launcher, and libtool runs hipcc for
# the .hip sources (its clang behind the launcher too: HIP_CLANG_PATH, by
# rocm_pytorch_cc_compilers). The source is always at the same
# path, so the compiles hash alike from one build to the next. It ends with
# build-env.sh's `compiler cache:` line.
# shellcheck source-path=SCRIPTDIR
set -euo pipefail

die() { echo "build-ucx: $*" >&2; exit 1; }

[ "$#" -eq 3 ] && [ "$1" = --ref ] && [ -n "$2" ] || die "usage: build-ucx.sh --ref UCX_REF PREFIX"
ref=$2
prefix=$3
script_dir=$(cd "$(dirname "$0")" && pwd)

work=${TMPDIR:-/tmp}/build-ucx
rm -rf "$work"
src=$work/ucx
"$script_dir/fetch-source.sh" https://github.com/openucx/ucx.git "$ref" "$src"
cd "$src"
# the compiler cache only: UCX's build takes no GPU arch (CCACHE_BASEDIR: here)
# shellcheck source=build-env.sh
ROCM_PYTORCH_BUILD_ENV=compiler-cache . "$script_dir/build-env.sh"
rocm_pytorch_cc_compilers "$work/compilers"
./autogen.sh
# contrib/configure-release-mt, as NIXL's own ROCm CI builds UCX
# (.ci/dockerfiles/Dockerfile.rocm, stage ucx-build): a release build
# (no logging, debug, assertions or parameter checks) with threads. Verbs,
# rdmacm and dm cover InfiniBand/RoCE NICs; the NIC drivers themselves come
# from the host.
./contrib/configure-release-mt --prefix="$prefix" \
    --enable-shared --disable-static --disable-doxygen-doc \
    --enable-optimizations --enable-cma --enable-devel-headers \
    --with-rocm="${ROCM_PATH:-/opt/rocm}" \
    --with-verbs --with-rdmacm --with-dm \
    --without-cuda --without-go --without-java
make -j"$(nproc)"
make install-strip
"$prefix/bin/ucx_info" -v
# UCX's configure only warns when it does not find ROCm (config/m4/rocm.m4),
# and a UCX without its ROCm transports cannot move GPU memory: refuse it.
for lib in lib/ucx/libuct_rocm.so lib/ucx/libucm_rocm.so; do
    [ -e "$prefix/$lib" ] || die "$prefix/$lib is missing: UCX was configured without ROCm (is ${ROCM_PATH:-/opt/rocm} a ROCm tree?)"
done
# what the compiler cache did, the last line (build-env.sh)
rocm_pytorch_cc_stats
