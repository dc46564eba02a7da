#!/bin/sh
# Install Debian packages for an image build.
#
# Usage: apt-install.sh PACKAGE...
#        apt-install.sh --available PACKAGE   exit 0 when the release has PACKAGE
#        apt-install.sh --sources             print the apt sources the build uses
#
# A PACKAGE of the form 'a|b' installs the first of a, b that the release
# has: Ubuntu renames libraries between releases (librdmacm1 became
# librdmacm1t64), and a ROCm bump can move the family to a new release.
#
# The Dockerfiles mount /var/lib/apt/lists and /var/cache/apt as BuildKit
# cache mounts around every call, so neither the package lists nor the
# downloaded archives end up in a layer and nothing needs cleaning here.
# Recommends stay off: they are what turns a runtime image into a dev image.
#
# Mirrors (docs/mirrors.md): when the build gets the host's mirror settings
# (tools/mirrors), the BuildKit secret apt-mirror is mounted at
# /run/secrets/apt-mirror. Its `rewrite FROM TO` lines map the archives the
# image's own sources name to the mirrors that serve them (apt reads a copy of
# the sources, rewritten, in a temporary directory); its `option KEY=VALUE`
# lines are apt options. Credentials come from /root/.netrc (secret
# mirror-netrc) and a CA bundle from /run/secrets/mirror-ca (secret
# mirror-ca). None of it stays in the image. ROCM_PYTORCH_APT_DIR and
# ROCM_PYTORCH_SECRETS_DIR move /etc/apt and /run/secrets (tests).
set -eu

apt_dir=${ROCM_PYTORCH_APT_DIR:-/etc/apt}
secrets=${ROCM_PYTORCH_SECRETS_DIR:-/run/secrets}
mirror=$secrets/apt-mirror
netrc=/root/.netrc
ca=$secrets/mirror-ca

die() {
    echo "apt-install.sh: $*" >&2
    exit 1
}

if [ "$#" -eq 0 ]; then
    echo "apt-install.sh: no packages given" >&2
    exit 2
fi

export DEBIAN_FRONTEND=noninteractive

tmp=""
cleanup() { if [ -n "$tmp" ]; then rm -rf "$tmp"; fi; }
trap cleanup EXIT

# rewrite FILE: FILE's lines with every URI that starts with a rule's FROM
# (up to a / or its end) starting with that rule's TO instead.
rewrite() {
    awk -v rules="$mirror" '
        BEGIN {
            n = 0
            while ((getline line < rules) > 0) {
                split(line, w, /[ \t]+/)
                if (w[1] == "rewrite" && w[2] != "" && w[3] != "") { n++; from[n] = w[2]; to[n] = w[3] }
            }
        }
        /^[ \t]*#/ { print; next }
        {
            out = ""
            rest = $0
            while (match(rest, /[^ \t]+/)) {
                word = substr(rest, RSTART, RLENGTH)
                for (i = 1; i <= n; i++) {
                    f = from[i]
                    if (substr(word, 1, length(f)) == f) {
                        next_char = substr(word, length(f) + 1, 1)
                        if (next_char == "" || next_char == "/" || substr(f, length(f)) == "/") {
                            word = to[i] substr(word, length(f) + 1)
                            break
                        }
                    }
                }
                out = out substr(rest, 1, RSTART - 1) word
                rest = substr(rest, RSTART + RLENGTH)
            }
            print out rest
        }' "$1"
}

# The apt options of this build (one per line): a flaky mirror should cost a
# retry, not a multi-hour rebuild; the mirror's rewritten sources and
# options, its credentials and CA bundle.
apt_options="-o
Acquire::Retries=5"
add_option() { apt_options="$apt_options
-o
$1"; }
if [ -f "$mirror" ]; then
    tmp=$(mktemp -d)
    mkdir "$tmp/sources.list.d"
    if [ -f "$apt_dir/sources.list" ]; then rewrite "$apt_dir/sources.list" >"$tmp/sources.list"; fi
    for f in "$apt_dir"/sources.list.d/*.list "$apt_dir"/sources.list.d/*.sources; do
        if [ -f "$f" ]; then rewrite "$f" >"$tmp/sources.list.d/${f##*/}"; fi
    done
    add_option "Dir::Etc::SourceList=$tmp/sources.list"
    add_option "Dir::Etc::SourceParts=$tmp/sources.list.d"
    while read -r kind value; do
        if [ "$kind" = option ]; then add_option "$value"; fi
    done <"$mirror"
fi
if [ -f "$netrc" ]; then
    add_option "Dir::Etc::netrc=$netrc"
    # apt's download methods run as _apt, which cannot read a root-only secret
    add_option "APT::Sandbox::User=root"
fi
if [ -f "$ca" ]; then add_option "Acquire::https::CAInfo=$ca"; fi

# run_apt CMD ARGS...: apt-get/apt-cache with this build's options.
run_apt() {
    cmd=$1
    shift
    old_ifs=$IFS
    IFS='
'
    # Split on newlines only, no globbing: an option never holds a newline
    # (tools/mirrors refuses them).
    set -f
    # shellcheck disable=SC2086
    set -- $apt_options "$@"
    set +f
    IFS=$old_ifs
    "$cmd" "$@"
}

case "$1" in
    --sources)
        if [ -n "$tmp" ]; then dir=$tmp; else dir=$apt_dir; fi
        for f in "$dir/sources.list" "$dir"/sources.list.d/*; do
            if [ -f "$f" ]; then
                echo "# ${f#"$dir"/}"
                cat "$f"
            fi
        done
        exit 0
        ;;
    --available)
        [ "$#" -eq 2 ] || die "usage: apt-install.sh --available PACKAGE"
        candidate=$(run_apt apt-cache policy "$2" 2>/dev/null | awk '/Candidate:/ {print $2}')
        [ -n "$candidate" ] && [ "$candidate" != "(none)" ]
        exit
        ;;
    -*) die "unknown option '$1'; see the usage at the top of this script" ;;
esac

# --error-on=any: a source that does not answer fails here, not as a missing
# package later
if ! run_apt apt-get update -q --error-on=any; then
    die "apt-get update failed: the archives the image's sources name (apt-install.sh --sources lists them) do not answer; on a host without them, map each to a mirror in the mirror settings (docs/mirrors.md)"
fi

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
        if candidate=$(run_apt apt-cache policy "$name" 2>/dev/null | awk '/Candidate:/ {print $2}') &&
            [ -n "$candidate" ] && [ "$candidate" != "(none)" ]; then
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
run_apt apt-get install -y -q --no-install-recommends $packages
