#!/usr/bin/env bash
# Record the optional sccache backend that base was built with.
#
# Usage: configure-sccache.sh [--bucket B] [--region R] [--endpoint URL]
#                             [--webdav-endpoint URL]
#
# Empty values are allowed and mean "not set" (the Dockerfile passes its
# build args, which default to empty).
#
# Writes /etc/rocm-pytorch/sccache.env with the non-empty settings only; an
# empty file means "no remote cache" and build-env.sh then falls back to a
# local ccache. The settings are kept out of ENV on purpose: sccache treats a
# variable that is set but empty as a configured (and broken) backend, and
# every image FROM base would inherit them.
#
# Credentials never go through here: a build that writes to S3 mounts them
# as the BuildKit secret `sccache_aws` (an AWS shared-credentials file), which
# build-env.sh picks up for the duration of one RUN.
set -euo pipefail

die() { echo "configure-sccache: $*" >&2; exit 1; }

bucket="" region="" endpoint="" webdav=""
while [ "$#" -gt 0 ]; do
    [ "$#" -ge 2 ] || die "$1 needs a value"
    case "$1" in
        --bucket) bucket=$2 ;;
        --region) region=$2 ;;
        --endpoint) endpoint=$2 ;;
        --webdav-endpoint) webdav=$2 ;;
        *) die "unknown option '$1'" ;;
    esac
    shift 2
done

[ -z "$bucket" ] || [ -z "$webdav" ] || die "set a bucket or a WebDAV endpoint, not both"
[ -n "$bucket" ] || { [ -z "$region" ] && [ -z "$endpoint" ]; } || die "a region or S3 endpoint needs a bucket"

conf=/etc/rocm-pytorch/sccache.env
mkdir -p "${conf%/*}"
: >"$conf"
# %q keeps the file safe to source whatever the value contains.
[ -z "$bucket" ] || printf 'SCCACHE_BUCKET=%q\n' "$bucket" >>"$conf"
[ -z "$region" ] || printf 'SCCACHE_REGION=%q\n' "$region" >>"$conf"
[ -z "$endpoint" ] || printf 'SCCACHE_ENDPOINT=%q\n' "$endpoint" >>"$conf"
[ -z "$webdav" ] || printf 'SCCACHE_WEBDAV_ENDPOINT=%q\n' "$webdav" >>"$conf"

if [ -s "$conf" ]; then
    echo "configure-sccache: remote compiler cache configured:"
    cut -d= -f1 "$conf"
else
    echo "configure-sccache: no remote compiler cache (builds use a local ccache)"
fi
