# shellcheck shell=bash
# Common environment of every native build FROM base. Sourced, not run:
#
#   . /usr/local/lib/rocm-pytorch/build-env.sh
#
# - checks that the PYTORCH_ROCM_ARCH build arg (a script's --arch) is one GPU
#   arch or an arch family's, separated by ';' as PyTorch's CMake list, and
#   matches the arch the parent image was pruned for (a mismatch would build
#   gfx1201 code against gfx950 kernels and tag it gfx1201); the scripts that
#   take --arch source this first, so they all refuse the same lists;
# - picks the compiler cache (below); sccache's server, whoever starts it,
#   listens on a socket of the RUN step's own (SCCACHE_SERVER_UDS);
# - sets MAX_JOBS from the cores *and* the memory: a HIP translation unit
#   can take 4 GiB, and an OOM-killed build fails hours in.
#
# The compiler cache is a setting of the build host, not of the image
# ([compiler_cache] of the mirror settings, docs/mirrors.md): every RUN that
# compiles mounts it as the BuildKit secrets compiler-cache (an env file of
# NAME=VALUE lines, values quoted for the shell, read here without running it)
# and compiler-cache-credentials (the credentials file as the host has it).
# Without them: ccache in the BuildKit cache mount at /root/.cache/ccache (the
# default, "local"). With a remote backend the cache server is asked first
# (ROCM_PYTORCH_CC_PROBE_TIMEOUT, 3 s) and, for sccache, its server started
# on it; a cache that does not answer never fails the build: one line says
# so and the build uses the local ccache. sccache's credentials reach only
# its server's environment (WebDAV and Redis user:password) or are the file
# itself (AWS_SHARED_CREDENTIALS_FILE, SCCACHE_GCS_KEY_PATH); ccache's go in a
# config file on the step's tmpfs (CCACHE_CONFIGPATH), never in a variable.
#
# What the cache did: every script that sources this and compiles ends with
# rocm_pytorch_cc_stats, which prints one line of what the compiler cache
# did since this was sourced, one of:
#
#   compiler cache: ccache (local): 812 hits, 20 misses, 97.6 % hits
#   compiler cache: sccache (sccache-webdav at http://cache:8080/cc): 0 hits, 120 misses, 0.0 % hits
#   compiler cache: ccache (local): no compiles
#   compiler cache: ccache (local): no stats (ccache --show-log-stats failed (exit 139))
#   compiler cache: none
#
# i.e. `compiler cache: LAUNCHER (WHERE): H hits, M misses, R % hits`, where
# LAUNCHER is ccache or sccache; WHERE is `local` (the cache mount, also after
# a fallback) or `BACKEND at ENDPOINT` as the start line above names it (no
# credentials); H and M count the compiles the cache looked up (C, C++, HIP,
# assembler) that hit and missed it: calls it cannot cache (links,
# preprocessing only) are neither; R is 100*H/(H+M), one decimal, rounded
# half up. `no compiles` when H+M is 0, `no stats (REASON)` when the
# counters cannot be read (never a failed build). tools/imagebuild/compile_stats.py
# reads the line from the build log (docs/images.md, Compiler cache). The line
# goes to stderr: BuildKit keeps the first 2 MiB of each stream of a step
# (BUILDKIT_STEP_LOG_MAX_SIZE) and a compile's own output fills stdout.
# ccache counts in a stats log of this sourcing's own on the step's tmpfs
# (CCACHE_STATSLOG): the cache mount is shared with the steps of other image
# builds, whose counts `ccache --show-stats` would mix in and whose counts
# `--zero-stats` would clobber. sccache's server is the step's own
# (SCCACHE_SERVER_UDS); its counts since this was sourced are read.
#
# ROCM_PYTORCH_BUILD_ENV=compiler-cache sets up the compiler cache only (the
# triton build: no GPU arch). ROCM_PYTORCH_SECRETS_DIR moves /run/secrets and
# ROCM_PYTORCH_RUN_DIR /dev/shm (tests).

