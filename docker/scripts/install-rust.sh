#!/usr/bin/env bash
# shellcheck source-path=SCRIPTDIR
# Install the Rust toolchain a source tree pins and vendor the crates its
# Cargo.lock names, so that the wheel build compiles the Rust parts offline.
#
# Usage: install-rust.sh SRC_DIR VENDOR_DIR MANIFEST...
#
# - rustup from the image's own archive (apt-install.sh, so through the apt
#   mirror), with protoc (protobuf-compiler), which the prost/tonic build
#   scripts of vLLM's gRPC crates run (vLLM's docker/Dockerfile.rocm installs
#   it for that);
# - the toolchain `channel` of SRC_DIR/rust-toolchain.toml (vLLM pins a
#   nightly, which no distribution packages: Debian's rustc/cargo are
#   stable releases), minimal profile, made the default;
# - `cargo vendor --locked` of every MANIFEST (relative to SRC_DIR; the first
#   one names the lock file) into VENDOR_DIR, and a cargo configuration in
#   $CARGO_HOME/config.toml that reads the crates from there and never from
#   the network (net.offline). It names no mirror, so the layer is the same
#   whichever mirror served the crates.
#
# Mirrors: rustup's dist server and the crates registry are neither apt, pip
# nor git, so they come as one more optional BuildKit secret, rust-mirror at
# /run/secrets/rust-mirror, in the format of apt-mirror:
#
#   dist-server URL       rustup's dist server (RUSTUP_DIST_SERVER), e.g. a
#                         mirror of the Rust release channels
#   crates-registry URL   a registry that mirrors the crates index
#                         (sparse+https://.../ or a git index), replacing
#                         crates-io while vendoring
#
# Without the file rustup and cargo use their own defaults. Git dependencies
# go through the git CLI, so /etc/gitconfig (url.insteadOf, sslCAInfo) and
# /root/.netrc apply to them. The CA bundle of secret mirror-ca is trusted by
# cargo (CARGO_HTTP_CAINFO) and, with the image's own bundle, by rustup
# (SSL_CERT_FILE). Neither rustup nor cargo reads netrc for a registry, so
# these two mirrors must serve the build hosts without credentials.
# ROCM_PYTORCH_SECRETS_DIR moves /run/secrets (tests).
set -euo pipefail

die() { echo "install-rust: $*" >&2; exit 1; }

[ "$#" -ge 3 ] || die "usage: install-rust.sh SRC_DIR VENDOR_DIR MANIFEST..."
src=$(cd "$1" && pwd)
vendor=$2
shift 2
script_dir=$(cd "$(dirname "$0")" && pwd)
secrets=${ROCM_PYTORCH_SECRETS_DIR:-/run/secrets}
settings=$secrets/rust-mirror
ca=$secrets/mirror-ca
cargo_home=${CARGO_HOME:-$HOME/.cargo}

manifests=()
for manifest in "$@"; do
    [ -f "$src/$manifest" ] || die "no $manifest in $src"
    manifests+=("$src/$manifest")
done

toolchain_file=$src/rust-toolchain.toml
[ -f "$toolchain_file" ] || die "$src has no rust-toolchain.toml to take the channel from"
channel=$(sed -n 's/^[[:space:]]*channel[[:space:]]*=[[:space:]]*"\([^"]*\)".*$/\1/p' \
    "$toolchain_file" | head -n 1)
[ -n "$channel" ] || die "$toolchain_file names no channel"

# check_url KEY URL SCHEMES...: URL starts with one of SCHEMES and has no
# credentials (they would reach the build log; they belong in a netrc file).
check_url() {
    local key=$1 url=$2 scheme ok=0
    shift 2
    for scheme in "$@"; do
        case "$url" in "$scheme"://?*) ok=1 ;; esac
    done
    [ "$ok" -eq 1 ] || die "$settings: $key $url is not a $* URL"
    local authority=${url#*://}
    authority=${authority%%/*}
    case "$authority" in *@*) die "$settings: $key has credentials in its URL" ;; esac
}

dist_server=""
registry=""
if [ -f "$settings" ]; then
    while read -r key value rest; do
        case "$key" in "" | "#"*) continue ;; esac
        [ -n "$value" ] && [ -z "$rest" ] || die "$settings: '$key' needs exactly one URL"
        case "$key" in
            dist-server)
                check_url "$key" "$value" http https
                dist_server=${value%/}
                ;;
            crates-registry)
                check_url "$key" "$value" sparse+http sparse+https http https
                registry=$value
                ;;
            *) die "$settings: unknown setting '$key' (known: dist-server, crates-registry)" ;;
        esac
    done <"$settings"
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
if [ -f "$ca" ]; then
    export CARGO_HTTP_CAINFO=$ca
    cat /etc/ssl/certs/ca-certificates.crt "$ca" >"$tmp/ca.pem" 2>/dev/null || cp "$ca" "$tmp/ca.pem"
    export SSL_CERT_FILE=$tmp/ca.pem
fi
if [ -n "$dist_server" ]; then export RUSTUP_DIST_SERVER=$dist_server; fi
export RUSTUP_MAX_RETRIES=10 CARGO_NET_RETRY=10 CARGO_NET_GIT_FETCH_WITH_CLI=true

"$script_dir/apt-install.sh" rustup protobuf-compiler
rustup toolchain install "$channel" --profile minimal
rustup default "$channel"
rustc --version
cargo --version

cargo_config=()
if [ -n "$registry" ]; then
    cargo_config=(--config 'source.crates-io.replace-with="rust-mirror"'
        --config "source.rust-mirror.registry=\"$registry\"")
fi
vendor_args=(vendor --locked --respect-source-config --manifest-path "${manifests[0]}")
for manifest in "${manifests[@]:1}"; do vendor_args+=(--sync "$manifest"); done
mkdir -p "$vendor"
vendor=$(cd "$vendor" && pwd)
cargo "${cargo_config[@]}" "${vendor_args[@]}" "$vendor" >"$tmp/vendored.toml"
# cargo vendor prints the [source] tables that read the vendored crates.
grep -q '^directory = ' "$tmp/vendored.toml" \
    || die "cargo vendor printed no source configuration for $vendor"
mkdir -p "$cargo_home"
{
    echo "# written by install-rust.sh: crates from $vendor only"
    cat "$tmp/vendored.toml"
    printf '\n[net]\noffline = true\n'
} >"$cargo_home/config.toml"
crates=$(find "$vendor" -mindepth 1 -maxdepth 1 -type d | wc -l)
echo "install-rust: $channel, $crates crates in $vendor" \
    "(dist server: ${dist_server:-rustup default}; registry: ${registry:-crates-io})"
