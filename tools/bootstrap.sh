#!/usr/bin/env bash
# bootstrap.sh - what this repository needs on a Debian host, in one idempotent
# command: Bazel 7.7.1 as `bazel` on PATH, and the container tools the tests
# and the private Docker engine use (dockerd, containerd, runc, docker CLI and
# buildx, docker-registry, a static busybox, skopeo, crane, nginx).
#
#   tools/bootstrap.sh             # as root (or with sudo); cold: a few minutes; again: well under 1 s
#   bazel test //tests/...         # then this works (it starts the engine itself)
#
# Needs: root (the script re-runs itself with sudo), a Debian host (bookworm or
# newer) whose apt mirror also serves sid (Debian's own mirrors do),
# unshare and mount (util-linux), about 2.5 GB free under the prefix, and the
# network to that mirror and to PyPI (5 MB of wheels); mmdebstrap is installed
# with apt-get when missing. No Docker, Bazel or Python setup on the host.
#
# How it works
#   A Debian sid tree (mmdebstrap) holds Debian's Bazel 7.7.1, the Bazel
#   modules Debian packages (rules_python, bazel_skylib, platforms, ...),
#   Python 3.14 and the container tools. `bazel` and `rocm-pytorch-sid-run CMD`
#   (in the bin dir) run their command in a private mount namespace whose /usr
#   and /etc are the tree's; every other path is the host's, so workspaces,
#   caches and sockets are shared. The tree's /etc/bazel.bazelrc keeps Bazel
#   offline: output root in the tree, bzlmod only, stand-ins for apple_support,
#   buildozer, protobuf and zlib, and rules_python 0.22.1's pip.parse fixed for
#   Python 3.14 (pip 25.2, setuptools 80.9.0, pip-tools 7.5.2, build 1.3.0 and a
#   --distdir of the wheels it fetches, downloaded once from PyPI, hashes checked).
#   Where Bazel comes from (--bazel, decided on the first run, then kept):
#     auto      bazelisk when the Bazel download site answers (a 3 s probe of
#               $BAZELISK_BASE_URL or releases.bazel.build), else debian
#     bazelisk  bazelisk (npm @bazel/bazelisk, pinned) in the same namespace: it
#               runs the release .bazelversion names; modules come from the
#               Bazel Central Registry
#     debian    Debian's bazel-bootstrap from the tree (offline)
#
# Options
#   --bazel=auto|debian|bazelisk  see above (default: what the last run chose, else auto)
#   --prefix=DIR   the sid tree (env ROCM_PYTORCH_SID_PREFIX; default
#                  /opt/rocm-pytorch-sid)
#   --bin-dir=DIR  where `bazel` and `rocm-pytorch-sid-run` go (env
#                  ROCM_PYTORCH_BIN_DIR; default /usr/local/bin)
#   --force        replace a `bazel` in the bin dir that this script did not write
#   -h, --help     this text
#
# Progress goes to stderr; the last line says what is installed. Files: the
# tree, DIR.bootstrap.log next to a tree it built (mmdebstrap's output), the
# two wrappers, /var/lib/rocm-pytorch-images/bin/cosign (tools/install_cosign.sh)
# and /var/lib/rocm-pytorch-images/bazelisk-* in bazelisk mode (with --prefix=DIR:
# DIR.state/bin/cosign and DIR.state/bazelisk-*, which the wrappers find).
# Undo: remove those (stop Bazel servers and `python3 -m tools.engine stop` first).
set -Eeuo pipefail

DEFAULT_PREFIX=/opt/rocm-pytorch-sid
BAZEL_VERSION=7.7.1
BAZELISK_VERSION=1.28.1 # npm @bazel/bazelisk
DEFAULT_STATE=/var/lib/rocm-pytorch-images # with --prefix=DIR: DIR.state
MARK="written by tools/bootstrap.sh (rocm-pytorch-images)"