rocm_pytorch_arch_check() {
    local built_for
    built_for=$(cat /etc/rocm-pytorch/gpu-arch 2>/dev/null || true)
    if [ -z "${PYTORCH_ROCM_ARCH:-}" ]; then
        echo "build-env: PYTORCH_ROCM_ARCH is not set" >&2
        return 1
    fi
    case "$PYTORCH_ROCM_ARCH" in
        *' '*)
            echo "build-env: --arch (PYTORCH_ROCM_ARCH) takes archs separated by ';', got '$PYTORCH_ROCM_ARCH'" >&2
            return 1
            ;;
    esac
    local member members
    IFS=';' read -r -a members <<<"$PYTORCH_ROCM_ARCH"
    for member in "${members[@]}"; do
        case "$member" in
            gfx*) ;;
            *)
                echo "build-env: --arch (PYTORCH_ROCM_ARCH) '$PYTORCH_ROCM_ARCH' is not a GPU architecture (gfx...)" >&2
                return 1
                ;;
        esac
    done
    if [ -n "$built_for" ] && [ "$built_for" != "$PYTORCH_ROCM_ARCH" ]; then
        echo "build-env: PYTORCH_ROCM_ARCH=$PYTORCH_ROCM_ARCH, but the parent image keeps kernels for $built_for" >&2
        return 1
    fi
}

# rocm_pytorch_cc_probe BACKEND URL [CREDENTIALS [CA]]: prints why the cache
# server does not answer, nothing when it does. HTTP: any answer but a 5xx
# (and a 401/403 where the credentials are HTTP's own); Redis: a reply to PING.
rocm_pytorch_cc_probe() {
    local python
    python=$(command -v python3 || command -v python || true)
    if [ -z "$python" ]; then
        echo "no python here to ask it"
        return 0
    fi
    "$python" - "$@" <<'PY' || echo "the probe failed"
import base64, os, socket, ssl, sys, urllib.error, urllib.parse, urllib.request


def probe(backend, url, credentials="", ca=""):
    timeout = float(os.environ.get("ROCM_PYTORCH_CC_PROBE_TIMEOUT") or 3)
    context = ssl.create_default_context(cafile=ca or None)
    parts = urllib.parse.urlsplit(url)
    if backend == "sccache-redis":
        with socket.create_connection((parts.hostname, parts.port or 6379), timeout) as sock:
            if parts.scheme == "rediss":
                sock = context.wrap_socket(sock, server_hostname=parts.hostname)
            sock.sendall(b"PING\r\n")
            return "" if sock.recv(1) else "it closed the connection"
    handlers = [urllib.request.HTTPSHandler(context=context)]
    if backend == "ccache-http":
        handlers.append(urllib.request.ProxyHandler({}))  # ccache uses no proxy
    request = urllib.request.Request(url)
    http_auth = backend in ("sccache-webdav", "ccache-http")
    if credentials and http_auth:
        with open(credentials, "rb") as f:
            token = base64.b64encode(f.read().strip()).decode()
        request.add_header("Authorization", "Basic " + token)
    try:
        with urllib.request.build_opener(*handlers).open(request, timeout=timeout) as r:
            status = r.status
    except urllib.error.HTTPError as e:
        status = e.code
    if status >= 500 or (http_auth and status in (401, 403)):
        return f"HTTP {status}"
    return ""


try:
    reason = probe(*sys.argv[1:])
except Exception as e:  # any failure is a reason to build without it
    reason = str(getattr(e, "reason", "") or e) or type(e).__name__
print(" ".join(reason.split())[:200])
PY
}

