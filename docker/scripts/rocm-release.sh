# shellcheck shell=bash
# rocm_release ROCM_VERSION: the numeric ROCm release of an image tag, for
# PEP 440 local version labels ("10.1.0-full" -> "10.1.0"). Sourced.
rocm_release() {
    local release=${1%%-*}
    if ! [[ "$release" =~ ^[0-9]+(\.[0-9]+)*$ ]]; then
        echo "rocm_release: cannot read a ROCm release from '$1'" >&2
        return 1
    fi
    echo "$release"
}