# ---- the tree (every line below is hashed into the tree's stamp) -------------
SUITE=sid
PACKAGES=(
  # Bazel 7.7.1 and the modules MODULE.bazel uses (and theirs)
  bazel-bootstrap bazel-platforms bazel-rules-java bazel-rules-cc bazel-features
  bazel-skylib bazel-rules-license bazel-rules-python bazel-rules-proto
  # Python 3.14 (pip: downloads the pip.parse wheels), TLS roots, repository tools
  python3 python3-pip ca-certificates ca-certificates-java git zip unzip patch zlib1g-dev
  # the engine (tools/engine), the registries, the e2e fixtures' busybox,
  # nginx for .ci/remote_cache_check.py, skopeo and crane for bench/push.py
  docker.io docker-cli docker-buildx containerd runc tini-static docker-registry
  busybox-static nginx skopeo crane
  # the headless browser the family report's tests render it in (tests/report,
  # driven by Playwright from the lock; Playwright's own browsers are never fetched)
  chromium
  # Python.h and ninja: tests/rehearsal compiles the stand-ins' JIT paths (Triton's
  # launcher, torch's load_inline) with the tree's gcc, as the images do
  python3-dev ninja-build
  # the rehearsal's stand-in upstream (rehearsal/): a Debian root file
  # system with Debian's ROCm, made by mmdebstrap (it mounts /proc in it)
  mmdebstrap mount
)
MMDEBSTRAP_OPTS=(
  --mode=root --format=directory --variant=apt
  --aptopt='APT::Install-Recommends "false"'
  --aptopt='Acquire::Retries "5"'
  --aptopt='Acquire::Check-Valid-Until "false"'
  --aptopt='Acquire::Check-Date "false"'
  --dpkgopt='path-exclude=/usr/share/locale/*'
  --skip=cleanup/apt/lists
)
# rules_python 0.22.1's pip.parse on Python 3.14 (own stamp in $OFFLINE/pip_parse)
PIP_WHEELS=(pip-25.2 6d67a2b4e7f14d8b31b8b52648866fa717f45a1eb70e83002f4331d07e953717)
SETUPTOOLS_WHEELS=(setuptools-80.9.0 062d34222ad13e0cc312a4c02d73f059e86a4acbfbdea8f8f76b28c99f306922)
PIP_TOOLS_WHEELS=(pip_tools-7.5.2 2fe16db727bbe5bf28765aeb581e792e61be51fc275545ef6725374ad720a1ce pyproject_hooks-1.2.0 9e5c6bfa8dcc30091c74b0cf803c81fdd29d94f01992a7707bc97babb1141913)
BUILD_WHEELS=(build-1.3.0 7145f0b5061ba90a1500d60bd1b13ca0a8a4cebdd0cc16ed8adf1c0e739f43b4 packaging-25.0 29572ef2b1f17581046b3a2227d5c611fb25ec70ca1ba8554b24b0e69331a484)
OFFLINE=/usr/local/share/rocm-pytorch-offline # in the tree (the wrapper's /usr)
# -----------------------------------------------------------------------------

log() { echo "bootstrap: $*" >&2; }
die() {
  echo "bootstrap: error: $*" >&2
  exit 1
}
trap 'echo "bootstrap: error: line $LINENO: \"$BASH_COMMAND\" failed (exit $?)" >&2' ERR
TMPS=()
trap 'if [ ${#TMPS[@]} -gt 0 ]; then rm -rf "${TMPS[@]}"; fi' EXIT

usage() { sed -n '2,/^set -Eeuo/p' "$0" | sed '$d; s/^# \{0,1\}//'; }

MODE_ARG='' FORCE=0
P=${ROCM_PYTORCH_SID_PREFIX:-} BIN=${ROCM_PYTORCH_BIN_DIR:-/usr/local/bin}
for arg in "$@"; do
  case $arg in
    -h | --help) usage; exit 0 ;;
    --bazel=auto | --bazel=debian | --bazel=bazelisk) MODE_ARG=${arg#--bazel=} ;;
    --bazel=*) die "$arg: choose --bazel=auto, --bazel=debian or --bazel=bazelisk" ;;
    --prefix=?*) P=${arg#--prefix=} ;;
    --bin-dir=?*) BIN=${arg#--bin-dir=} ;;
    --force) FORCE=1 ;;
    *) die "unknown argument '$arg'; see tools/bootstrap.sh --help" ;;
  esac
done
P=${P%/} BIN=${BIN%/}
RUNNER=$BIN/rocm-pytorch-sid-run

# put MODE FILE <<content: (re)write FILE only when its content differs
put() {
  local mode=$1 f=$2 c=''
  IFS= read -r -d '' c || true
  if [ -f "$f" ] && cmp -s -- "$f" <(printf '%s' "$c"); then
    [ "$(stat -c %a -- "$f")" = "$mode" ] || chmod "$mode" -- "$f"
    return 0
  fi
  mkdir -p -- "$(dirname -- "$f")"
  printf '%s' "$c" >"$f.tmp.$$"
  chmod "$mode" -- "$f.tmp.$$"
  mv -f -- "$f.tmp.$$" "$f"
}