# rocm_pytorch_cc_start_sccache [NAME=VALUE...]: starts sccache's server with
# these settings and checks that it uses them; prints why not, nothing when so.
rocm_pytorch_cc_start_sccache() {
    local out location
    # export in a subshell: the values reach the server's environment, no argv.
    # A server already running (build-env.sh sourced twice in a step) is fine.
    # shellcheck disable=SC2163 # "$@" are NAME=VALUE words
    if ! out=$( (export "$@" && timeout 60 sccache --start-server) 2>&1) \
        && [[ "$out" != *"Address in use"* ]]; then
        out=$(printf '%s\n' "$out" | grep -i -m 1 error || printf '%s\n' "$out" | tail -n 1)
        out=${out#sccache: }
        out=${out#error: }
        echo "${out:-sccache --start-server failed}" | tr -s '[:space:]' ' ' | cut -c 1-200
        return 0
    fi
    if ! out=$(sccache --show-stats 2>&1); then
        echo "sccache --show-stats failed: $(printf '%s\n' "$out" | tail -n 1 | cut -c 1-160)"
        return 0
    fi
    location=$(printf '%s\n' "$out" | sed -n 's/^Cache location[[:space:]]*//p' | head -n 1)
    case "$location" in
        '') echo "sccache --show-stats names no cache location" ;;
        'Local disk'*) echo "sccache uses its local disk instead" ;;
    esac
}

