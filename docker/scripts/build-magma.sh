#!/usr/bin/env bash
# shellcheck source-path=SCRIPTDIR
# Build MAGMA (LAPACK on the GPU) for ROCm and one GPU architecture (or the
# `;`-separated archs of a family), as PyTorch's CI builds the MAGMA its ROCm
# wheels link.
#
# Usage: build-magma.sh --arch PYTORCH_ROCM_ARCH (--pytorch-src DIR | --source DIR) PREFIX
#        build-magma.sh --help
#
# PREFIX receives lib/libmagma.so and include/ (PyTorch finds them through
# MAGMA_HOME, cmake/Modules/FindMAGMA.cmake; build-pytorch.sh --magma).
# With --pytorch-src the MAGMA source is fetched at the pin of that PyTorch
# tree's CI (.ci/magma-rocm/build_magma.sh: the repository it clones and
# MAGMA_VERSION), so MAGMA moves with PyTorch as AOTriton does
# (build-aotriton.sh); only that file of the tree is read. --source builds a
# copy of an existing checkout instead (offline rebuilds).
#
# What PyTorch's CI does (.ci/magma-rocm/build_magma.sh and
# .ci/magma-rocm/package_files/build.sh), and what this does too:
#   - source: the pin of build_magma.sh (for PyTorch 2.15:
#     https://github.com/k-artem/magma.git at a68b9257, the branch of
#     icl-utk-edu/magma pull request 77);
#   - make.inc from make.inc-examples/make.inc.hip-gcc-mkl, with Intel's MKL
#     linked statically (mkl_gf_lp64, mkl_gnu_thread, mkl_core) from MKLROOT,
#     hipBLAS and hipSPARSE, `--offload-arch=<arch>` for each arch of
#     PYTORCH_ROCM_ARCH and `--gpu-max-threads-per-block=256` in DEVCCFLAGS,
#     FOPENMP commented out (hipcc with -fopenmp misses isnan() in device
#     code);
#   - `make -f make.gen.hipMAGMA`, then `make lib/libmagma.so`, then lib and
#     include copied to the install directory.
# The compiler cache (build-env.sh): that make.inc has CC, CXX and DEVCC
# hipcc, so every compile, the host-only C and C++ too, goes through hipcc,
# whose clang rocm_pytorch_cc_compilers puts behind the launcher
# (HIP_CLANG_PATH); with FORT empty (below) there is no Fortran compile. The
# source is always at the same path, so the compiles hash alike from one
# build to the next.
# MKL is the static MKL build-pytorch.sh links (mkl-static/mkl-include from
# PyPI at the same pin, MKL_VERSION); it ends up inside libmagma.so.
#
# Where this differs, and why:
#   - FORT is empty: MAGMA then leaves out its Fortran interface, which
#     PyTorch never calls (it uses the C API), and libmagma.so needs no
#     libgfortran, which the images PyTorch installs into do not have;
#   - libmagma.so gets the SONAME libmagma.so: MAGMA links it without one,
#     and torch would then record the absolute build path of the library
#     as a dependency (PyTorch's CI rewrites that with patchelf afterwards,
#     .ci/manywheel/build_common.sh); build-pytorch.sh ships the library
#     inside the wheel, next to libtorch_hip.so;
#   - MAGMA's own tester (testing_dgemm) is not built; instead `ldd -r`
#     must find every symbol of libmagma.so (an MKL that did not link fails
#     here, not at `import torch`).
set -euo pipefail

die() { echo "build-magma: $*" >&2; exit 1; }

usage="usage: build-magma.sh --arch PYTORCH_ROCM_ARCH (--pytorch-src DIR | --source DIR) PREFIX"
# build-pytorch.sh's pin (PyTorch CI's, .ci/docker/common/install_mkl.sh)
MKL_VERSION=${MKL_VERSION:-2025.3.0}

arch="" source_dir="" pytorch_src=""
while [ "$#" -gt 0 ]; do
    case "$1" in
        -h|--help) echo "$usage"; exit 0 ;;
        --arch) [ "$#" -ge 2 ] || die "$usage"; arch=$2; shift 2 ;;
        --source) [ "$#" -ge 2 ] || die "$usage"; source_dir=$2; shift 2 ;;
        --pytorch-src) [ "$#" -ge 2 ] || die "$usage"; pytorch_src=$2; shift 2 ;;
        -*) die "unknown option '$1'; $usage" ;;
        *) break ;;
    esac