check_prefix() {
  [[ $P =~ ^/[A-Za-z0-9._+/-]*[A-Za-z0-9._+-]$ && $P != *//* ]] ||
    die "--prefix=$P: need an absolute path of letters, digits and ._+-/"
  case "$P/" in /usr/* | /etc/* | /proc/* | /sys/* | /dev/* | /tmp/ | /)
    die "--prefix=$P is not usable (inside the namespace /usr and /etc are the tree's)" ;;
  esac
}

# The URI of the host's Debian mirror: the first "deb" source whose suite is
# the host's codename (one-line .list and deb822 .sources files).
debian_mirror() {
  local codename sl='' sp='' files=() f uri
  # shellcheck disable=SC1091
  codename=$(. /etc/os-release && echo "${VERSION_CODENAME:-}")
  [ -n "$codename" ] || die "no VERSION_CODENAME in /etc/os-release: this needs a Debian host"
  eval "$(apt-config shell sl Dir::Etc::sourcelist/f sp Dir::Etc::sourceparts/d)"
  sp=${sp:-/etc/apt/sources.list.d}
  sp=${sp%/}
  for f in "${sl:-/etc/apt/sources.list}" "$sp"/*.list "$sp"/*.sources; do
    if [ -f "$f" ]; then files+=("$f"); fi
  done
  [ ${#files[@]} -gt 0 ] || die "no apt sources on this host; cannot tell the Debian mirror"
  uri=$(awk '
    function flush(  n, m, i, j, U, S) {
      if (types ~ /(^|[ \t])deb([ \t]|$)/ && tolower(enabled) != "no") {
        n = split(uris, U, /[ \t]+/); m = split(suites, S, /[ \t]+/)
        for (i = 1; i <= n; i++) for (j = 1; j <= m; j++)
          if (U[i] != "" && S[j] != "") print U[i], S[j]
      }
      types = uris = suites = enabled = key = ""
    }
    FNR == 1 { if (deb822) flush(); deb822 = (FILENAME ~ /\.sources$/) }
    deb822 {
      if ($0 ~ /^#/) next
      if ($0 ~ /^[ \t]*$/) { flush(); next }
      if ($0 ~ /^[ \t]/) { v = $0 } else {
        key = tolower($0); sub(/:.*/, "", key); v = $0; sub(/^[^:]*:/, "", v)
      }
      if (key == "types") types = types " " v
      else if (key == "uris") uris = uris " " v
      else if (key == "suites") suites = suites " " v
      else if (key == "enabled") { enabled = v; gsub(/[ \t]/, "", enabled) }
      next
    }
    {
      sub(/#.*/, ""); if ($1 != "deb") next
      i = 2; if ($2 ~ /^\[/) { while (i <= NF && $i !~ /\]$/) i++; i++ }
      if (i + 1 <= NF) print $i, $(i + 1)
    }
    END { if (deb822) flush() }
  ' "${files[@]}" | awk -v want="$codename" '!found && $2 == want { print $1; found = 1 }')
  [ -n "$uri" ] || die "no 'deb' source for suite $codename in ${files[*]}; cannot tell the Debian mirror"
  echo "${uri%/}"
}

# ---- building the tree ---------------------------------------------------------
# in_chroot ROOT CMD...: chroot with /proc (java in ca-certificates-java's
# trigger needs it), in a private mount namespace that vanishes with CMD
in_chroot() {
  # shellcheck disable=SC2016
  unshare --mount --propagation private -- \
    sh -c 'mount -t proc proc "$1/proc" && exec chroot "$@"' in_chroot "$@" </dev/null
}

# copy_host_files ROOT all|missing: the runner binds these host files over the
# tree's, which needs a file there to mount onto
copy_host_files() {
  local root=$1 what=$2 f
  for f in /etc/hosts /etc/pip.conf; do
    if [ -f "$f" ] && { [ "$what" = all ] || [ ! -e "$root$f" ]; }; then cp "$f" "$root$f"; fi
  done
  if [ -d /etc/xdg/pip ] && { [ "$what" = all ] || [ ! -e "$root/etc/xdg/pip" ]; }; then
    rm -rf "$root/etc/xdg/pip"
    mkdir -p "$root/etc/xdg"
    cp -a /etc/xdg/pip "$root/etc/xdg/pip"
  fi
}