rocm_pytorch_compiler_cache() {
    local secrets settings creds ca backend=local endpoint="" reason="" note=""
    local launcher="" use_ccache=0 line name value remote="" conf kind where
    local sccache_dir=${ROCM_PYTORCH_SCCACHE_DIR:-/opt/sccache/bin} path_before=$PATH
    local -a cc_env=() server_env=()
    secrets=${ROCM_PYTORCH_SECRETS_DIR:-/run/secrets}
    settings=$secrets/compiler-cache
    creds=$secrets/compiler-cache-credentials
    ca=$secrets/mirror-ca
    [ -f "$creds" ] || creds=""
    [ -f "$ca" ] || ca=""
    # sccache's client finds its server at 127.0.0.1:4226 by default. On an
    # engine without a bridge (tools/engine's) every RUN step shares the host's
    # network namespace, so two steps at once would share one server, living
    # in the other step's container: its files ("No such file" hashing ours),
    # and gone when that step ends. A socket on this step's own tmpfs keeps the
    # server private to the step. Set whichever cache is chosen below.
    #
    # base keeps sccache off PATH, in its own directory (sccache_dir): meson
    # (NIXL's build) and vLLM's setup.py (is_sccache_available) put sccache in
    # front of the compilers by themselves whenever it is on PATH, and with no
    # backend of its own that is sccache's disk cache, lost with the step.
    # The directory goes first on PATH only when an sccache backend is the
    # launcher; otherwise they find ccache (/usr/bin/ccache). An sccache on
    # PATH already (an image of one's own) is used as it is.
    if [ -x "$sccache_dir/sccache" ] || command -v sccache >/dev/null; then
        export SCCACHE_SERVER_UDS=${SCCACHE_SERVER_UDS:-/dev/shm/rocm-pytorch-sccache.sock}
    fi
    if [ -f "$settings" ]; then
        while IFS= read -r line || [ -n "$line" ]; do
            case "$line" in '' | '#'*) continue ;; esac
            name=${line%%=*}
            value=${line#*=}
            # tools/mirrors quotes each value for the shell: a word, or '...'
            # (the settings refuse quotes in a value)
            case "$value" in \'*\') value=${value:1:${#value}-2} ;; esac
            case "$name" in
                ROCM_PYTORCH_CC_BACKEND) backend=$value ;;
                ROCM_PYTORCH_CC_ENDPOINT) endpoint=$value ;;
                SCCACHE_* | CCACHE_REMOTE_STORAGE) cc_env+=("$name=$value") ;;
                *) reason="its settings name $name, unknown to build-env.sh" ;;
            esac
        done <"$settings"
    fi
    case "$backend" in
        local) use_ccache=1 ;;
        none) ;;
        sccache-webdav | sccache-s3 | sccache-gcs | sccache-redis)
            if [ -z "$reason" ] && [ -x "$sccache_dir/sccache" ]; then
                # base's sccache, off PATH until it is the launcher (above)
                export PATH="$sccache_dir:$PATH"
            fi
            if [ -z "$reason" ] && ! command -v sccache >/dev/null; then
                # the triton build: its image has the compilers but no sccache
                note=" (this image has no sccache for $backend)"
                use_ccache=1
            elif [ -z "$reason" ]; then
                reason=$(rocm_pytorch_cc_probe "$backend" "$endpoint" "$creds" "$ca")
            fi
            if [ -z "$reason" ] && [ -z "$note" ]; then
                server_env=(SCCACHE_IDLE_TIMEOUT=0)
                [ -z "$ca" ] || server_env+=("SSL_CERT_FILE=$ca")
                case "$backend:$creds" in
                    *:) ;;
                    sccache-s3:*) cc_env+=("AWS_SHARED_CREDENTIALS_FILE=$creds") ;;
                    sccache-gcs:*) cc_env+=("SCCACHE_GCS_KEY_PATH=$creds") ;;
                    *)
                        # user:password, for the server only (never exported)
                        kind=${backend#sccache-}
                        kind=${kind^^}
                        IFS= read -r line <"$creds" || true
                        [ -z "${line%%:*}" ] || server_env+=("SCCACHE_${kind}_USERNAME=${line%%:*}")
                        server_env+=("SCCACHE_${kind}_PASSWORD=${line#*:}")
                        ;;
                esac
                server_env+=("${cc_env[@]}")
                reason=$(rocm_pytorch_cc_start_sccache "${server_env[@]}")
                if [ -z "$reason" ]; then
                    [ "${#cc_env[@]}" -eq 0 ] || export "${cc_env[@]}"
                    # The server dies with the RUN step anyway; no idle timeout
                    # keeps it from quitting during long phases without
                    # compiles (hipify, links).
                    export SCCACHE_IDLE_TIMEOUT=0
                    launcher=sccache
                else
                    sccache --stop-server >/dev/null 2>&1 || true
                fi
            fi
            if [ "$launcher" != sccache ]; then
                # the local ccache instead: no sccache on PATH for meson and vLLM
                export PATH="$path_before"
            fi
            ;;
        ccache-http)
            if [ -z "$reason" ] && ! command -v ccache >/dev/null; then
                reason="this image has no ccache"
            elif [ -z "$reason" ]; then
                reason=$(rocm_pytorch_cc_probe "$backend" "$endpoint" "$creds" "$ca")
            fi
            for line in "${cc_env[@]}"; do
                [ "${line%%=*}" != CCACHE_REMOTE_STORAGE ] || remote=${line#*=}
            done
            [ -n "$reason" ] || [ -n "$remote" ] || reason="its settings name no CCACHE_REMOTE_STORAGE"
            if [ -z "$reason" ] && [ -n "$creds" ]; then
                # ccache reads user:password from the URL: in a config file of
                # the step's tmpfs (no layer), not in a variable of the build
                IFS= read -r line <"$creds" || true
                conf=${ROCM_PYTORCH_RUN_DIR:-/dev/shm}/rocm-pytorch-ccache.conf
                if (umask 077 && printf 'remote_storage = http://%s@%s\n' "$line" "${remote#http://}" >"$conf"); then
                    export CCACHE_CONFIGPATH=$conf
                else
                    reason="cannot write $conf"
                fi
            elif [ -z "$reason" ]; then
                export CCACHE_REMOTE_STORAGE=$remote
            fi
            # A hit in the local cache mount is written to the team's as well
            # (ccache's reshare): what this engine compiled before the team
            # cache was set, or while it did not answer, reaches the others.
            [ -n "$reason" ] || export CCACHE_RESHARE=true
            [ -n "$reason" ] || use_ccache=1
            ;;
        *) [ -n "$reason" ] || reason="build-env.sh knows no backend '$backend'" ;;
    esac
    if [ -n "$reason" ]; then
        if command -v ccache >/dev/null; then
            line="building with the local ccache"
        else
            line="building without a compiler cache"
        fi
        echo "build-env: compiler cache $backend at ${endpoint:-(no endpoint)} does not answer ($reason): $line" >&2
        use_ccache=1
    fi
    if [ "$use_ccache" -eq 1 ] && command -v ccache >/dev/null; then
        export CCACHE_DIR=/root/.cache/ccache
        export CCACHE_MAXSIZE=${CCACHE_MAXSIZE:-50G}
        # Paths differ between builds of different projects; hashing content
        # instead keeps hits across them.
        export CCACHE_BASEDIR=${CCACHE_BASEDIR:-$PWD}
        export CCACHE_COMPILERCHECK=content
        launcher=ccache
    fi
    # CMake's HIP language (PyTorch compiles its HIP sources with it since
    # 2.13, cmake/public/LoadHIP.cmake: enable_language(HIP)) honours
    # CMAKE_HIP_COMPILER_LAUNCHER; builds that run hipcc themselves (MAGMA,
    # UCX, aiter, torchvision's extensions) reach the cache through the clang
    # rocm_pytorch_cc_compilers gives hipcc (HIP_CLANG_PATH), and through
    # HIP_CLANG_LAUNCHER with a hipcc that reads it.
    if [ -n "$launcher" ]; then
        export CMAKE_C_COMPILER_LAUNCHER=$launcher
        export CMAKE_CXX_COMPILER_LAUNCHER=$launcher
        export CMAKE_HIP_COMPILER_LAUNCHER=$launcher
        export HIP_CLANG_LAUNCHER=$launcher
        if [ "$backend" != local ] && [ -z "$note" ]; then
            note=" ($backend at $endpoint)"
        fi
    fi
    # one line: the fallback's warning says it all
    [ -n "$reason" ] || echo "build-env: compiler cache: ${launcher:-none}$note"
    where=local
    if [ -z "$reason" ] && [ "$note" = " ($backend at $endpoint)" ]; then
        where="$backend at $endpoint"
    fi
    rocm_pytorch_cc_stats_start "${launcher:-none}" "$where"
}

