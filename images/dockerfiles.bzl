"""The build-context files each real Dockerfile COPYs or bind-mounts.

Keyed by the catalogue's `dockerfile` path; only these files (and the
Dockerfile) are in that image's build context, so editing a script rebuilds
only the images that use it. //tests/dockerfiles checks this table against
what the Dockerfiles reference.
"""

_S = "//docker:scripts/"

_WHEEL_BUILD = [
    _S + "fetch-source.sh",
    _S + "build-env.sh",
    _S + "own-packages.py",
    _S + "build-wheel.sh",
]

DOCKERFILE_SRCS = {
    "docker/Dockerfile.aiter": _WHEEL_BUILD,
    "docker/Dockerfile.base": [
        _S + "apt-install.sh",
        _S + "install-python.sh",
        _S + "build-tools.txt",
        _S + "build-env.sh",
    ],
    "docker/Dockerfile.cupy": _WHEEL_BUILD,
    "docker/Dockerfile.lmcache": _WHEEL_BUILD + [
        _S + "install-wheels.sh",
        _S + "check-shared-libs.sh",
        _S + "apt-install.sh",
    ],
    "docker/Dockerfile.nixl": _WHEEL_BUILD + [
        _S + "apt-install.sh",
        _S + "repair-wheel.py",
        _S + "build-ucx.sh",
        _S + "nixl-rocm.py",
    ],
    "docker/Dockerfile.pytorch": [
        _S + "apt-install.sh",
        _S + "fetch-source.sh",
        _S + "build-env.sh",
        _S + "rocm-release.sh",
        _S + "own-packages.py",
        _S + "build-magma.sh",
        _S + "build-aotriton.sh",
        _S + "build-pytorch.sh",
        _S + "install-wheels.sh",
        _S + "smoke-test-torch.py",
        _S + "test-requirements.txt",
    ],
    "docker/Dockerfile.rocm-runtime": [_S + "prune-rocm-arch.sh"],
    "docker/Dockerfile.runtime": [
        _S + "apt-install.sh",
        _S + "install-python.sh",
        _S + "own-packages.py",
        _S + "install-wheels.sh",
        _S + "create-user.sh",
        _S + "check-shared-libs.sh",
        _S + "smoke-test-torch.py",
    ],
    "docker/Dockerfile.torchvision": _WHEEL_BUILD + [
        _S + "apt-install.sh",
        _S + "repair-wheel.py",
    ],
    "docker/Dockerfile.triton": [
        _S + "apt-install.sh",
        _S + "install-python.sh",
        _S + "build-tools.txt",
        _S + "fetch-source.sh",
        _S + "own-packages.py",
        _S + "build-env.sh",
        _S + "build-triton.sh",
    ],
    "docker/Dockerfile.vllm": _WHEEL_BUILD + [
        _S + "install-wheels.sh",
        _S + "check-shared-libs.sh",
        _S + "http-healthcheck.py",
        _S + "apt-install.sh",
        _S + "install-rust.sh",
        _S + "build-flash-attn.sh",
        _S + "check-vllm-wheel.py",
    ],
}