# sync_host_cas ROOT: the host's local CAs (/usr/local/share/ca-certificates, e.g.
# a TLS-intercepting proxy's) trusted in the tree too (pip in pip.parse reads them)
sync_host_cas() {
  local root=$1 src=/usr/local/share/ca-certificates dst=$1/usr/local/share/ca-certificates
  if [ -d "$src" ]; then
    if diff -rq "$src" "$dst" >/dev/null 2>&1; then return 0; fi
  elif [ -z "$(ls -A "$dst" 2>/dev/null)" ]; then
    return 0
  fi
  log "trusting the host's local CA certificates in the tree"
  rm -rf "$dst"
  mkdir -p "$dst"
  if [ -d "$src" ]; then cp -r "$src/." "$dst/"; fi
  in_chroot "$root" update-ca-certificates --fresh >>"$P.bootstrap.log" 2>&1 ||
    die "update-ca-certificates in the tree failed (log: $P.bootstrap.log)"
}

build_tree() {
  local new=$P.new old=$P.old logf=$P.bootstrap.log include
  command -v mmdebstrap >/dev/null || {
    log "installing mmdebstrap on the host (apt-get)"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -q </dev/null >&2 || die "apt-get update failed"
    apt-get install -y -q --no-install-recommends mmdebstrap gpg </dev/null >&2 ||
      die "apt-get install mmdebstrap failed"
  }
  rm -rf --one-file-system "$new"
  include=$(IFS=,; echo "${PACKAGES[*]}")
  log "building the sid tree $P with mmdebstrap from $MIRROR (~830 MB of packages; log: $logf)"
  mmdebstrap "${MMDEBSTRAP_OPTS[@]}" --include="$include" \
    "$SUITE" "$new" "deb $MIRROR $SUITE main" </dev/null >"$logf" 2>&1 &
  local pid=$! rc=0 waited=0
  # the long part (minutes on a slow mirror): a line every 20 s, how much of the
  # tree is written and the phase mmdebstrap is in
  while kill -0 "$pid" 2>/dev/null; do
    sleep 1
    waited=$((waited + 1))
    if [ $((waited % 20)) -eq 0 ]; then
      log "  tree: $(elapsed)s, $(du -sm "$new" 2>/dev/null | cut -f1 || true) MB written (~3700 at most, ~2700 when done); $(sed -n 's/^I: //p' "$logf" | tail -n 1 | cut -c1-70 || true)"
    fi
  done
  wait "$pid" || rc=$?
  if [ "$rc" -ne 0 ]; then
    tail -n 25 "$logf" >&2
    die "mmdebstrap failed (whole log: $logf)"
  fi
  [ -x "$new/usr/bin/bazel" ] || die "mmdebstrap finished but $new/usr/bin/bazel is missing"
  if [ -n "$(chroot "$new" dpkg --audit </dev/null)" ]; then
    log "running the dpkg triggers mmdebstrap left pending"
    in_chroot "$new" dpkg --configure --pending >>"$logf" 2>&1 ||
      die "dpkg --configure --pending in the tree failed (log: $logf)"
  fi
  copy_host_files "$new" all
  sync_host_cas "$new"
  if [ -e "$P" ]; then
    log "replacing the previous tree at $P"
    rm -rf --one-file-system "$old"
    mv "$P" "$old"
  fi
  mv "$new" "$P"
  rm -rf --one-file-system "$old"
}

