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
# The non-isolated build runs through the PEP 517 frontend `build` with
# --skip-dependency-check, which calls the backend's build_wheel hook and
# nothing else, so a setup.py runs once, as in `setup.py bdist_wheel`. pip
# would first call prepare_metadata_for_build_wheel, which with setuptools
# runs setup.py a first time: aiter compiles its PREBUILD_KERNELS kernels at
# the top level of setup.py, so pip compiled all of them twice.
# --isolated is for projects that neither build against torch nor list it in
# their build requirements (cupy); pip builds those in an isolated
# environment from the index pip.conf names.
# --config-setting is passed to the PEP 517 backend; a key given more than
# once reaches it as a list (meson-python's setup-args).
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
            config_settings+=("$2")
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
compilers=$(mktemp -d)
trap 'rm -rf "$constraints" "$build_requires" "$compilers"' EXIT
# The C and C++ compiles of setuptools, torch.utils.cpp_extension (its .cpp:
# $CXX) and meson go through the compiler cache as CC and CXX
# (build-env.sh, rocm_pytorch_cc_compilers); their HIP compiles go through
# hipcc, whose clang it puts behind the launcher too (HIP_CLANG_PATH). Not
# when the build runs CMake, which has the
# launcher variables and would take such a CC for the compiler: vLLM's
# setup.py runs CMake (its [build-system] requires cmake) and passes
# CMAKE_*_COMPILER_LAUNCHER itself.
runs_cmake=0
python - <<'PY' || runs_cmake=$?
import re, sys, tomllib
try:
    with open("pyproject.toml", "rb") as f:
        requires = tomllib.load(f).get("build-system", {}).get("requires", [])
except FileNotFoundError:
    requires = []
sys.exit(3 if any(re.match(r"\s*cmake\s*([^\w.-]|$)", r, re.I) for r in requires) else 0)
PY
case "$runs_cmake" in
    0) rocm_pytorch_cc_compilers "$compilers" ;;
    3) echo "build-wheel: the build runs CMake ([build-system] requires cmake): CC and CXX stay as they are" ;;
    *) die "cannot read the [build-system] requires of $src/pyproject.toml" ;;
esac
python "$script_dir/own-packages.py" --build-tools >"$constraints"

if [ "$isolated" -eq 1 ]; then
    [ "${#requirements[@]}" -eq 0 ] || die "--requirements makes no sense with --isolated"
    build=(python -m pip wheel --no-deps --wheel-dir "$out" --verbose)
    for setting in "${config_settings[@]}"; do build+=(--config-settings "$setting"); done
else
    if [ -f pyproject.toml ]; then
        python "$script_dir/own-packages.py" --build-requires pyproject.toml >"$build_requires"
        requirements+=("$build_requires")
    fi
    for file in "${requirements[@]}"; do
        [ -f "$file" ] || die "no requirements file $file"
        python -m pip install --constraint "$constraints" --requirement "$file"
    done
    # build_wheel only: no prepare_metadata_for_build_wheel (pip's first
    # setup.py run) and, with --skip-dependency-check, no
    # get_requires_for_build_wheel (the requirements are installed above).
    build=(python -m build --wheel --no-isolation --skip-dependency-check --outdir "$out")
    # The = form: a value starting with - is not taken for an option of build.
    for setting in "${config_settings[@]}"; do build+=("--config-setting=$setting"); done
fi

mkdir -p "$out"
before=$(find "$out" -name '*.whl' | wc -l)
"${build[@]}" .
after=$(find "$out" -name '*.whl' | wc -l)
[ "$after" -gt "$before" ] || die "${build[2]} produced no wheel for $src"
ls -l "$out"
# what the compiler cache did, the last line (build-env.sh)
rocm_pytorch_cc_stats
