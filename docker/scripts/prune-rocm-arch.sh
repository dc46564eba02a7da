#!/usr/bin/env bash
# Keep the ROCm kernel libraries of the requested GPU architecture(s) only.
#
# Usage: prune-rocm-arch.sh [--tree-only] ARCH[;ARCH...] [ROCM_ROOT]
#
# --tree-only prunes ROCM_ROOT and stops: it leaves the system's loader
# configuration and /etc/rocm-pytorch alone (for a ROCm tree that is not the
# image's own, e.g. a copy or a test fixture).
#
# rocBLAS, hipBLASLt, hipSPARSELt, MIOpen and friends ship precompiled kernels
# (code objects, Tensile libraries, MIOpen databases) for every GPU ROCm
# supports; together they are most of the size of a ROCm image. An image built
# for one card needs one card's kernels, so every kernel file that names only
# other architectures is deleted. Files that name no architecture, or a
# generic target covering the requested one (gfx9-4-generic, gfx11-generic,
# ...), stay.
#
# The deletion only saves space because Dockerfile.rocm-runtime copies the pruned
# tree into a fresh FROM-scratch stage; in a layer on top of the upstream
# image the files would still be shipped underneath.
set -euo pipefail

die() { echo "prune-rocm-arch: $*" >&2; exit 1; }

tree_only=0
if [ "${1:-}" = --tree-only ]; then
    tree_only=1
    shift
fi
[ "$#" -ge 1 ] && [ "$#" -le 2 ] || die "usage: prune-rocm-arch.sh [--tree-only] ARCH[;ARCH...] [ROCM_ROOT]"
IFS=';' read -r -a archs <<<"$1"
[ "${#archs[@]}" -gt 0 ] || die "no architecture given"
for arch in "${archs[@]}"; do
    [[ "$arch" =~ ^gfx[0-9a-f]+$ ]] || die "'$arch' is not a GPU architecture like gfx950"
done

rocm_root=$(readlink -f "${2:-/opt/rocm}") || die "no ROCm installation at ${2:-/opt/rocm}"
[ -d "$rocm_root" ] || die "no ROCm installation at $rocm_root"

# The generic ISA family that can run code built for a concrete target, as
# named in code object file names (LLVM AMDGPU "generic processor versions").
# Not every library ships generic code objects; matching them is cheap.
generic_targets() {
    case "$1" in
        gfx900 | gfx902 | gfx904 | gfx906 | gfx909 | gfx90c) echo gfx9-generic ;;
        gfx940 | gfx941 | gfx942 | gfx950) echo gfx9-4-generic ;;
        gfx101[0-3]) echo gfx10-1-generic ;;
        gfx103[0-6]) echo gfx10-3-generic ;;
        gfx110[0-3] | gfx115[0-3]) echo gfx11-generic ;;
        gfx120[0-1]) echo gfx12-generic ;;
        *) echo "" ;;
    esac
}

keep=()
for arch in "${archs[@]}"; do
    keep+=("$arch")
    generic=$(generic_targets "$arch")
    [ -z "$generic" ] || keep+=("$generic")
done

# A file is kept when one of the gfx tokens in its name is a kept target or
# starts with a requested arch: MIOpen appends the CU count (gfx942130.kdb,
# gfx1100_48.kdb) and xnack variants a feature suffix (gfx90a:xnack-).
wanted() {
    local name=$1 token k
    while read -r token; do
        for k in "${keep[@]}"; do
            [[ "$token" == "$k"* ]] && return 0
        done
    done < <(grep -oE 'gfx[0-9a-z]+(-[0-9]+)?(-generic)?' <<<"$name")
    return 1
}

# Where ROCm libraries keep per-architecture kernels: every `library`
# directory under lib/ (rocblas, hipblaslt, hipsparselt, ...) and MIOpen's
# kernel databases.
mapfile -t kernel_dirs < <(
    find "$rocm_root/lib" -type d -name library -prune -print 2>/dev/null
    find "$rocm_root/share/miopen" -mindepth 1 -maxdepth 1 -type d 2>/dev/null
)
[ "${#kernel_dirs[@]}" -gt 0 ] || die "no kernel library directories under $rocm_root; is this a ROCm image?"

