"""Print pip constraints that pin the packages this image family builds itself.

Usage: python own-packages.py > constraints.txt

torch, triton and friends in these images are our ROCm builds for one GPU
architecture. A resolver that meets `torch>=2.x` in some dependency would
happily replace them with a PyPI build for another accelerator, so every one
of them that is installed is pinned to exactly the installed version. Those
not installed yet are left free: the wheel being installed provides them.
"""

import importlib.metadata

OWN_PACKAGES = (
    "torch",
    "triton",
    "torchvision",
    "amd-aiter",
    "cupy",
    "nixl",
    "vllm",
    "lmcache",
)


def main() -> None:
    for name in OWN_PACKAGES:
        try:
            version = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            continue
        print(f"{name}=={version}")


if __name__ == "__main__":
    main()