# The tree's configuration: system bazelrc, stand-in modules, loopback
# registries for skopeo, no daemons started by maintainer scripts.
write_tree_files() {
  put 644 "$P/etc/bazel.bazelrc" <<EOF
# $MARK; rewritten on every run
# Output root in the tree, at a path that is the same inside the namespace and
# on the host (so bazel-bin/bazel-out resolve on the host).
startup --output_user_root=$P/var/cache/bazel
# bzlmod only: the WORKSPACE suffix registers rules_java toolchains that need
# rules_cc from GitHub.
common --noenable_workspace
# Stand-ins for modules nobody packages (@bazel_tools needs them). Debian's
# /etc/bazel/bazelrc maps the packaged modules to /usr/share/bazel.
common --override_module=apple_support=$OFFLINE/mock_modules/apple_support
common --override_module=buildozer=$OFFLINE/mock_modules/buildozer
common --override_module=protobuf=$OFFLINE/mock_modules/protobuf
common --override_module=zlib=$OFFLINE/mock_modules/zlib
# rules_python 0.22.1's pip.parse and compile_pip_requirements on Python 3.14,
# without Bazel's downloader going online: its wheels in a distdir; pip,
# setuptools, pip-tools and build replaced by versions that run on 3.14.
common --distdir=$OFFLINE/pip_parse/distdir
common --override_repository=rules_python~~internal_deps~pypi__pip=$OFFLINE/pip_parse/rules_python/pypi__pip
common --override_repository=rules_python~~internal_deps~pypi__setuptools=$OFFLINE/pip_parse/rules_python/pypi__setuptools
common --override_repository=rules_python~~internal_deps~pypi__pip_tools=$OFFLINE/pip_parse/rules_python/pypi__pip_tools
common --override_repository=rules_python~~internal_deps~pypi__build=$OFFLINE/pip_parse/rules_python/pypi__build
EOF
  # Debian's /etc/bazel/bazelrc sets --host_javabase, deprecated since Bazel 7:
  # a warning on every command, twice. The same local JDK, by the flag that
  # replaced it.
  if [ -f "$P/etc/bazel/bazelrc" ]; then
    sed -i 's|^build --host_javabase=@local_jdk//:jdk$|build --tool_java_runtime_version=local_jdk # was --host_javabase (deprecated); tools/bootstrap.sh|' \
      "$P/etc/bazel/bazelrc"
  fi
  local m mock=$P$OFFLINE/mock_modules
  for m in apple_support buildozer protobuf; do
    put 644 "$mock/$m/MODULE.bazel" <<<"module(name = \"$m\")"
    put 644 "$mock/$m/BUILD.bazel" </dev/null
  done
  put 644 "$mock/zlib/MODULE.bazel" <<<'module(name = "zlib")'
  put 644 "$mock/zlib/BUILD.bazel" <<'EOF'
# the system zlib (zlib1g-dev)
cc_library(
    name = "zlib",
    linkopts = ["-lz"],
    visibility = ["//visibility:public"],
)
EOF
  put 644 "$P/etc/containers/registries.conf.d/50-loopback-insecure.conf" <<EOF
# $MARK: plain-HTTP registries on the loopback interface, any port
[[registry]]
location = "127.0.0.1"
insecure = true

[[registry]]
location = "localhost"
insecure = true
EOF
  put 755 "$P/usr/sbin/policy-rc.d" <<'EOF'
#!/bin/sh
exit 101
EOF
  copy_host_files "$P" missing
}

