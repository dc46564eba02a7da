#!/usr/bin/env bash
# Install CPython VERSION and make a virtual environment with it.
#
# Usage: install-python.sh VERSION VENV_DIR [--dev|--headers]
#
# --dev adds the headers and the packaging tools C extensions need (base,
# triton); --headers the headers only (runtime images: Triton and
# torch.compile compile C against Python.h at run time); without either,
# only the interpreter is installed.
#
# Ubuntu's own python3.X packages are used when the release has VERSION
# (26.04 has 3.14). When it does not, the interpreter comes from
# python-build-standalone through uv, which also ships the headers, so a
# Python bump needs no other change here. Either way the venv is the default
# interpreter of the image (the Dockerfiles put VENV_DIR/bin first on PATH),
# and the system python3 that ROCm's tools use is left alone.
set -euo pipefail

die() { echo "install-python: $*" >&2; exit 1; }

[ "$#" -ge 2 ] && [ "$#" -le 3 ] || die "usage: install-python.sh VERSION VENV_DIR [--dev|--headers]"
version=$1
venv=$2
dev=${3:-}
[[ "$version" =~ ^3\.[0-9]+$ ]] || die "'$version' is not a Python version like 3.14"
case "$dev" in "" | --dev | --headers) ;; *) die "unknown option '$dev' (--dev or --headers)" ;; esac

script_dir=$(cd "$(dirname "$0")" && pwd)
apt_install() { "$script_dir/apt-install.sh" "$@"; }

# Through apt-install.sh, so the mirror settings apply (docs/mirrors.md).
has_candidate() { "$script_dir/apt-install.sh" --available "$1"; }

apt_install ca-certificates
if has_candidate "python${version}-venv"; then
    packages=("python${version}" "python${version}-venv")
    [ -z "$dev" ] || packages+=("python${version}-dev")  # --dev and --headers
    apt_install "${packages[@]}"
    python=/usr/bin/python${version}
else
    echo "install-python: Ubuntu has no python${version}; using python-build-standalone via uv" >&2
    apt_install python3-venv
    bootstrap=$(mktemp -d)
    python3 -m venv "$bootstrap"
    "$bootstrap/bin/pip" install --quiet "uv==0.13.8"
    UV_PYTHON_INSTALL_DIR=/opt/python "$bootstrap/bin/uv" python install "$version"
    python=$(UV_PYTHON_INSTALL_DIR=/opt/python "$bootstrap/bin/uv" python find --no-project "$version")
    rm -rf "$bootstrap"
fi

"$python" -m venv "$venv"
"$venv/bin/python" -m pip install --upgrade pip
if [ "$dev" = --dev ]; then
    "$venv/bin/python" -m pip install -r "$script_dir/build-tools.txt"
fi
if [ -n "$dev" ]; then  # what Triton's build.py compiles against
    include=$("$venv/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["include"])')
    [ -f "$include/Python.h" ] || die "no Python.h in $include after installing the headers"
fi

actual=$("$venv/bin/python" -c 'import sys; print("%d.%d" % sys.version_info[:2])')
[ "$actual" = "$version" ] || die "venv runs Python $actual, expected $version"
echo "install-python: $venv runs $("$venv/bin/python" --version)"
