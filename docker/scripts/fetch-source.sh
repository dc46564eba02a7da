#!/usr/bin/env bash
# Check out one pinned revision of a git repository, optionally with its
# submodules.
#
# Usage: fetch-source.sh URL REF DEST [--recursive]
#
# REF is a tag, a branch or a full commit sha. Only that revision is fetched
# (depth 1), which for PyTorch is minutes and gigabytes less than a clone.
# Network hiccups are retried (so a ref that does not exist takes a couple of
# minutes to fail, with a message saying so).
set -euo pipefail

die() { echo "fetch-source: $*" >&2; exit 1; }

[ "$#" -ge 3 ] && [ "$#" -le 4 ] || die "usage: fetch-source.sh URL REF DEST [--recursive]"
url=$1
ref=$2
dest=$3
recursive=${4:-}
[ -n "$ref" ] || die "empty ref for $url"
[ -z "$recursive" ] || [ "$recursive" = --recursive ] || die "unknown option '$recursive'"
[ ! -e "$dest" ] || die "$dest already exists"

retry() {
    local attempt
    for attempt in 1 2 3 4; do
        "$@" && return 0
        echo "fetch-source: attempt $attempt of '$*' failed" >&2
        sleep $((attempt * 10))
    done
    return 1
}

git init --quiet "$dest"
git -C "$dest" remote add origin "$url"
# A tag is fetched as a tag, so version tools that read `git describe`
# (setuptools-scm in vllm and lmcache) see the release, not a dev build.
if git -C "$dest" fetch --quiet --depth 1 origin "refs/tags/$ref:refs/tags/$ref" 2>/dev/null; then
    git -C "$dest" -c advice.detachedHead=false checkout --quiet "refs/tags/$ref"
else
    retry git -C "$dest" fetch --quiet --depth 1 origin "$ref" \
        || die "cannot fetch $ref from $url (does the tag, branch or commit exist?)"
    git -C "$dest" -c advice.detachedHead=false checkout --quiet FETCH_HEAD
fi

if [ "$recursive" = --recursive ]; then
    # Shallow submodules fail when a pinned submodule commit is not a branch
    # head upstream (or on a network hiccup); the full fetch is the slow but
    # sure second try.
    if ! git -C "$dest" submodule update --init --recursive --depth 1 --jobs 8; then
        retry git -C "$dest" submodule update --init --recursive --jobs 8 \
            || die "cannot fetch the submodules of $url at $ref"
    fi
fi

echo "fetch-source: $url $ref -> $dest at $(git -C "$dest" rev-parse HEAD)"