# rocm_pytorch_cc_compilers DIR: CC and CXX through the launcher, for builds
# that take their C and C++ compilers from CC and CXX and read none of the
# launcher variables: setuptools (distutils' customize_compiler: CC, CXX,
# and LDSHARED from CC), torch.utils.cpp_extension's ninja builds (their .cpp
# with get_cxx_compiler(): $CXX, else c++; .hip with hipcc, whose clang it
# wraps too: rocm_pytorch_cc_hip_clang), autotools (UCX), make with hipcc as
# every compiler (MAGMA) and meson (NIXL: a CC of its own turns meson's own
# pick of a launcher off). Each is a one-line script in DIR, named
# for the compiler it runs (gcc, g++: torch's check of the compiler's ABI
# reads the name), that execs the launcher with that compiler: one word, as
# CMake and a Makefile take it as much as setuptools. DIR is the caller's:
# not /dev/shm, which BuildKit mounts noexec. Not for CMake builds: CMake would
# take such a CC for the compiler itself and put its CMAKE_*_COMPILER_LAUNCHER
# in front of it again (two lookups a compile); they have the launcher
# variables. Without a launcher (backend none, no ccache), CC and CXX stay.
rocm_pytorch_cc_compilers() {
    local dir=$1 launcher=${ROCM_PYTORCH_CC_LAUNCHER:-none} var name real wrapper
    [ "$launcher" != none ] || return 0
    launcher=$(command -v "$launcher") || return 0
    mkdir -p "$dir" || return 1
    dir=$(cd "$dir" && pwd)
    for var in CC CXX; do
        if [ "$var" = CC ]; then name=${CC:-gcc}; else name=${CXX:-g++}; fi
        # a CC of several words (flags, a launcher already) is left as it is
        real=$(command -v "$name" 2>/dev/null) || continue
        # ours already (sourced twice, or a build script run by another)
        ! grep -qs '^# rocm_pytorch_cc_compilers$' "$real" || continue
        wrapper=$dir/${real##*/}
        printf '#!/bin/bash\n# rocm_pytorch_cc_compilers\nexec %q %q "$@"\n' "$launcher" "$real" >"$wrapper" || return 1
        chmod 755 "$wrapper" || return 1
        export "$var=$wrapper"
    done
    [ -z "${CC:-}${CXX:-}" ] || echo "build-env: CC=${CC:-} CXX=${CXX:-} ($ROCM_PYTORCH_CC_LAUNCHER in front)"
    rocm_pytorch_cc_hip_clang "$dir/hip-clang" "$launcher"
}

# rocm_pytorch_cc_hip_clang DIR LAUNCHER: hipcc's compiles through the
# launcher. hipcc runs clang++ from $HIP_CLANG_PATH, else from the LLVM it
# was built for (`hipconfig --hipclangpath`); Debian's hipcc (7.0.2, in sid's
# ROCm) reads no HIP_CLANG_LAUNCHER, which came to hipcc later (ROCm's
# llvm-project, amd/hipcc: HIP_CLANG_LAUNCHER; TheRock's
# build_tools/setup_sccache_rocm.py wraps ROCm's clang for hipccs without
# it). So DIR/bin is that LLVM's bin directory as symbolic links, except
# clang and clang++: one-line scripts that exec the launcher with the real
# one (so clang still finds its resource directory and ROCm beside its real
# path), DIR/lib its lib (hip-config.cmake reads HIP_CLANG_PATH/../lib), and
# HIP_CLANG_PATH=DIR/bin. HIP_CLANG_LAUNCHER is then unset: a hipcc that
# reads it would put the launcher in front twice. Without hipconfig, nothing.
rocm_pytorch_cc_hip_clang() {
    local dir=$1 launcher=$2 real lib entry name
    command -v hipconfig >/dev/null || return 0
    real=$(hipconfig --hipclangpath 2>/dev/null) || return 0
    [ -x "$real/clang++" ] || return 0
    # ours already (sourced twice, or a build script run by another)
    ! grep -qs '^# rocm_pytorch_cc_compilers$' "$real/clang++" || return 0
    lib=$(cd "$real/../lib" 2>/dev/null && pwd) || lib=""
    mkdir -p "$dir/bin" || return 1
    dir=$(cd "$dir" && pwd)
    for entry in "$real"/*; do
        ln -sfn "$entry" "$dir/bin/${entry##*/}" || return 1
    done
    [ -z "$lib" ] || ln -sfn "$lib" "$dir/lib" || return 1
    for name in clang clang++; do
        rm -f "$dir/bin/$name"
        printf '#!/bin/bash\n# rocm_pytorch_cc_compilers\nexec %q %q "$@"\n' "$launcher" "$real/$name" >"$dir/bin/$name" || return 1
        chmod 755 "$dir/bin/$name" || return 1
    done
    export HIP_CLANG_PATH=$dir/bin
    unset HIP_CLANG_LAUNCHER
    echo "build-env: hipcc's clang: HIP_CLANG_PATH=$HIP_CLANG_PATH ($ROCM_PYTORCH_CC_LAUNCHER in front of $real/clang++)"
}

