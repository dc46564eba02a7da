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
# - picks the compiler cache: sccache when base was built with a backend
#   (see configure-sccache.sh), else ccache in the BuildKit cache mount at
#   /root/.cache/ccache, else none; sccache's server, whoever starts it,
#   listens on a socket of the RUN step's own (SCCACHE_SERVER_UDS);
# - sets MAX_JOBS from the cores *and* the memory: a HIP translation unit
#   can take 4 GiB, and an OOM-killed build fails hours in.

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

rocm_pytorch_compiler_cache() {
    local launcher=""
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
    if [ -s /etc/rocm-pytorch/sccache.env ] && command -v sccache >/dev/null; then
        set -a
        # shellcheck source=/dev/null
        . /etc/rocm-pytorch/sccache.env
        set +a
        if [ -f /run/secrets/sccache_aws ]; then
            export AWS_SHARED_CREDENTIALS_FILE=/run/secrets/sccache_aws
        fi
        # The server dies with the RUN step anyway; no idle timeout keeps it
        # from quitting during long phases without compiles (hipify, links).
        export SCCACHE_IDLE_TIMEOUT=0
        launcher=sccache
    elif command -v ccache >/dev/null; then
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
        echo "build-env: compiler cache: $launcher"
    fi
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

# Sourced: `return` makes `. build-env.sh` itself fail, with or without set -e.
rocm_pytorch_arch_check || return 1
rocm_pytorch_compiler_cache
export MAX_JOBS=${MAX_JOBS:-$(rocm_pytorch_max_jobs)}
export CMAKE_BUILD_PARALLEL_LEVEL=$MAX_JOBS
echo "build-env: PYTORCH_ROCM_ARCH=$PYTORCH_ROCM_ARCH MAX_JOBS=$MAX_JOBS"
