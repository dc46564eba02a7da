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

missing=0
for name in "$@"; do
    dir=$(python -c 'import importlib.util, sys
spec = importlib.util.find_spec(sys.argv[1])
sys.exit(f"check-shared-libs: package {sys.argv[1]} is not installed") if spec is None else None
print(list(spec.submodule_search_locations or [])[0])' "$name")
    while IFS= read -r -d '' lib; do
        if ldd "$lib" 2>/dev/null | grep -q 'not found'; then
            echo "check-shared-libs: $lib:" >&2
            ldd "$lib" | grep 'not found' >&2
            missing=1
        fi
    done < <(find "$dir" -name '*.so*' -type f -print0)
done
[ "$missing" -eq 0 ] || exit 1
echo "check-shared-libs: all libraries of $* resolve"