# rocm_pytorch_cc_stats_start LAUNCHER WHERE: what rocm_pytorch_cc_stats
# needs (shell variables of the sourcing shell, not exported); for ccache a
# stats log of this sourcing's own, for sccache its server's counts now.
rocm_pytorch_cc_stats_start() {
    local run_dir=${ROCM_PYTORCH_RUN_DIR:-/dev/shm}
    ROCM_PYTORCH_CC_LAUNCHER=$1
    ROCM_PYTORCH_CC_WHERE=$2
    ROCM_PYTORCH_CC_NO_STATS=""
    ROCM_PYTORCH_CC_BASE="0 0"
    case "$1" in
        ccache)
            if [ -d "$run_dir" ] && [ -w "$run_dir" ]; then
                # ccache creates it with the first compile it logs; none: no compiles
                export CCACHE_STATSLOG=$run_dir/rocm-pytorch-ccache-stats.$$.$RANDOM
                rm -f "$CCACHE_STATSLOG"
            else
                unset CCACHE_STATSLOG
                ROCM_PYTORCH_CC_NO_STATS="cannot write a stats log in $run_dir"
            fi
            ;;
        sccache)
            # a server already running in this step (sourced twice) counted before
            ROCM_PYTORCH_CC_BASE=$(rocm_pytorch_cc_sccache_counts 2>/dev/null) || ROCM_PYTORCH_CC_BASE="0 0"
            ;;
    esac
}

