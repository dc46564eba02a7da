#!/usr/bin/env bash
# Install wheels built by this family, with their dependencies from PyPI,
# into the active Python environment.
#
# Usage: install-wheels.sh WHEEL_OR_DIR...
#
# Directories stand for every *.whl in them. All wheels go to one pip call,
# so dependencies between them (vllm -> triton) resolve to the local files;
# the packages of ours that are already installed stay pinned (see
# own-packages.py). A wheel that wants a different torch than the image has
# fails here, loudly, instead of at import time on a GPU host.
set -euo pipefail

die() { echo "install-wheels: $*" >&2; exit 1; }

script_dir=$(cd "$(dirname "$0")" && pwd)
wheels=()
for arg in "$@"; do
    if [ -d "$arg" ]; then
        for wheel in "$arg"/*.whl; do
            [ -e "$wheel" ] || die "no wheels in $arg"
            wheels+=("$wheel")
        done
    elif [ -f "$arg" ]; then
        wheels+=("$arg")
    else
        die "no such wheel or directory: $arg"
    fi
done
[ "${#wheels[@]}" -gt 0 ] || die "usage: install-wheels.sh WHEEL_OR_DIR..."

constraints=$(mktemp)
trap 'rm -f "$constraints"' EXIT
python "$script_dir/own-packages.py" >"$constraints"

python -m pip install --constraint "$constraints" "${wheels[@]}"
python -m pip check || die "installed packages have conflicting requirements"
printf 'install-wheels: installed %s\n' "${wheels[@]##*/}"
