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
    local launcher="" use_ccache=0 line name value remote="" conf kind
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
    # server private to the step. Set whichever cache is chosen below: meson
    # puts sccache in front of the compilers by itself when it is on PATH
    # (NIXL's build).
    if command -v sccache >/dev/null; then
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
    # CMAKE_HIP_COMPILER_LAUNCHER; builds that run hipcc themselves (aiter,
    # torchvision's JIT-style extensions) reach the cache through
    # HIP_CLANG_LAUNCHER, which hipcc puts in front of the clang it calls.
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