# rocm_pytorch_cc_ccache_counts: prints "HITS MISSES" of ccache's stats log,
# or why not (and returns 1).
rocm_pytorch_cc_ccache_counts() {
    local log=${CCACHE_STATSLOG:-} out rc=0 hits misses
    if [ -n "${ROCM_PYTORCH_CC_NO_STATS:-}" ]; then
        echo "$ROCM_PYTORCH_CC_NO_STATS"
        return 1
    fi
    if [ -z "$log" ]; then
        echo "CCACHE_STATSLOG is not set"
        return 1
    fi
    # no log or an empty one: ccache logged no call (ccache 4.7 crashes reading an empty log)
    if [ ! -s "$log" ]; then
        echo "0 0"
        return 0
    fi
    out=$(ccache --show-log-stats 2>&1) || rc=$?
    if [ "$rc" -ne 0 ]; then
        out=$(printf '%s\n' "$out" | sed -n '$p' | cut -c 1-160)
        echo "ccache --show-log-stats failed (exit $rc)${out:+: $out}"
        return 1
    fi
    # the first Hits: and Misses: lines, under "Cacheable calls:" (ccache 4.7 to 4.14):
    #   Cacheable calls:   5 / 8 (62.50%)
    #     Hits:            2 / 5 (40.00%)
    #     ...
    #     Misses:          3 / 5 (60.00%)
    # (the later ones are per storage: "Local storage:", "Remote storage:")
    hits=$(printf '%s\n' "$out" | sed -n '/^[[:space:]]*Hits:[[:space:]]*[0-9]/{s/^[[:space:]]*Hits:[[:space:]]*\([0-9]*\).*/\1/p;q;}')
    misses=$(printf '%s\n' "$out" | sed -n '/^[[:space:]]*Misses:[[:space:]]*[0-9]/{s/^[[:space:]]*Misses:[[:space:]]*\([0-9]*\).*/\1/p;q;}')
    if [ -z "$hits" ] || [ -z "$misses" ]; then
        echo "ccache --show-log-stats printed no Hits: and Misses: lines"
        return 1
    fi
    echo "$hits $misses"
}

# rocm_pytorch_cc_sccache_counts: prints "HITS MISSES" of sccache's server
# (C/C++, HIP and assembler compiles), or why not (and returns 1).
rocm_pytorch_cc_sccache_counts() {
    local python out rc=0
    python=$(command -v python3 || command -v python || true)
    if [ -z "$python" ]; then
        echo "no python here to read sccache's stats"
        return 1
    fi
    out=$(sccache --show-stats --stats-format=json 2>&1) || rc=$?
    if [ "$rc" -ne 0 ]; then
        out=$(printf '%s\n' "$out" | sed -n '$p' | cut -c 1-160)
        echo "sccache --show-stats failed (exit $rc)${out:+: $out}"
        return 1
    fi
    # sccache 0.16, one line: {"stats": {"cache_hits": {"counts": {"C/C++": 2, "HIP": 5},
    # ...}, "cache_misses": {"counts": {...}}, ...}, ...}; a language it did not see is
    # absent (its stderr, say "Starting the server...", is on other lines)
    "$python" -c '
import json, sys
try:
    text = sys.stdin.read()
    stats = json.loads(next((x for x in text.splitlines() if x.startswith("{")), text))["stats"]
    hits, misses = (
        sum(int(stats[key]["counts"].get(lang, 0)) for lang in ("C/C++", "HIP", "Assembler"))
        for key in ("cache_hits", "cache_misses")
    )
except Exception as e:
    print(" ".join(f"sccache --stats-format=json is not as expected: {type(e).__name__}: {e}".split())[:200])
    sys.exit(1)
print(hits, misses)
' <<<"$out" || return 1
}

