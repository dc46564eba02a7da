"""Give a Debian root file system with Debian's ROCm the layout of AMD's ROCm image.

Run by mmdebstrap as a customize hook (tools/rehearsal/upstream.py), as root,
on the finished root file system before it is packed, with this file's own
interpreter (stdlib only):

    layout.py ROOT --rocm-release 10.1.0 --lock upstream.lock \\
        --sources SOURCES_FILE --preferences PREFERENCES_FILE \\
        [--amd-smi-sdist amdsmi-X.tar.gz --amd-smi-c amd_smi_standin.c]

1. Checks that the packages installed are exactly the lock's, at the lock's
   versions (a mirror that moved on would otherwise change the image silently).
2. Moves what the ROCm team's packages install under /usr (lib/<multiarch>,
   include, bin, share) to /opt/rocm-<release>, keeping every file name:
   lib/ with each library's `library/` kernel directory (Debian's
   lib/rocblas/<version>/library becomes AMD's lib/rocblas/library),
   share/miopen/, bin/hipcc, include/. As in AMD's image, nothing of ROCm's
   lib/ stays at Debian's multiarch path (the loader finds the libraries
   through /etc/ld.so.conf.d only); headers, programs and data keep a
   symbolic link at their old path (docs/rehearsal.md, "How the stand-in
   differs from AMD's image"). Then /opt/rocm -> rocm-<release>,
   lib/llvm (AMD's compiler directory) -> Debian's LLVM that carries the
   device libraries (and lib/llvm-<N>, where Debian's hipcc looks for it),
   .info/version, and the loader configuration.
3. With ``--amd-smi-sdist`` and ``--amd-smi-c`` (tools/rehearsal/amdsmi.py): the
   one part that is not Debian's, AMD SMI. AMD's amdsmi sdist unpacked into
   share/amd_smi (as AMD's image has it: pip installs that directory), and
   the generated stand-in libamd_smi.so compiled into lib/ by the root file
   system's own clang (a locked package: the same bytes on every build).
4. Makes the apt configuration the image's: the stand-in archive's sources,
   the ROCm pin, no trace of the mirror the build used; and drops what
   mmdebstrap copied from the build host (hostname, resolv.conf, hosts).
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tomllib
from pathlib import Path

MULTIARCH = "usr/lib/x86_64-linux-gnu"
# where Debian puts it -> where AMD's image has it, under /opt/rocm-<release>
MOVES = ((MULTIARCH, "lib"), ("usr/include", "include"), ("usr/bin", "bin"), ("usr/share", "share"))
SKIP_SHARE = {"doc", "man", "lintian", "bug", "locale", "bash-completion", "doc-base", "pkgconfig"}
HOSTS = "127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost ip6-loopback\n"


class LayoutError(Exception):
    pass


def installed(root: Path) -> dict[str, str]:
    """{package: version} of what dpkg has installed under ``root``."""
    found: dict[str, str] = {}
    for stanza in (root / "var/lib/dpkg/status").read_text().split("\n\n"):
        fields = dict(
            line.split(": ", 1)
            for line in stanza.splitlines()
            if ": " in line and not line[0].isspace()
        )
        if fields.get("Status") == "install ok installed":
            found[fields["Package"]] = fields["Version"]
    return found


def check_packages(root: Path, lock: dict) -> None:
    want: dict[str, str] = lock["packages"]
    have = installed(root)
    problems = [f"{n} {v} (lock: not listed)" for n, v in sorted(have.items()) if n not in want]
    problems += [f"{n} missing (lock: {v})" for n, v in sorted(want.items()) if n not in have]
    problems += [
        f"{n} {have[n]} (lock: {v})" for n, v in sorted(want.items()) if n in have and have[n] != v
    ]
    if problems:
        raise LayoutError(
            "the root file system is not the lock's: "
            + "; ".join(problems[:12])
            + ("; ..." if len(problems) > 12 else "")
            + ". The mirror has moved on from the index the lock was made from: write it"
            " again (bazel run //rehearsal:lock) and build again"
        )


def owned_paths(root: Path, packages: list[str]) -> set[str]:
    """Every path (relative to ``root``) the ROCm packages install."""
    owned: set[str] = set()
    info = root / "var/lib/dpkg/info"
    for name in packages:
        for candidate in (info / f"{name}.list", info / f"{name}:amd64.list"):
            if candidate.exists():
                owned |= {
                    line.lstrip("/")
                    for line in candidate.read_text().splitlines()
                    if line.strip("/.")
                }
                break
        else:
            raise LayoutError(f"dpkg has no file list of {name}")
    return owned


def wholly_owned(root: Path, rel: str, owned: set[str]) -> bool:
    path = root / rel
    if path.is_symlink() or not path.is_dir():
        return rel in owned
    entries = sorted(os.listdir(path))
    return bool(entries) and all(wholly_owned(root, f"{rel}/{e}", owned) for e in entries)


def relocate(
    root: Path, src: str, dst: str, owned: set[str], moved: list[tuple[str, str]], *, link: bool
) -> None:
    """Move the largest ROCm-owned entries under ``src`` to ``dst``; links at the old paths
    when ``link`` (never for libraries: AMD's image has none of ROCm at Debian's)."""
    for entry in sorted(os.listdir(root / src)):
        rel, target = f"{src}/{entry}", f"{dst}/{entry}"
        if src == "usr/share" and entry in SKIP_SHARE:
            continue
        path = root / rel
        if wholly_owned(root, rel, owned):
            (root / dst).mkdir(parents=True, exist_ok=True)
            os.rename(path, root / target)
            if link:
                os.symlink(f"/{target}", path)
            moved.append((rel, target))
        elif (
            path.is_dir() and not path.is_symlink() and any(p.startswith(rel + "/") for p in owned)
        ):
            relocate(root, rel, target, owned, moved, link=link)


def flatten_versioned_kernels(root: Path, opt: str) -> list[str]:
    """Debian's lib/<lib>/<version>/library -> AMD's lib/<lib>/library (a link stays)."""
    changed = []
    lib = root / opt / "lib"
    for library in sorted(lib.glob("*/*/library")):
        version_dir = library.parent
        if not version_dir.name.replace(".", "").isdigit() or library.is_symlink():
            continue
        dest = version_dir.parent / "library"
        os.rename(library, dest)
        os.symlink("../library", library)
        changed.append(str(dest.relative_to(root)))
    return changed


# How Debian's CMake package files find their prefix: four times up from their
# directory (lib/<multiarch>/cmake/<package>), one too many at <opt>/lib/cmake.
_UP = re.compile(r'(get_filename_component\((\w+) "\$\{\2\}" PATH\)\n)\1\1\1')


def fix_cmake_packages(root: Path, opt: str) -> list[str]:
    """Debian's lib/<multiarch>/cmake/<package>/*.cmake, moved to <opt>/lib/cmake, made to
    name <opt> as AMD's do: their prefix is four directories up from Debian's place
    (/usr) and three from AMD's (/opt/rocm), and they name libraries under
    lib/<multiarch>. Without this, find_package(hip) and CMake's HIP language (PyTorch's
    cmake/public/LoadHIP.cmake) find /opt/lib/x86_64-linux-gnu/libamdhip64.so, which is
    not there. Returns the files changed."""
    base = root / opt / "lib" / "cmake"
    multiarch = MULTIARCH.removeprefix("usr/")  # lib/x86_64-linux-gnu
    changed = []
    for path in sorted(base.rglob("*.cmake")) if base.is_dir() else []:
        if path.is_symlink() or len(path.relative_to(base).parts) != 2:
            continue
        text = path.read_text()
        new = re.sub(rf"/{re.escape(MULTIARCH)}(?=[/\"\s);])", f"/{opt}/lib", text)
        new = re.sub(rf"(?<![\w/-]){re.escape(multiarch)}(?=[/\"\s);])", "lib", new)
        new = re.sub(rf"(?<=[}}/]){re.escape(multiarch)}(?=[/\"\s);])", "lib", new)
        new = new.replace('set(PACKAGE_PREFIX_DIR "/usr")', f'set(PACKAGE_PREFIX_DIR "/{opt}")')
        new = new.replace('/../../../../" ABSOLUTE)', '/../../../" ABSOLUTE)')
        new = _UP.sub(r"\1\1\1", new)
        if new != text:
            path.write_text(new)
            changed.append(str(path.relative_to(root)))
    return changed


def link_llvm(root: Path, opt: str) -> str:
    """lib/llvm -> the Debian LLVM whose clang carries the ROCm device libraries."""
    candidates = sorted(
        p for p in (root / "usr/lib").glob("llvm-*") if list(p.glob("lib/clang/*/amdgcn/bitcode"))
    )
    if not candidates:
        raise LayoutError(
            "no /usr/lib/llvm-*/lib/clang/*/amdgcn/bitcode: are the ROCm device libraries"
            " installed?"
        )
    llvm = candidates[-1]
    os.symlink(f"/usr/lib/{llvm.name}", root / opt / "lib/llvm")
    # Debian's hipcc looks for clang at <its ROCm>/lib/llvm-<N>/bin (its ROCm is /usr)
    os.symlink("llvm", root / opt / "lib" / llvm.name)
    os.symlink("lib/llvm", root / opt / "llvm")
    bitcode = sorted(llvm.glob("lib/clang/*/amdgcn"))[-1]
    os.symlink(f"lib/llvm/{bitcode.relative_to(llvm)}", root / opt / "amdgcn")
    return llvm.name


# what the amdsmi sdist holds that AMD's share/amd_smi does not: the sdist's own metadata
SDIST_ONLY = ("PKG-INFO", "amdsmi.egg-info")
AMD_SMI_C = "tmp/amd_smi_standin.c"


def unpack_amd_smi(sdist: Path, dest: Path) -> list[str]:
    """The sdist's files (its top directory stripped, its own metadata left out) into
    ``dest``: regular files 0644, directories 0755, nothing else (no links, no paths
    outside)."""
    written = []
    with tarfile.open(sdist, "r:gz") as tar:
        for member in tar.getmembers():
            parts = member.name.split("/")[1:]
            if not parts or parts[0] in SDIST_ONLY or not member.isfile():
                continue
            if any(p in ("", ".", "..") for p in parts):
                raise LayoutError(f"{sdist}: unsafe member {member.name}")
            path = dest.joinpath(*parts)
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(tar.extractfile(member).read())
            path.chmod(0o644)
            written.append("/".join(parts))
    for directory in [dest, *sorted(p for p in dest.rglob("*") if p.is_dir())]:
        directory.chmod(0o755)
    if "pyproject.toml" not in written:
        raise LayoutError(f"{sdist} has no pyproject.toml at its top")
    return written


def compile_amd_smi(root: Path, opt: str, c_source: Path, llvm: str, *, run=subprocess.run) -> str:
    """The stand-in libamd_smi.so, compiled in the root file system by its own clang."""
    shutil.copyfile(c_source, root / AMD_SMI_C)
    out = f"/{opt}/lib/libamd_smi.so"
    try:
        run(
            [
                "chroot",
                str(root),
                f"/usr/lib/{llvm}/bin/clang",
                "-std=c17",
                "-O2",
                "-fPIC",
                "-shared",
                "-Wl,-soname,libamd_smi.so",
                "-o",
                out,
                f"/{AMD_SMI_C}",
            ],
            check=True,
        )
    finally:
        (root / AMD_SMI_C).unlink(missing_ok=True)
    (root / out.lstrip("/")).chmod(0o755)
    return out


def write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.is_symlink():
        path.unlink()
    path.write_text(text)


def layout(
    root: Path,
    release: str,
    lock: dict,
    sources: str,
    preferences: str,
    *,
    ldconfig: bool = True,
    amd_smi: tuple[Path, Path] | None = None,
    run=subprocess.run,
) -> list[str]:
    check_packages(root, lock)
    opt = f"opt/rocm-{release}"
    if (root / opt).exists():
        raise LayoutError(f"/{opt} exists already")
    owned = owned_paths(root, lock["rocm"]["packages"])
    moved: list[tuple[str, str]] = []
    for src, dst in MOVES:
        relocate(root, src, f"{opt}/{dst}", owned, moved, link=src != MULTIARCH)
    if not (root / opt / "lib").is_dir() or not (root / opt / "bin/hipcc").exists():
        raise LayoutError(f"nothing of HIP reached /{opt} (is hipcc in the lock's ROCm packages?)")
    flattened = flatten_versioned_kernels(root, opt)
    cmake = fix_cmake_packages(root, opt)
    llvm = link_llvm(root, opt)
    os.symlink(f"rocm-{release}", root / "opt/rocm")
    smi = []
    if amd_smi:
        sdist, c_source = amd_smi
        files = unpack_amd_smi(sdist, root / opt / "share/amd_smi")
        library = compile_amd_smi(root, opt, c_source, llvm, run=run)
        smi = [
            f"AMD SMI (not Debian's): {sdist.name} ({len(files)} files) in /{opt}/share/amd_smi,"
            f" the stand-in {library}"
        ]
    hip = lock["packages"].get("libamdhip64-dev", "?")
    write(root / opt / ".info/version", f"{release}-0\n")
    write(
        root / opt / ".info/stand-in",
        f"A stand-in for AMD's ROCm {release}: Debian's ROCm packages (HIP {hip}),"
        f" laid out as AMD's image by tools/rehearsal/layout.py."
        + (
            f" Not Debian's: AMD SMI, AMD's Python package ({amd_smi[0].name}) in"
            " share/amd_smi and a stand-in lib/libamd_smi.so that reports no driver"
            " (tools/rehearsal/amdsmi.py)."
            if amd_smi
            else ""
        )
        + "\n",
    )
    write(root / "etc/ld.so.conf.d/10-rocm.conf", f"/{opt}/lib\n")
    # apt: the image's own archive and pin; what mmdebstrap used for the build goes
    write(root / "etc/apt/sources.list", sources)
    write(root / "etc/apt/preferences.d/rocm.pref", preferences)
    (root / "etc/apt/apt.conf.d/99mmdebstrap").unlink(missing_ok=True)
    write(
        root / "etc/apt/apt.conf.d/50snapshot",
        "// This image is pinned to one Packages index (a snapshot): its Release files\n"
        '// may have expired since.\nAcquire::Check-Valid-Until "false";\n',
    )
    # what mmdebstrap copied from the build host; the container runtime provides these
    write(root / "etc/hostname", "")
    write(root / "etc/resolv.conf", "")
    write(root / "etc/hosts", HOSTS)
    if ldconfig:
        subprocess.run(["chroot", str(root), "ldconfig"], check=True)
        (root / "var/cache/ldconfig/aux-cache").unlink(missing_ok=True)
    return [
        f"moved {len(moved)} paths of {len(lock['rocm']['packages'])} ROCm packages to /{opt}",
        f"kernel directories: {', '.join(flattened) or 'none versioned'}",
        f"CMake package files made to name /{opt}: {len(cmake)}",
        f"compiler: /{opt}/lib/llvm -> /usr/lib/{llvm}",
        *smi,
    ]


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="layout.py", description=__doc__.splitlines()[0])
    p.add_argument("root", type=Path, help="the root file system (mmdebstrap's $1)")
    p.add_argument("--rocm-release", required=True, metavar="X.Y.Z")
    p.add_argument("--lock", type=Path, required=True, help="rehearsal/upstream.lock")
    p.add_argument("--sources", type=Path, required=True, help="the image's apt sources")
    p.add_argument("--preferences", type=Path, required=True, help="the image's ROCm pin")
    p.add_argument(
        "--amd-smi-sdist", type=Path, help="AMD's amdsmi sdist (tools/rehearsal/amdsmi.py)"
    )
    p.add_argument("--amd-smi-c", type=Path, help="the stand-in libamd_smi.so's generated C")
    args = p.parse_args(argv)
    if (args.amd_smi_sdist is None) != (args.amd_smi_c is None):
        p.error("--amd-smi-sdist and --amd-smi-c go together")
    try:
        lock = tomllib.loads(args.lock.read_text())
        report = layout(
            args.root,
            args.rocm_release,
            lock,
            args.sources.read_text(),
            args.preferences.read_text(),
            amd_smi=(args.amd_smi_sdist, args.amd_smi_c) if args.amd_smi_sdist else None,
        )
    except (LayoutError, OSError, tarfile.TarError, subprocess.CalledProcessError) as e:
        print(f"layout: error: {e}", file=sys.stderr)
        return 1
    for line in report:
        print(f"layout: {line}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
