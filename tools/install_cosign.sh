#!/usr/bin/env bash
# install_cosign.sh - cosign for signing and verifying published images
# (`registry push --sign`, `registry verify`), from Debian sid's package.
#
#   tools/install_cosign.sh MIRROR   # as root (or with sudo); tools/bootstrap.sh runs it
#
# Debian's cosign is one static Go binary (Depends: libc6 only), so it is not
# added to the sid tree (whose package list is shared with install-bazel.sh's
# tree): `apt-get download` fetches the .deb from MIRROR's sid suite into a
# temporary apt state (signatures checked against the host's Debian keyring),
# and the binary goes to $ROCM_PYTORCH_COSIGN_DIR (default
# /var/lib/rocm-pytorch-images/bin), a host path that `bazel` and
# `rocm-pytorch-sid-run` see too. tools/registry/sign.py looks there after
# $ROCM_PYTORCH_COSIGN and PATH.
#
# MIRROR is the URI of a Debian mirror that serves sid (tools/bootstrap.sh
# passes the one the host's apt sources name). Idempotent: a second run finds
# the binary and exits at once. Cost: 11 MB of package lists and 18 MB .deb.
set -Eeuo pipefail

DEST=${ROCM_PYTORCH_COSIGN_DIR:-/var/lib/rocm-pytorch-images/bin}
MIRROR=${1:-}
log() { echo "install_cosign: $*" >&2; }

if [ -x "$DEST/cosign" ]; then
  log "ok: $DEST/cosign is there"
  exit 0
fi
[ -n "$MIRROR" ] || { log "usage: install_cosign.sh MIRROR (the URI of a Debian mirror that serves sid, as in the host's apt sources)"; exit 2; }
[ "$(id -u)" = 0 ] || { log "run as root (apt-get)"; exit 1; }
command -v apt-get >/dev/null && command -v dpkg-deb >/dev/null ||
  { log "needs apt-get and dpkg-deb (a Debian host)"; exit 1; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/lists/partial" "$tmp/cache/archives/partial" "$tmp/deb"
echo "deb $MIRROR sid main" >"$tmp/sources.list"
apt_opts=(
  -q
  -o "Dir::Etc::SourceList=$tmp/sources.list" -o Dir::Etc::SourceParts=/dev/null
  -o "Dir::State::Lists=$tmp/lists" -o "Dir::Cache=$tmp/cache"
  -o Acquire::Check-Valid-Until=false -o APT::Sandbox::User=root
)
log "fetching cosign from $MIRROR (sid)"
apt-get "${apt_opts[@]}" update </dev/null >"$tmp/apt.log" 2>&1 ||
  { cat "$tmp/apt.log" >&2; log "apt-get update of sid failed"; exit 1; }
(cd "$tmp/deb" && apt-get "${apt_opts[@]}" download cosign </dev/null >>"$tmp/apt.log" 2>&1) ||
  { cat "$tmp/apt.log" >&2; log "apt-get download cosign failed"; exit 1; }
dpkg-deb -x "$tmp"/deb/cosign_*.deb "$tmp/root"
mkdir -p "$DEST"
install -m 0755 "$tmp/root/usr/bin/cosign" "$DEST/cosign.new"
mv -f "$DEST/cosign.new" "$DEST/cosign"
log "ok: $DEST/cosign ($(basename "$tmp"/deb/cosign_*.deb .deb))"
