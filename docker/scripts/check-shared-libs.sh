#!/usr/bin/env bash
# Fail when a shared library of an installed Python package cannot be loaded
# for want of a dependency.
#
# Usage: check-shared-libs.sh IMPORT_NAME...
#
# Wheels built in the fat build images link against libraries that the slim
# serving images may lack (libjpeg for torchvision, ...). ldd finds that at
# build time; otherwise it surfaces as an ImportError on a GPU host.
set -euo pipefail

[ "$#" -gt 0 ] || { echo "usage: check-shared-libs.sh IMPORT_NAME..." >&2; exit 2; }

# Every shared library the distributions that install IMPORT_NAME own, not
# only those under its package directory: meson-python wheels keep theirs in
# .<package>.mesonpy.libs (libnixl and its plugins), and plugins are dlopen()ed.
libraries() {
    python - "$1" <<'PY'
import importlib.metadata
import re
import sys

name = sys.argv[1]
dists = importlib.metadata.packages_distributions().get(name)
if not dists:
    sys.exit(f"check-shared-libs: package {name} is not installed")
for dist in sorted(set(dists)):
    for f in importlib.metadata.distribution(dist).files or []:
        if re.search(r"\.so(\.[0-9]+)*$", f.name):
            print(f.locate())
PY
}

missing=0
for name in "$@"; do
    libs=$(libraries "$name")
    while IFS= read -r lib; do
        [ -n "$lib" ] || continue
        if ldd "$lib" 2>/dev/null | grep -q 'not found'; then
            echo "check-shared-libs: $lib:" >&2
            ldd "$lib" | grep 'not found' >&2
            missing=1
        fi
    done <<<"$libs"
done
[ "$missing" -eq 0 ] || exit 1
echo "check-shared-libs: all libraries of $* resolve"
