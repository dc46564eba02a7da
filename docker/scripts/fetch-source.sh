#!/usr/bin/env bash
# Check out one pinned revision of a git repository, optionally with its
# submodules.
#
# Usage: fetch-source.sh URL REF DEST [--recursive]
#
# REF is a tag, a branch or a full commit sha. Only that revision is fetched
# (depth 1), which for PyTorch is minutes and gigabytes less than a clone.
# Network hiccups are retried (so a ref that does not exist takes a couple of
# minutes to fail, with a message saying so); the wait before attempt n is n
# times FETCH_SOURCE_RETRY_SECONDS (10). A failed fetch then asks the server
# for its refs: a server (the upstream, or the mirror the build's git config
# rewrites it to) that does not answer is named as such, with git's reason,
# rather than as a ref that may not exist.
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
        sleep $((attempt * ${FETCH_SOURCE_RETRY_SECONDS:-10}))
    done
    return 1
}

# not_fetched: the fetch of $ref failed every attempt; say whether the server
# answers at all (its refs), and where git really went (insteadOf rewrites)
not_fetched() {
    local where err
    where=$(git -C "$dest" ls-remote --get-url origin 2>/dev/null) || where=$url
    [ "$where" = "$url" ] || where="$url, rewritten to $where by the git config"
    if ! err=$(git -C "$dest" ls-remote origin HEAD 2>&1 >/dev/null); then
        err=$(printf '%s\n' "$err" | grep -v '^\s*$' | tail -n 1)
        die "the git server does not answer ($where: ${err:-no reason given}); check that mirror (the [git.rewrite] of the mirror settings) or the network"
    fi
    die "cannot fetch $ref from $where (the server answers; does the tag, branch or commit exist?)"
}

git init --quiet "$dest"
git -C "$dest" remote add origin "$url"
# A tag is fetched as a tag, so version tools that read `git describe`
# (setuptools-scm in vllm and lmcache) see the release, not a dev build.
if git -C "$dest" fetch --quiet --depth 1 origin "refs/tags/$ref:refs/tags/$ref" 2>/dev/null; then
    git -C "$dest" -c advice.detachedHead=false checkout --quiet "refs/tags/$ref"
else
    retry git -C "$dest" fetch --quiet --depth 1 origin "$ref" || not_fetched
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
