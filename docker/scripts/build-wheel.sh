#!/usr/bin/env bash
# shellcheck source-path=SCRIPTDIR
# Build the wheel of a Python project with native ROCm code for the image's
# GPU architecture.
#
# Usage: build-wheel.sh --arch PYTORCH_ROCM_ARCH SRC_DIR OUT_DIR
#                       [--isolated] [--requirements FILE]...
#                       [--config-setting KEY=VALUE]...
#
# By default the build runs without PEP 517 isolation: extensions must be
# compiled against the torch in this image (our ROCm build), not against
# whatever torch pip would download into an isolated build environment. The
# project's [build-system] requires, minus the packages we build ourselves,
# and any --requirements files (relative to SRC_DIR) are installed first.
# --isolated is for projects that neither build against torch nor list it in
# their build requirements (cupy).
# --config-setting is passed to the PEP 517 backend (pip --config-settings).
#
# Project-specific knobs (GPU_ARCHS, BUILD_VERSION, ...) are set by the
# calling RUN line, where the reader of the Dockerfile sees them.
set -euo pipefail

die() { echo "build-wheel: $*" >&2; exit 1; }

usage="usage: build-wheel.sh --arch ARCH SRC_DIR OUT_DIR [--isolated] [--requirements FILE]... [--config-setting KEY=VALUE]..."
[ "$#" -ge 4 ] && [ "$1" = --arch ] && [ -n "$2" ] || die "$usage"
export PYTORCH_ROCM_ARCH=$2
src=$(cd "$3" && pwd)
out=$4
shift 4
isolated=0
requirements=()
config_settings=()
while [ "$#" -gt 0 ]; do
    case "$1" in
        --isolated) isolated=1 ;;
        --requirements)
            [ "$#" -ge 2 ] || die "--requirements needs a file"
            requirements+=("$src/$2")
            shift
            ;;
        --config-setting)
            [ "$#" -ge 2 ] || die "--config-setting needs KEY=VALUE"
            config_settings+=(--config-settings "$2")
            shift
            ;;
        *) die "unknown option '$1'" ;;
    esac
    shift
done

script_dir=$(cd "$(dirname "$0")" && pwd)
cd "$src"
# shellcheck source=build-env.sh
. "$script_dir/build-env.sh"

constraints=$(mktemp)
build_requires=$(mktemp)
trap 'rm -f "$constraints" "$build_requires"' EXIT
python "$script_dir/own-packages.py" --build-tools >"$constraints"

pip_wheel=(python -m pip wheel --no-deps --wheel-dir "$out" --verbose "${config_settings[@]}")
if [ "$isolated" -eq 1 ]; then
    [ "${#requirements[@]}" -eq 0 ] || die "--requirements makes no sense with --isolated"
else
    if [ -f pyproject.toml ]; then
        python "$script_dir/own-packages.py" --build-requires pyproject.toml >"$build_requires"
        requirements+=("$build_requires")
    fi
    for file in "${requirements[@]}"; do
        [ -f "$file" ] || die "no requirements file $file"
        python -m pip install --constraint "$constraints" --requirement "$file"
    done
    pip_wheel+=(--no-build-isolation)
fi

mkdir -p "$out"
before=$(find "$out" -name '*.whl' | wc -l)
"${pip_wheel[@]}" .
after=$(find "$out" -name '*.whl' | wc -l)
[ "$after" -gt "$before" ] || die "pip produced no wheel for $src"
if [ "${CMAKE_CXX_COMPILER_LAUNCHER:-}" = sccache ]; then
    sccache --show-stats || true
elif [ "${CMAKE_CXX_COMPILER_LAUNCHER:-}" = ccache ]; then
    ccache --show-stats || true
fi
ls -l "$out"