done
[ "$#" -eq 1 ] && [ -n "$arch" ] || die "$usage"
prefix=$1
script_dir=$(cd "$(dirname "$0")" && pwd)
# One arch, or several `;`-separated as PYTORCH_ROCM_ARCH (an arch family),
# which build-env.sh checks.
export PYTORCH_ROCM_ARCH=$arch
# shellcheck source=build-env.sh
. "$script_dir/build-env.sh"
IFS=';' read -r -a archs <<<"$arch"
[ -n "$source_dir" ] || [ -n "$pytorch_src" ] || die "$usage"
if [ -n "$source_dir" ]; then
    [ -f "$source_dir/make.inc-examples/make.inc.hip-gcc-mkl" ] \
        || die "$source_dir is not a MAGMA checkout (no make.inc-examples/make.inc.hip-gcc-mkl)"
else
    pin_file=$pytorch_src/.ci/magma-rocm/build_magma.sh
    [ -f "$pin_file" ] || die "$pytorch_src has no .ci/magma-rocm/build_magma.sh (not a PyTorch tree?)"
    MAGMA_COMMIT=$(sed -n 's/^MAGMA_VERSION=\([0-9a-f]\{40\}\)$/\1/p' "$pin_file" || true)
    [ "$(printf '%s' "$MAGMA_COMMIT" | grep -c .)" -eq 1 ] \
        || die "no single MAGMA_VERSION=<40-hex commit> line in $pin_file"
    MAGMA_REPO=$(grep -oE 'git clone https://[^ ]+\.git' "$pin_file" | cut -d' ' -f3 | sort -u || true)
    [ "$(printf '%s' "$MAGMA_REPO" | grep -c .)" -eq 1 ] \
        || die "no single 'git clone https://....git' of MAGMA in $pin_file"
fi
export ROCM_PATH=${ROCM_PATH:-/opt/rocm}

work=${TMPDIR:-/tmp}/build-magma
rm -rf "$work"
mkdir -p "$work"
trap 'rm -rf "$work"' EXIT
rocm_pytorch_cc_compilers "$work/compilers"
src=$work/magma
if [ -n "$source_dir" ]; then
    cp -a "$source_dir" "$src"
else
    "$script_dir/fetch-source.sh" "$MAGMA_REPO" "$MAGMA_COMMIT" "$src"
fi

constraints=$work/constraints.txt
python "$script_dir/own-packages.py" --build-tools >"$constraints"
python -m pip install --constraint "$constraints" "mkl-static==$MKL_VERSION" "mkl-include==$MKL_VERSION"
mklroot=${VIRTUAL_ENV:-/opt/venv}
for lib in mkl_gf_lp64 mkl_gnu_thread mkl_core; do
    [ -f "$mklroot/lib/lib$lib.a" ] || die "no $mklroot/lib/lib$lib.a after installing mkl-static==$MKL_VERSION"
done

cd "$src"
cp make.inc-examples/make.inc.hip-gcc-mkl make.inc
cat >>make.inc <<EOF
# build-magma.sh, after PyTorch's .ci/magma-rocm/package_files/build.sh
LIBDIR += -L\$(MKLROOT)/lib
LIB = -Wl,--start-group -lmkl_gf_lp64 -lmkl_gnu_thread -lmkl_core -Wl,--end-group -lpthread -lstdc++ -lm -lgomp -lhipblas -lhipsparse
LIB += -Wl,--enable-new-dtags -Wl,--rpath,$ROCM_PATH/lib -ldl
LDFLAGS += -Wl,-soname,libmagma.so
DEVCCFLAGS += --gpu-max-threads-per-block=256
EOF
for a in "${archs[@]}"; do
    echo "DEVCCFLAGS += --offload-arch=$a" >>make.inc
done
sed -i 's/^FOPENMP/#FOPENMP/g' make.inc

make -f make.gen.hipMAGMA -j "$MAX_JOBS"
LANG=C.UTF-8 make lib/libmagma.so -j "$MAX_JOBS" MKLROOT="$mklroot" FORT=

[ -f lib/libmagma.so ] || die "make produced no lib/libmagma.so"
[ -f include/magma.h ] || die "make produced no include/magma.h"
# (in a variable: `readelf | grep -q` can fail under pipefail)
dynamic=$(readelf -d lib/libmagma.so)
grep -q 'SONAME.*\[libmagma\.so\]' <<<"$dynamic" || die "lib/libmagma.so has no SONAME libmagma.so"
if grep -q 'NEEDED.*libgfortran' <<<"$dynamic"; then
    die "lib/libmagma.so needs libgfortran (FORT was not empty)"
fi
undefined=$(ldd -r lib/libmagma.so 2>&1 | grep -E 'undefined symbol|not found' || true)
[ -z "$undefined" ] || die "lib/libmagma.so does not link completely:
$undefined"

mkdir -p "$prefix"
cp -R lib include "$prefix"/
echo "build-magma: ${MAGMA_REPO:-$source_dir} ${MAGMA_COMMIT:-} for $arch (MKL $MKL_VERSION) -> $prefix"
# what the compiler cache did, the last line (build-env.sh)
rocm_pytorch_cc_stats
