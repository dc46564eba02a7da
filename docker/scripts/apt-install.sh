#!/bin/sh
# Install Debian packages for an image build.
#
# Usage: apt-install.sh PACKAGE...
#
# A PACKAGE of the form 'a|b' installs the first of a, b that the release
# has: Ubuntu renames libraries between releases (librdmacm1 became
# librdmacm1t64), and a ROCm bump can move the family to a new release.
#
# The Dockerfiles mount /var/lib/apt/lists and /var/cache/apt as BuildKit
# cache mounts around every call, so neither the package lists nor the
# downloaded archives end up in a layer and nothing needs cleaning here.
# Recommends stay off: they are what turns a runtime image into a dev image.
set -eu

if [ "$#" -eq 0 ]; then
    echo "apt-install.sh: no packages given" >&2
    exit 2
fi

export DEBIAN_FRONTEND=noninteractive
# A flaky mirror should cost a retry, not a multi-hour rebuild.
apt-get -o Acquire::Retries=5 update -q

has_candidate() {
    candidate=$(apt-cache policy "$1" 2>/dev/null | awk '/Candidate:/ {print $2}')
    [ -n "$candidate" ] && [ "$candidate" != "(none)" ]
}

packages=""
for spec in "$@"; do
    # Plain names go to apt as they are (it resolves virtual packages).
    case "$spec" in
        *"|"*) ;;
        *) packages="$packages $spec"; continue ;;
    esac
    chosen=""
    rest=$spec
    while [ -n "$rest" ]; do
        name=${rest%%|*}
        if [ "$name" = "$rest" ]; then rest=""; else rest=${rest#*|}; fi
        if has_candidate "$name"; then
            chosen=$name
            break
        fi
    done
    if [ -z "$chosen" ]; then
        echo "apt-install.sh: none of '$spec' is available in this release" >&2
        exit 1
    fi
    packages="$packages $chosen"
done

# Word splitting of $packages is intended: Debian package names hold no spaces.
# shellcheck disable=SC2086
apt-get -o Acquire::Retries=5 install -y -q --no-install-recommends $packages