# rules_python 0.22.1's pip.parse fetches pip 22.3.1, setuptools 60.10.0 and
# more from PyPI's file host with Bazel's downloader; those pips do not
# run on Python 3.14. The wheels it fetches go to a --distdir (same files, the
# sha256 of rules_python's repositories.bzl); pip, setuptools, pip-tools and
# build are replaced by newer ones unpacked as local repositories.
setup_pip_parse() {
  local d=$P$OFFLINE/pip_parse
  local want="${PIP_WHEELS[*]} ${SETUPTOOLS_WHEELS[*]} ${PIP_TOOLS_WHEELS[*]} ${BUILD_WHEELS[*]}"
  if [ -f "$d/.stamp" ] && [ "$(<"$d/.stamp")" = "$want" ]; then return 0; fi
  local bzl=$P/usr/share/bazel/rules/python/python/pip_install/repositories.bzl
  [ -f "$bzl" ] || die "$bzl missing (bazel-rules-python changed?)"
  log "downloading rules_python's pip.parse wheels from PyPI (5 MB)"
  local tmp name url sha file dist ver
  tmp=$(mktemp -d)
  TMPS+=("$tmp")
  : >"$tmp/req.txt"
  : >"$tmp/req2.txt"
  : >"$tmp/sha256sums"
  while read -r name url sha; do
    [[ $name == pypi__* && $url == https://*.whl && $sha =~ ^[0-9a-f]{64}$ ]] ||
      die "cannot parse _RULE_DEPS in $bzl ($name $url $sha)"
    case $name in pypi__pip | pypi__setuptools | pypi__pip_tools | pypi__build) continue ;; esac
    file=${url##*/} dist=${file%%-*} ver=${file#*-} ver=${ver%%-*}
    echo "$dist==$ver --hash=sha256:$sha" >>"$tmp/req.txt"
    echo "$sha  $file" >>"$tmp/sha256sums"
  done < <(awk '/^_RULE_DEPS = \[/ { f = 1; next } f && /^\]/ { exit } f' "$bzl" |
    grep -oE '"[^"]+"' | tr -d '"' | paste -d' ' - - -)
  [ "$(wc -l <"$tmp/sha256sums")" -ge 10 ] || die "too few wheels found in $bzl"
  # req2.txt pins other versions of projects in req.txt (packaging): a second download
  local w h
  set -- "${PIP_WHEELS[@]}" "${SETUPTOOLS_WHEELS[@]}"
  while [ $# -ge 2 ]; do w=$1 h=$2; shift 2; echo "${w%-*}==${w##*-} --hash=sha256:$h" >>"$tmp/req.txt"; done
  set -- "${PIP_TOOLS_WHEELS[@]}" "${BUILD_WHEELS[@]}"
  while [ $# -ge 2 ]; do w=$1 h=$2; shift 2; echo "${w%-*}==${w##*-} --hash=sha256:$h" >>"$tmp/req2.txt"; done
  # the tree's pip, with the host's pip configuration and CAs (bound by the runner)
  (cd "$tmp" && for r in req.txt req2.txt; do
    "$RUNNER" python3 -m pip download -qq --no-deps --only-binary=:all: \
      --require-hashes -r "$r" -d dl </dev/null || exit 1
  done) || die "pip download of the rules_python wheels failed (is PyPI reachable with pip?)"
  (cd "$tmp/dl" && sha256sum --quiet -c ../sha256sums) || die "wheel checksum mismatch"

  local new=$d.new.$$ repo pkg whl
  TMPS+=("$new")
  mkdir -p "$new/distdir" "$new/rules_python"
  while read -r sha file; do cp "$tmp/dl/$file" "$new/distdir/"; done <"$tmp/sha256sums"
  for repo in pip setuptools pip_tools build; do
    case $repo in
      pip) set -- "${PIP_WHEELS[@]}" ;;
      setuptools) set -- "${SETUPTOOLS_WHEELS[@]}" ;;
      pip_tools) set -- "${PIP_TOOLS_WHEELS[@]}" ;;
      build) set -- "${BUILD_WHEELS[@]}" ;;
    esac
    mkdir "$new/rules_python/pypi__$repo"
    while [ $# -ge 2 ]; do
      pkg=$1
      shift 2
      whl=$tmp/dl/$pkg-py3-none-any.whl
      [ -f "$whl" ] || die "pip did not produce $whl"
      (cd / && "$RUNNER" unzip -q -o "$whl" -d "$new/rules_python/pypi__$repo")
    done
    put 644 "$new/rules_python/pypi__$repo/BUILD.bazel" <<'EOF'
package(default_visibility = ["//visibility:public"])

load("@rules_python//python:defs.bzl", "py_library")

py_library(
    name = "lib",
    srcs = glob(["**/*.py"]),
    data = glob(["**/*"], exclude = ["**/*.py", "**/*.pyc", "**/* *", "**/*.dist-info/RECORD", "BUILD.bazel", "REPO.bazel"]),
    imports = ["."],
)
EOF
    put 644 "$new/rules_python/pypi__$repo/REPO.bazel" </dev/null
  done
  printf '%s' "$want" >"$new/.stamp"
  rm -rf "$d"
  mv "$new" "$d"
}

# ---- wrappers ------------------------------------------------------------------
write_runner() {
  put 755 "$RUNNER" <<EOF
#!/bin/bash
# $MARK
# rocm-pytorch-sid-run CMD ARGS...: run CMD with the sid tree's /usr and /etc in
# a private mount namespace; every other path is the host's.
P=$P
[ -x "\$P/usr/bin/bazel" ] || { echo "rocm-pytorch-sid-run: \$P is missing or incomplete; run tools/bootstrap.sh" >&2; exit 127; }
[ \$# -gt 0 ] || set -- /bin/bash
case "\$PWD/" in /usr/* | /etc/*) echo "rocm-pytorch-sid-run: \$PWD is hidden by the tree's /usr or /etc; work elsewhere" >&2; exit 2 ;; esac
if [ "\$(id -u)" != 0 ]; then exec sudo -E "\$0" "\$@"; fi
# host settings that would confuse the tree's tools
unset PYTHONHOME PYTHONPATH VIRTUAL_ENV CONDA_PREFIX JAVA_HOME LD_LIBRARY_PATH LD_PRELOAD \\
  PYENV_VERSION PYENV_ROOT CLASSPATH
# the caller's PATH, for what must find the user's own programs (docker credential
# helpers: images/private/client_settings.bzl)
export ROCM_PYTORCH_CLIENT_PATH="\$PATH"
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
export ROCM_PYTORCH_SID_PREFIX="\$P"
export ROCM_PYTORCH_COSIGN_DIR="\${ROCM_PYTORCH_COSIGN_DIR:-$STATE/bin}" # tools/registry/sign.py
exec unshare --mount --propagation private -- /bin/bash -c '
  set -e
  P=\$ROCM_PYTORCH_SID_PREFIX
  # the live host files over the tree copies (before /etc is swapped)
  for f in /etc/resolv.conf /etc/hosts /etc/pip.conf; do
    if [ -e "\$f" ] && [ -e "\$P\$f" ]; then mount --bind "\$f" "\$P\$f"; fi
  done
  if [ -d /etc/xdg/pip ] && [ -d "\$P/etc/xdg/pip" ]; then mount --bind /etc/xdg/pip "\$P/etc/xdg/pip"; fi
  mount --rbind "\$P/etc" /etc
  # hosts without merged /usr: cover those directories too
  for d in bin sbin lib lib64 lib32 libx32; do
    if [ -d "/\$d" ] && [ ! -L "/\$d" ] && [ -d "\$P/usr/\$d" ]; then mount --bind "\$P/usr/\$d" "/\$d"; fi
  done
  mount --bind "\$P/usr" /usr
  exec "\$@"' rocm-pytorch-sid-run "\$@"
EOF
}

bazel_mode_of() { if [ -f "$1" ]; then awk -F= '/^# mode=[a-z]+$/ { print $2; exit }' "$1"; fi; }

# download_site_answers: can bazelisk download Bazel from here? (3 s at most)
download_site_answers() {
  local url
  if [ -n "${BAZELISK_BASE_URL:-}" ]; then
    url=${BAZELISK_BASE_URL%/}/$BAZEL_VERSION/bazel-$BAZEL_VERSION-linux-x86_64
  else
    url=https://releases.bazel.build/$BAZEL_VERSION/release/bazel-$BAZEL_VERSION-linux-x86_64
  fi
  if command -v curl >/dev/null; then
    curl -fsSIL --max-time 3 -o /dev/null "$url" 2>/dev/null
  elif command -v python3 >/dev/null; then
    python3 -c 'import sys, urllib.request as u; u.urlopen(u.Request(sys.argv[1], method="HEAD"), timeout=3)' "$url" 2>/dev/null
  else
    return 1
  fi
}

# ensure_bazelisk: the pinned bazelisk binary at $BAZELISK (from npm)
ensure_bazelisk() {
  [ -x "$BAZELISK" ] && return 0
  command -v npm >/dev/null || { log "npm is not installed: cannot fetch @bazel/bazelisk"; return 1; }
  local tmp arch
  case $(uname -m) in x86_64) arch=amd64 ;; aarch64) arch=arm64 ;; *) log "no bazelisk for $(uname -m)"; return 1 ;; esac
  tmp=$(mktemp -d)
  TMPS+=("$tmp")
  log "fetching bazelisk $BAZELISK_VERSION (npm @bazel/bazelisk)"
  npm install -s --no-audit --no-fund --prefix "$tmp" "@bazel/bazelisk@$BAZELISK_VERSION" </dev/null >&2 || return 1
  mkdir -p "$(dirname "$BAZELISK")"
  install -m 755 "$tmp/node_modules/@bazel/bazelisk/bazelisk-linux_$arch" "$BAZELISK"
}

# write_bazel: $BIN/bazel; a foreign one is replaced only with --force
write_bazel() {
  local f=$BIN/bazel mode
  if [ -e "$f" ] && ! grep -qF "$MARK" "$f"; then
    [ "$FORCE" = 1 ] || die "$f exists and was not written by this script; move it away, pass --force to replace it, or choose --bin-dir"
    log "replacing $f (--force)"
  fi
  mode=${MODE_ARG:-$(bazel_mode_of "$f")}
  mode=${mode:-auto}
  if [ "$mode" = auto ]; then
    if download_site_answers; then
      log "the Bazel download site answers: Bazel from bazelisk"
      mode=bazelisk
      ensure_bazelisk || { log "no bazelisk; Bazel from Debian's packages instead"; mode=debian; }
    else
      log "the Bazel download site does not answer: Debian's Bazel $BAZEL_VERSION (offline)"
      mode=debian
    fi
  elif [ "$mode" = bazelisk ]; then
    ensure_bazelisk || die "could not install bazelisk (npm @bazel/bazelisk@$BAZELISK_VERSION); use --bazel=debian"
  fi
  if [ "$mode" = bazelisk ]; then # bazelisk runs a workspace's tools/bazel itself
    put 755 "$f" <<EOF
#!/bin/sh
# $MARK
# mode=$mode
exec $RUNNER $BAZELISK "\$@"
EOF
  else
    put 755 "$f" <<EOF
#!/bin/sh
# $MARK
# mode=$mode
# As bazelisk does: in a workspace with an executable tools/bazel, run that
# with BAZEL_REAL naming Bazel (this project's rewrites a push's --help).
if [ -z "\${BAZEL_REAL:-}" ]; then
  d=\$PWD
  while [ ! -f "\$d/MODULE.bazel" ] && [ ! -f "\$d/REPO.bazel" ] && [ ! -f "\$d/WORKSPACE" ] && [ ! -f "\$d/WORKSPACE.bazel" ] && [ "\$d" != / ]; do
    d=\$(dirname "\$d")
  done
  if [ "\$d" != / ] && [ -x "\$d/tools/bazel" ]; then
    exec $RUNNER env BAZEL_REAL=/usr/bin/bazel "\$d/tools/bazel" "\$@"
  fi
fi
exec $RUNNER /usr/bin/bazel "\$@"
EOF
  fi
  BAZEL_NOTE="$f ($mode)"
}

# ---- main ----------------------------------------------------------------------
if [ "$(id -u)" != 0 ]; then
  command -v sudo >/dev/null || die "run as root"
  exec sudo -E bash "$0" "$@"
fi
[ -r /etc/debian_version ] || die "this needs a Debian host (no /etc/debian_version)"
command -v unshare >/dev/null || die "unshare (util-linux) is missing"
[[ $BIN =~ ^/[A-Za-z0-9._+/-]+$ ]] || die "--bin-dir=$BIN: need an absolute path of letters, digits and ._+-/"

lockdir=/run/lock
[ -d "$lockdir" ] || lockdir=/tmp
exec 9>>"$lockdir/rocm-pytorch-bootstrap.lock"
flock 9

T0=${EPOCHREALTIME/,/.}
elapsed() { awk -v a="$T0" -v b="${EPOCHREALTIME/,/.}" 'BEGIN { printf "%.1f", b - a }'; }
P=${P:-$DEFAULT_PREFIX}
check_prefix
# what lives outside the tree (cosign, bazelisk) follows the prefix: another
# prefix writes nothing to the default's place
STATE=$DEFAULT_STATE
[ "$P" = "$DEFAULT_PREFIX" ] || STATE=$P.state
BAZELISK=$STATE/bazelisk-$BAZELISK_VERSION
MIRROR=$(debian_mirror)
CONFIG="rocm-pytorch bootstrap v1 suite=$SUITE mirror=$MIRROR mmdebstrap=${MMDEBSTRAP_OPTS[*]} packages=${PACKAGES[*]}"
HASH=$(printf '%s\n' "$CONFIG" | sha256sum | cut -d' ' -f1)
if [ "$(head -n1 "$P/.rocm-pytorch-sid" 2>/dev/null)" != "$HASH" ]; then
  if [ -e "$P" ] && [ ! -e "$P/.rocm-pytorch-sid" ] && [ -n "$(ls -A "$P")" ]; then
    die "$P exists and was not made by this script; move it away or choose --prefix"
  fi
  mkdir -p "$(dirname "$P")"
  build_tree
  printf '%s\n# %s\n' "$HASH" "$CONFIG" >"$P/.rocm-pytorch-sid"
  log "sid tree ready in $(elapsed)s ($P)"
fi
write_tree_files
sync_host_cas "$P"
mkdir -p "$BIN"
write_runner
setup_pip_parse
write_bazel
# cosign (signing, `registry verify`): sid's static binary, outside the tree
[ -x "$STATE/bin/cosign" ] ||
  ROCM_PYTORCH_COSIGN_DIR=$STATE/bin bash "$(dirname "$0")/install_cosign.sh" "$MIRROR" ||
  die "installing cosign failed (tools/install_cosign.sh)"

# check the result; the version check is instant for Debian's Bazel only
case $BAZEL_NOTE in
  *"(bazelisk)"*) [ -x "$BAZELISK" ] || die "$BAZELISK is missing" ;;
  *)
    v=$("$BIN/bazel" --version 2>&1) || die "$BIN/bazel --version failed: $v"
    [ "$v" = "bazel $BAZEL_VERSION" ] || die "$BIN/bazel is '$v', not bazel $BAZEL_VERSION"
    ;;
esac
for t in usr/sbin/dockerd usr/bin/containerd usr/sbin/runc usr/bin/docker \
  usr/libexec/docker/cli-plugins/docker-buildx usr/bin/docker-registry usr/bin/busybox; do
  [ -x "$P/$t" ] || die "the tree lacks /$t"
done
found=$(command -v bazel || true)
if [ "$found" != "$BIN/bazel" ]; then
  log "warning: \`bazel\` on PATH is ${found:-missing}, not $BIN/bazel: put $BIN first on PATH"
fi
log "ok in $(elapsed)s: bazel is $BAZEL_NOTE; tree $P; container tools from the tree (python3 -m tools.engine start)"