# rocm_pytorch_cc_stats: the one line on what the compiler cache did since
# build-env.sh was sourced (the format is at the top), on stderr. Never fails.
rocm_pytorch_cc_stats() {
    local launcher=${ROCM_PYTORCH_CC_LAUNCHER:-none} counts="" hits="" misses="" total rate
    local base_hits=0 base_misses=0 line
    if [ "$launcher" = none ]; then
        echo "compiler cache: none" >&2
        return 0
    fi
    line="compiler cache: $launcher (${ROCM_PYTORCH_CC_WHERE:-local}): "
    if [ "$launcher" = ccache ]; then
        counts=$(rocm_pytorch_cc_ccache_counts 2>&1) || hits=failed
    else
        counts=$(rocm_pytorch_cc_sccache_counts 2>&1) || hits=failed
        read -r base_hits base_misses <<<"${ROCM_PYTORCH_CC_BASE:-0 0}" || true
    fi
    if [ "$hits" = failed ]; then
        counts=$(printf '%s' "$counts" | tr -s '[:space:]' ' ' | cut -c 1-200)
        echo "${line}no stats (${counts:-no reason given})" >&2
        return 0
    fi
    read -r hits misses <<<"$counts" || true
    if ! [[ "$hits" =~ ^[0-9]{1,15}$ && "$misses" =~ ^[0-9]{1,15}$ ]]; then
        echo "${line}no stats (not two counts: $(printf '%s' "$counts" | tr -s '[:space:]' ' ' | cut -c 1-100))" >&2
        return 0
    fi
    hits=$((10#$hits))
    misses=$((10#$misses))
    # what the step's sccache server counted before this sourcing (unless it restarted)
    if [[ "$base_hits" =~ ^[0-9]{1,15}$ && "$base_misses" =~ ^[0-9]{1,15}$ ]] \
        && [ "$hits" -ge "$((10#$base_hits))" ] && [ "$misses" -ge "$((10#$base_misses))" ]; then
        hits=$((hits - 10#$base_hits))
        misses=$((misses - 10#$base_misses))
    fi
    total=$((hits + misses))
    if [ "$total" -eq 0 ]; then
        echo "${line}no compiles" >&2
        return 0
    fi
    rate=$(((2000 * hits + total) / (2 * total))) # tenths of a per cent, half up
    echo "${line}$hits hits, $misses misses, $((rate / 10)).$((rate % 10)) % hits" >&2
    return 0
}

rocm_pytorch_max_jobs() {
    local cores mem_kib limit jobs
    cores=$(nproc)
    mem_kib=$(awk '/^MemTotal:/ {print $2}' /proc/meminfo)
    # A container memory limit is what actually kills the build.
    limit=$(cat /sys/fs/cgroup/memory.max 2>/dev/null || echo max)
    if [[ "$limit" =~ ^[0-9]+$ ]] && [ $((limit / 1024)) -lt "$mem_kib" ]; then
        mem_kib=$((limit / 1024))
    fi
    jobs=$((mem_kib / (4 * 1024 * 1024)))
    [ "$jobs" -le "$cores" ] || jobs=$cores
    [ "$jobs" -ge 1 ] || jobs=1
    echo "$jobs"
}

if [ "${ROCM_PYTORCH_BUILD_ENV:-}" = compiler-cache ]; then
    rocm_pytorch_compiler_cache
    return 0
fi
# Sourced: `return` makes `. build-env.sh` itself fail, with or without set -e.
rocm_pytorch_arch_check || return 1
rocm_pytorch_compiler_cache
export MAX_JOBS=${MAX_JOBS:-$(rocm_pytorch_max_jobs)}
export CMAKE_BUILD_PARALLEL_LEVEL=$MAX_JOBS
echo "build-env: PYTORCH_ROCM_ARCH=$PYTORCH_ROCM_ARCH MAX_JOBS=$MAX_JOBS"