before=$(du -sm "$rocm_root" | cut -f1)
deleted=0
rocblas_dirs=0 rocblas_kept=0
rocblas_names=()
for dir in "${kernel_dirs[@]}"; do
    kept_here=0
    seen_here=0
    in_rocblas=0
    case "${dir#"$rocm_root"}" in /lib/*rocblas/*) in_rocblas=1 ;; esac
    while IFS= read -r -d '' file; do
        base=${file##*/}
        seen_here=$((seen_here + 1))
        if wanted "$base"; then
            kept_here=$((kept_here + 1))
            [ "$in_rocblas" -eq 0 ] || rocblas_names+=("$base")
        else
            rm -f -- "$file"
            deleted=$((deleted + 1))
        fi
    done < <(find "$dir" -type f -name '*gfx*' -print0)
    # Some libraries do not support every card (hipSPARSELt is MI-series
    # only), so an empty directory is worth a warning, not a failure.
    if [ "$seen_here" -gt 0 ] && [ "$kept_here" -eq 0 ]; then
        echo "prune-rocm-arch: warning: $dir has no kernels for $1" >&2
    fi
    case "${dir#"$rocm_root"}" in
        /lib/*rocblas/*)
            rocblas_dirs=$((rocblas_dirs + 1))
            rocblas_kept=$((rocblas_kept + kept_here))
            ;;
    esac
done

# rocBLAS backs every BLAS call PyTorch makes: without its kernels the image
# is useless for this card, so that one is fatal. Its kernel directory is
# found as the pruning finds them, at any depth under lib/rocblas (AMD keeps
# it at lib/rocblas/library, Debian at lib/rocblas/<version>/library), and a
# rocBLAS with no kernel directory at all is refused too: a layout this
# script does not know must not yield an image without BLAS kernels.
if [ "$rocblas_dirs" -gt 0 ]; then
    [ "$rocblas_kept" -gt 0 ] || die "this ROCm ships no rocBLAS kernels for $1"
    # Several archs (an arch family): every one needs its own (or its generic
    # target's) rocBLAS kernels, or the image would fail on that card.
    if [ "${#archs[@]}" -gt 1 ]; then
        for arch in "${archs[@]}"; do
            keep=("$arch")
            generic=$(generic_targets "$arch")
            [ -z "$generic" ] || keep+=("$generic")
            found=0
            for name in "${rocblas_names[@]}"; do
                if wanted "$name"; then
                    found=1
                    break
                fi
            done
            [ "$found" -eq 1 ] || die "this ROCm ships no rocBLAS kernels for $arch (of $1)"
        done
    fi
elif compgen -G "$rocm_root/lib/librocblas.so*" >/dev/null; then
    die "$rocm_root/lib has librocblas but no rocBLAS kernel directory (lib/rocblas/.../library); cannot tell whether it has kernels for $1"
fi
[ "$tree_only" -eq 0 ] || {
    echo "prune-rocm-arch: kept kernels for $1 in $rocm_root; deleted $deleted files, ${before} MiB -> $(du -sm "$rocm_root" | cut -f1) MiB"
    exit 0
}

# The flattened image loses the upstream image's config, so make the ROCm
# libraries findable through ld.so.conf rather than LD_LIBRARY_PATH.
printf '%s\n' "$rocm_root/lib" >/etc/ld.so.conf.d/zz-rocm.conf
ldconfig

# Record the arch the image was pruned for: child builds check it, so a
# gfx1201 wheel can never be built on a gfx950 base by mistake.
mkdir -p /etc/rocm-pytorch
printf '%s\n' "$1" >/etc/rocm-pytorch/gpu-arch

after=$(du -sm "$rocm_root" | cut -f1)
echo "prune-rocm-arch: kept kernels for $1; deleted $deleted files, ${before} MiB -> ${after} MiB"
