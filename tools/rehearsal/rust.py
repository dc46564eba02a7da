"""The rehearsal's stand-in Rust servers: a rustup release channel and a crates registry.

``docker/scripts/install-rust.sh`` installs the nightly a source tree's
rust-toolchain.toml pins with rustup from ``RUSTUP_DIST_SERVER`` and vendors
its Cargo.lock's crates from a registry replacing crates-io, both from the
mirror settings' ``[rust]`` (docs/mirrors.md). An air-gapped farm mirrors
Rust's release channels and the crates index; the rehearsal serves both on
loopback, as static files, the way such a mirror does:

- **the release channel** (``rehearsal/rust.toml``): for each channel,
  ``dist/<date>/channel-rust-nightly.toml`` (+ ``.sha256``), a rustup v2
  manifest (``manifest_text``) with the rustc, cargo and rust-std components
  for x86_64-unknown-linux-gnu in rust-installer format
  (``installer_tarball``) and the profiles. The toolchain is Debian's own
  Rust (rustc, cargo, libstd-rust-dev from the stand-in upstream's suite,
  through this host's Debian mirror), laid out as a rustup toolchain:
  ``bin/``, the compiler's ``lib/librustc_driver-*.so``,
  ``lib/rustlib/<target>/lib``; the shared libraries Debian links them with
  (LLVM, libgit2, curl...) go to ``lib/`` too, where rustup's proxies put
  them on the loader path (as rust-lang's own toolchains link them
  statically), so the toolchain needs of its host only glibc and libgcc_s, a
  C compiler and a linker, as rust-lang's does. The manifest's URLs are
  rust-lang's (``https://static.rust-lang.org/dist/...``): rustup puts
  RUSTUP_DIST_SERVER in their place, as for any mirror of the channels.
- **the registry** (``rehearsal/crates/<name>/``): small stand-in
  crates, each packed into a reproducible ``.crate`` (``crate_file``: the same
  files give the same checksum anywhere, so a Cargo.lock can pin it) with its
  sparse index file (``index_path``, ``index_entry``) and ``config.json``.

``python3 -m tools.rehearsal.sources start`` builds both (cached by content)
and serves them with one static HTTP server on 127.0.0.1 (``start``).
"""

from __future__ import annotations

import gzip
import hashlib
import io
import json
import os
import re
import shutil
import struct
import subprocess
import sys
import tarfile
import tempfile
import tomllib
import zlib
from dataclasses import dataclass
from pathlib import Path

from tools import places
from tools.process import daemon

REPO = places.workspace()
CONFIG = REPO / "rehearsal" / "rust.toml"
UPSTREAM = REPO / "rehearsal" / "upstream.toml"
TARGET = "x86_64-unknown-linux-gnu"
MULTIARCH = "x86_64-linux-gnu"
RUST_DIST = "https://static.rust-lang.org"  # rustup replaces it with RUSTUP_DIST_SERVER
# What every glibc host has (rust-lang's toolchains need nothing else): never bundled.
SYSTEM_LIBS = frozenset(
    {
        "libc.so.6",
        "libm.so.6",
        "libdl.so.2",
        "libpthread.so.0",
        "librt.so.1",
        "libresolv.so.2",
        "libutil.so.1",
        "libanl.so.1",
        "libmvec.so.1",
        "ld-linux-x86-64.so.2",
        "libgcc_s.so.1",
    }
)
# Bump when the layout of the built trees changes (part of the cache key).
_FORMAT = "1"
# Fixed time of every tar entry: the same files give the same archive.
_MTIME = 946684800  # 2000-01-01T00:00:00Z, as the stand-in sources' commits


class RustError(Exception):
    """A configuration, package or server that cannot be used; the message says why."""


@dataclass(frozen=True)
class Config:
    channels: tuple[str, ...]  # "nightly-YYYY-MM-DD"
    packages: tuple[str, ...]  # Debian's packages that make the toolchain
    suite: str  # the stand-in upstream's suite: their glibc is the image's
    crates: tuple[Path, ...]  # each stand-in crate's directory


def load(config: Path = CONFIG, upstream: Path = UPSTREAM) -> Config:
    """The channels, packages and crates of ``config``; the suite of ``upstream``."""
    try:
        data = tomllib.loads(config.read_text())
        suite = tomllib.loads(upstream.read_text())["suite"]
    except (OSError, KeyError, tomllib.TOMLDecodeError) as e:
        raise RustError(f"{config.name}: {e}") from None
    unknown = set(data) - {"channels", "packages"}
    if unknown:
        raise RustError(f"{config.name}: unknown keys {sorted(unknown)}")
    channels = tuple(data.get("channels", ()))
    for c in channels:
        if not re.fullmatch(r"nightly-\d{4}-\d{2}-\d{2}", c):
            raise RustError(f"{config.name}: channel {c!r} is not nightly-YYYY-MM-DD")
    packages = tuple(data.get("packages", ()))
    for p in ("rustc", "cargo", "libstd-rust-dev"):
        if p not in packages:
            raise RustError(f"{config.name}: packages must include {p}")
    crates_dir = config.parent / "crates"
    crates = tuple(sorted(p.parent for p in crates_dir.glob("*/Cargo.toml")))
    return Config(channels, packages, suite, crates)


# -- the crates registry -------------------------------------------------------------------


def index_path(name: str) -> str:
    """Where a crate's index file is under the index root (cargo's layout, lowercase)."""
    n = name.lower()
    if len(n) <= 2:
        return f"{len(n)}/{n}"
    if len(n) == 3:
        return f"3/{n[0]}/{n}"
    return f"{n[:2]}/{n[2:4]}/{n}"


def _deps(manifest: dict) -> list[dict]:
    out = []
    for table, kind in (
        ("dependencies", "normal"),
        ("build-dependencies", "build"),
        ("dev-dependencies", "dev"),
    ):
        for name, spec in sorted(manifest.get(table, {}).items()):
            if isinstance(spec, str):
                spec = {"version": spec}
            if "path" in spec or "git" in spec:
                raise RustError(f"dependency {name}: a registry crate names registry crates only")
            dep = {
                "name": spec.get("package", name),
                "req": spec.get("version", "*"),
                "features": list(spec.get("features", [])),
                "optional": bool(spec.get("optional", False)),
                "default_features": bool(spec.get("default-features", True)),
                "target": None,
                "kind": kind,
            }
            if "package" in spec:  # renamed: the index names the crate, the key the alias
                dep["name"], dep["package"] = name, spec["package"]
            out.append(dep)
    return out


def crate_meta(crate_dir: Path) -> tuple[str, str, dict]:
    """(name, version, the parsed Cargo.toml) of a stand-in crate."""
    try:
        manifest = tomllib.loads((crate_dir / "Cargo.toml").read_text())
        package = manifest["package"]
        return package["name"], package["version"], manifest
    except (OSError, KeyError, tomllib.TOMLDecodeError) as e:
        raise RustError(f"{crate_dir}/Cargo.toml: {e}") from None


def index_entry(manifest: dict, cksum: str) -> str:
    """The crate's line in its index file (cargo's registry index format)."""
    package = manifest["package"]
    entry = {
        "name": package["name"],
        "vers": package["version"],
        "deps": _deps(manifest),
        "cksum": cksum,
        "features": {k: list(v) for k, v in sorted(manifest.get("features", {}).items())},
        "yanked": False,
        "links": package.get("links"),
    }
    if "rust-version" in package:
        entry["rust_version"] = package["rust-version"]
    return json.dumps(entry, separators=(",", ":"), sort_keys=True)


def _tar_gz(entries: list[tuple[str, bytes, int]]) -> bytes:
    """A reproducible .tar.gz of (path, content, mode) regular files, in that order."""
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w", format=tarfile.GNU_FORMAT) as tar:
        for path, data, mode in entries:
            info = tarfile.TarInfo(path)
            info.size, info.mode, info.mtime = len(data), mode, _MTIME
            tar.addfile(info, io.BytesIO(data))
    return _gzip_stored(raw.getvalue())


def _gzip_stored(data: bytes) -> bytes:
    """``data`` as a gzip stream of stored (uncompressed) deflate blocks: the same bytes
    whichever zlib the host's Python links (zlib-ng's deflate output differs from
    zlib's), so a .crate's checksum, which a Cargo.lock pins, is the same anywhere."""
    out = bytearray(b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\xff")  # no name, no time
    blocks = [data[i : i + 0xFFFF] for i in range(0, len(data), 0xFFFF)] or [b""]
    for i, block in enumerate(blocks):
        out += bytes([1 if i == len(blocks) - 1 else 0])
        out += struct.pack("<HH", len(block), len(block) ^ 0xFFFF) + block
    out += struct.pack("<II", zlib.crc32(data), len(data) & 0xFFFFFFFF)
    return bytes(out)


def _files(root: Path) -> list[Path]:
    """A crate's files, without what building it leaves (target/, Cargo.lock)."""
    return sorted(
        p
        for p in root.rglob("*")
        if p.is_file() and "target" not in p.relative_to(root).parts and p.name != "Cargo.lock"
    )


def crate_file(crate_dir: Path) -> bytes:
    """The .crate of a stand-in crate: ``<name>-<version>/`` and its files."""
    name, version, _ = crate_meta(crate_dir)
    return _tar_gz(
        [
            (
                f"{name}-{version}/{f.relative_to(crate_dir)}",
                f.read_bytes(),
                0o755 if f.stat().st_mode & 0o111 else 0o644,
            )
            for f in _files(crate_dir)
        ]
    )


def registry_config(base_url: str) -> str:
    """The index's config.json: where cargo downloads each .crate."""
    return json.dumps({"dl": f"{base_url}/dl/{{crate}}/{{crate}}-{{version}}.crate"}) + "\n"


def build_registry(crates: tuple[Path, ...], root: Path) -> dict[str, str]:
    """index/ and dl/ under ``root`` (config.json is the server's: it names the port);
    {"name version": checksum}."""
    index: dict[str, list[str]] = {}
    sums: dict[str, str] = {}
    for crate_dir in crates:
        name, version, manifest = crate_meta(crate_dir)
        data = crate_file(crate_dir)
        cksum = hashlib.sha256(data).hexdigest()
        out = root / "dl" / name / f"{name}-{version}.crate"
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_bytes(data)
        index.setdefault(name, []).append(index_entry(manifest, cksum))
        sums[f"{name} {version}"] = cksum
    for name, lines in index.items():
        f = root / "index" / index_path(name)
        f.parent.mkdir(parents=True, exist_ok=True)
        f.write_text("".join(line + "\n" for line in lines))
    return sums


# -- the release channel -------------------------------------------------------------------


def manifest_text(date: str, version: str, components: dict[str, tuple[str, str]]) -> str:
    """A rustup v2 channel manifest of one nightly for TARGET.

    ``components``: short name (rustc, cargo, rust-std) -> (file name under dist/<date>/,
    its sha256). The ``rust`` package lists them, profiles name them.
    """

    def q(s: str) -> str:
        return json.dumps(s)  # a TOML basic string

    lines = ['manifest-version = "2"', f"date = {q(date)}", ""]
    for name, (file, sha) in sorted(components.items()):
        lines += [
            f"[pkg.{name}]",
            f"version = {q(version)}",
            "",
            f"[pkg.{name}.target.{TARGET}]",
            "available = true",
            f"url = {q(f'{RUST_DIST}/dist/{date}/{file}')}",
            f"hash = {q(sha)}",
            "",
        ]
    lines += [
        "[pkg.rust]",
        f"version = {q(version)}",
        "",
        f"[pkg.rust.target.{TARGET}]",
        "available = true",
        "extensions = []",
    ]
    for name in sorted(components):
        lines += [
            "",
            f"[[pkg.rust.target.{TARGET}.components]]",
            f"pkg = {q(name)}",
            f"target = {q(TARGET)}",
        ]
    minimal = [n for n in ("rustc", "cargo", "rust-std") if n in components]
    profile = "[" + ", ".join(q(n) for n in minimal) + "]"
    lines += ["", "[profiles]", f"minimal = {profile}", f"default = {profile}"]
    lines += [f"complete = {profile}", "", "[renames]", ""]
    return "\n".join(lines)


def installer_name(component: str) -> str:
    """The component's name in its installer (rust-std's carries its target)."""
    return f"{component}-{TARGET}" if component == "rust-std" else component


def installer_tarball(component: str, files: dict[str, Path], out: Path) -> str:
    """Write ``component`` (install path -> file) as a rust-installer tarball; its sha256.

    Layout (rust-installer version 3): ``<component>-nightly-<target>/`` with
    ``rust-installer-version``, ``components`` and ``<name>/manifest.in``
    (``file:PATH`` lines) next to the files under ``<name>/``.
    """
    name = installer_name(component)
    top = f"{component}-nightly-{TARGET}"
    manifest = "".join(f"file:{p}\n" for p in sorted(files))
    out.parent.mkdir(parents=True, exist_ok=True)
    with (
        out.open("wb") as raw,
        gzip.GzipFile("", "wb", 6, raw, mtime=0) as gz,  # no name, no time: reproducible
        tarfile.open(fileobj=gz, mode="w", format=tarfile.GNU_FORMAT) as tar,
    ):
        dirs = {top, f"{top}/{name}"}
        for path in files:
            parts = f"{top}/{name}/{path}".split("/")[:-1]
            dirs.update("/".join(parts[:i]) for i in range(1, len(parts) + 1))
        for d in sorted(dirs):  # parents first: rustup warns about a file without its dirs
            info = tarfile.TarInfo(d)
            info.type, info.mode, info.mtime = tarfile.DIRTYPE, 0o755, _MTIME
            tar.addfile(info)
        for path, data in (
            ("rust-installer-version", b"3\n"),
            ("components", f"{name}\n".encode()),
            (f"{name}/manifest.in", manifest.encode()),
        ):
            info = tarfile.TarInfo(f"{top}/{path}")
            info.size, info.mode, info.mtime = len(data), 0o644, _MTIME
            tar.addfile(info, io.BytesIO(data))
        for path in sorted(files):
            src = files[path]
            info = tarfile.TarInfo(f"{top}/{name}/{path}")
            info.size = src.stat().st_size
            info.mode = 0o755 if src.stat().st_mode & 0o111 else 0o644
            info.mtime = _MTIME
            with src.open("rb") as f:
                tar.addfile(info, f)
    h = hashlib.sha256()
    with out.open("rb") as f:
        while chunk := f.read(1 << 20):
            h.update(chunk)
    return h.hexdigest()


def elf_dynamic(path: Path) -> tuple[str, list[str]] | None:
    """(DT_SONAME, [DT_NEEDED...]) of a 64-bit little-endian ELF file; None if it is not one."""
    with path.open("rb") as f:
        head = f.read(64)
        if len(head) < 64 or head[:4] != b"\x7fELF" or head[4] != 2 or head[5] != 1:
            return None
        (shoff,) = struct.unpack_from("<Q", head, 0x28)
        shentsize, shnum = struct.unpack_from("<HH", head, 0x3A)
        f.seek(shoff)
        table = f.read(shentsize * shnum)
        sections = [
            struct.unpack_from("<IIQQQQII", table, i * shentsize) for i in range(shnum)
        ]  # name, type, flags, addr, offset, size, link, info
        soname, needed = "", []
        for _, kind, _, _, offset, size, link, _ in sections:
            if kind != 6:  # SHT_DYNAMIC
                continue
            f.seek(offset)
            dyn = f.read(size)
            strtab = sections[link]
            f.seek(strtab[4])
            strings = f.read(strtab[5])

            def string(at: int, strings: bytes = strings) -> str:
                return strings[at : strings.index(b"\0", at)].decode()

            for i in range(0, len(dyn) - 15, 16):
                tag, val = struct.unpack_from("<qQ", dyn, i)
                if tag == 0:
                    break
                if tag == 1:
                    needed.append(string(val))
                elif tag == 14:
                    soname = string(val)
        return soname, needed


def library_closure(
    elves: list[Path], libraries: dict[str, Path]
) -> tuple[dict[str, Path], list[str]]:
    """The libraries ``elves`` need, transitively, from ``libraries`` (soname -> file),
    leaving out SYSTEM_LIBS; and the sonames found nowhere."""
    found: dict[str, Path] = {}
    missing: list[str] = []
    todo = list(elves)
    while todo:
        info = elf_dynamic(todo.pop())
        for soname in info[1] if info else []:
            if soname in SYSTEM_LIBS or soname in found or soname in missing:
                continue
            if soname in libraries:
                found[soname] = libraries[soname]
                todo.append(libraries[soname])
            elif not soname.startswith("librustc_driver-"):
                missing.append(soname)
    return found, sorted(missing)


# -- Debian's packages ---------------------------------------------------------------------


def _apt_options(state: Path, mirror: str, suite: str) -> list[str]:
    """apt-get options that read only ``suite`` of ``mirror`` into ``state`` (the host's
    apt configuration otherwise: its keys, proxy and credentials)."""
    (state / "lists" / "partial").mkdir(parents=True, exist_ok=True)
    (state / "cache" / "archives" / "partial").mkdir(parents=True, exist_ok=True)
    (state / "sources.list.d").mkdir(exist_ok=True)
    (state / "preferences.d").mkdir(exist_ok=True)
    places.put(state / "sources.list", f"deb {mirror} {suite} main\n")
    return [
        f"-oDir::Etc::SourceList={state / 'sources.list'}",
        f"-oDir::Etc::SourceParts={state / 'sources.list.d'}",
        f"-oDir::Etc::PreferencesParts={state / 'preferences.d'}",
        "-oDir::Etc::Preferences=/dev/null",
        f"-oDir::State::Lists={state / 'lists'}",
        "-oDir::State::status=/dev/null",
        f"-oDir::Cache={state / 'cache'}",
        "-oAPT::Architecture=amd64",
        "-oAPT::Architectures=amd64",
        "-oAcquire::Languages=none",
        "-oAPT::Sandbox::User=root",
        "-oAcquire::Check-Valid-Until=false",
    ]


def _run(argv: list[str], cwd: Path | None = None) -> str:
    proc = subprocess.run(argv, cwd=cwd, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        raise RustError(f"{' '.join(argv[:2])}: {(proc.stderr or proc.stdout).strip()[-800:]}")
    return proc.stdout


def parse_depends(text: str) -> list[str]:
    """Package names of a Depends field: the first of each alternative, no versions."""
    out = []
    for clause in text.split(","):
        first = clause.split("|")[0].strip()
        name = re.split(r"[\s(:\[]", first, maxsplit=1)[0]
        if name:
            out.append(name)
    return out


def _library_package(name: str) -> bool:
    """A dependency worth bundling: a shared library package, not glibc's or libgcc's."""
    return (
        (name.startswith("lib") or name == "zlib1g")
        and not name.endswith(("-dev", "-doc", "-common", "-bin"))
        and name not in ("libc6", "libgcc-s1", "libc-bin")
    )


def resolve(opts: list[str], packages: tuple[str, ...]) -> dict[str, str]:
    """{package: version} of ``packages`` and, transitively, the library packages they
    depend on (Depends and Pre-Depends, first alternatives)."""
    versions: dict[str, str] = {}
    todo = list(packages)
    while todo:
        names = sorted(set(todo) - set(versions))
        todo = []
        if not names:
            break
        proc = subprocess.run(
            ["apt-cache", *opts, "show", "--no-all-versions", *names],
            capture_output=True,
            text=True,
            check=False,
        )
        for stanza in proc.stdout.split("\n\n"):
            fields = dict(
                line.split(": ", 1)
                for line in stanza.splitlines()
                if ": " in line and line[0] != " "
            )
            name = fields.get("Package")
            if not name or name in versions:
                continue
            versions[name] = fields["Version"]
            for dep in parse_depends(
                fields.get("Pre-Depends", "") + "," + fields.get("Depends", "")
            ):
                if _library_package(dep) and dep not in versions:
                    todo.append(dep)
        for name in packages:
            if name in names and name not in versions:
                raise RustError(f"Debian's {name} is not in the index: {proc.stderr.strip()}")
    return versions


def download(state: Path, mirror: str, suite: str, packages: tuple[str, ...]) -> list[Path]:
    """Debian's ``packages`` and their libraries' packages from ``suite`` of ``mirror``."""
    opts = _apt_options(state, mirror, suite)
    _run(["apt-get", *opts, "update"])
    versions = resolve(opts, packages)
    debs = state / "debs"
    debs.mkdir(exist_ok=True)
    want = [f"{n}={v}" for n, v in sorted(versions.items())]
    _run(["apt-get", *opts, "download", *want], cwd=debs)
    files = []
    for name, version in sorted(versions.items()):
        hits = [p for p in debs.glob(f"{name}_*.deb") if _deb_version(p) == version]
        if not hits:
            raise RustError(f"apt-get download left no {name} {version} in {debs}")
        files.append(hits[0])
    return files


def _deb_version(deb: Path) -> str:
    return _run(["dpkg-deb", "-f", str(deb), "Version"]).strip()


def _resolve_link(root: Path, path: Path) -> Path | None:
    """``path`` with its symlinks followed inside ``root`` (absolute ones too)."""
    for _ in range(20):
        if not path.is_symlink():
            return path if path.is_file() else None
        target = os.readlink(path)
        path = root / target.lstrip("/") if target.startswith("/") else path.parent / target
    return None


def toolchain_components(root: Path) -> dict[str, dict[str, Path]]:
    """The rustc, cargo and rust-std components (install path -> file) of Debian's
    packages unpacked at ``root``, each with the libraries its programs need."""
    usr = root / "usr"
    rustlib = usr / "lib" / "rustlib"
    comps: dict[str, dict[str, Path]] = {"rustc": {}, "cargo": {}, "rust-std": {}}
    for prog in ("rustc", "rustdoc"):
        comps["rustc"][f"bin/{prog}"] = usr / "bin" / prog
    srv = usr / "libexec" / "rust-analyzer-proc-macro-srv"
    if srv.is_file():
        comps["rustc"]["libexec/rust-analyzer-proc-macro-srv"] = srv
    for driver in sorted((usr / "lib" / MULTIARCH).glob("librustc_driver-*.so")):
        comps["rustc"][f"lib/{driver.name}"] = driver
    for f in sorted((rustlib / "etc").glob("*")):
        comps["rustc"][f"lib/rustlib/etc/{f.name}"] = f
    comps["cargo"]["bin/cargo"] = usr / "bin" / "cargo"
    for f in sorted((rustlib / TARGET).rglob("*")):
        if f.is_file():
            comps["rust-std"][f"lib/rustlib/{TARGET}/{f.relative_to(rustlib / TARGET)}"] = f
    for name in ("rustc", "cargo"):
        for path, f in comps[name].items():
            if not f.is_file():
                raise RustError(f"Debian's packages have no {path} ({f})")
    if not any(p.startswith("lib/librustc_driver-") for p in comps["rustc"]):
        raise RustError(f"Debian's packages have no librustc_driver in {usr / 'lib' / MULTIARCH}")
    if not comps["rust-std"]:
        raise RustError(f"Debian's packages have no standard library in {rustlib / TARGET}")

    libraries: dict[str, Path] = {}
    for d in sorted(p for p in root.rglob("*") if p.name.startswith("lib") and ".so" in p.name):
        f = _resolve_link(root, d)
        if f is None:
            continue
        libraries.setdefault(d.name, f)
        info = elf_dynamic(f)
        if info and info[0]:
            libraries.setdefault(info[0], f)
    taken: set[str] = set()
    for name in ("rustc", "cargo"):  # a library both need ships with rustc
        elves = [f for p, f in comps[name].items() if p.startswith(("bin/", "lib/", "libexec/"))]
        found, missing = library_closure(elves, libraries)
        if missing:
            raise RustError(
                f"{name} needs {', '.join(missing)}, which no downloaded package has"
                " (a library package rust.py does not follow?)"
            )
        for soname, f in sorted(found.items()):
            if soname not in taken:
                comps[name][f"lib/{soname}"] = f
                taken.add(soname)
    return comps


def rust_version(debs: list[Path]) -> tuple[str, str]:
    """(the release, the Debian version) of the rustc package."""
    for deb in debs:
        if deb.name.startswith("rustc_"):
            debian = _deb_version(deb)
            m = re.match(r"(?:\d+:)?(\d+\.\d+\.\d+)", debian)
            if m:
                return m.group(1), debian
    raise RustError("no rustc package among the downloads")


def build_dist(config: Config, debs: list[Path], root: Path) -> str:
    """dist/<date>/ of every channel under ``root``; the toolchain's version line."""
    release, debian = rust_version(debs)
    with tempfile.TemporaryDirectory(dir=root.parent) as tmp:
        unpacked = Path(tmp) / "root"
        for deb in debs:
            _run(["dpkg-deb", "-x", str(deb), str(unpacked)])
        comps = toolchain_components(unpacked)
        first: dict[str, tuple[Path, str]] = {}
        for channel in config.channels:
            date = channel.removeprefix("nightly-")
            version = f"{release}-nightly (Debian {debian} {date})"
            out = root / "dist" / date
            files: dict[str, tuple[str, str]] = {}
            for comp, contents in comps.items():
                file = f"{comp}-nightly-{TARGET}.tar.gz"
                if comp in first:  # the same toolchain under every date
                    src, sha = first[comp]
                    out.mkdir(parents=True, exist_ok=True)
                    shutil.copyfile(src, out / file)
                else:
                    sha = installer_tarball(comp, contents, out / file)
                    first[comp] = (out / file, sha)
                files[comp] = (file, sha)
            text = manifest_text(date, version, files)
            (out / "channel-rust-nightly.toml").write_text(text)
            digest = hashlib.sha256(text.encode()).hexdigest()
            (out / "channel-rust-nightly.toml.sha256").write_text(
                f"{digest}  channel-rust-nightly.toml\n"
            )
    return f"rustc {release} (Debian {debian})"


# -- the server ----------------------------------------------------------------------------


@dataclass(frozen=True)
class Paths:
    dir: Path

    @property
    def www(self) -> Path:
        return self.dir / "www"

    @property
    def dist(self) -> Path:
        return self.www / "rustup"

    @property
    def crates(self) -> Path:
        return self.www / "crates"

    @property
    def apt(self) -> Path:
        return self.dir / "apt"

    @property
    def pid(self) -> Path:
        return self.dir / "http.pid"

    @property
    def port(self) -> Path:
        return self.dir / "port"

    @property
    def log(self) -> Path:
        return self.dir / "http.log"


def settings(port: int) -> tuple[str, str]:
    """The mirror settings' [rust] dist_server and crates_registry for the server."""
    return f"http://127.0.0.1:{port}/rustup", f"sparse+http://127.0.0.1:{port}/crates/index/"


def _fingerprint(*parts: object, files: list[Path] = ()) -> str:
    h = hashlib.sha256(repr((_FORMAT, *parts)).encode())
    h.update(Path(__file__).read_bytes())
    for f in files:
        h.update(str(f).encode() + b"\0" + f.read_bytes())
    return h.hexdigest()


def _read(path: Path) -> str:
    try:
        return path.read_text().strip()
    except OSError:
        return ""


def build(config: Config, p: Paths, mirror: str | None = None) -> None:
    """The release channel and the registry under ``p.www``, each rebuilt only when what
    it is made of changed (the Debian packages are fetched for a rebuild only)."""
    dist_key = _fingerprint(config.channels, config.packages, config.suite)
    if _read(p.dir / "dist.built") != dist_key or not p.dist.is_dir():
        if mirror is None:
            from tools.mirrors import host

            mirror = host.debian_mirror()
        print(
            f"rust: Debian's {', '.join(config.packages)} ({config.suite}) into a release"
            " channel (once; cached)",
            file=sys.stderr,
            flush=True,
        )
        debs = download(p.apt, mirror, config.suite, config.packages)
        if p.dist.exists():
            shutil.rmtree(p.dist)
        p.dist.mkdir(parents=True)
        line = build_dist(config, debs, p.dist)
        places.write_atomic(p.dir / "toolchain", line + "\n")
        places.write_atomic(p.dir / "dist.built", dist_key + "\n")
    crate_files = [f for c in config.crates for f in _files(c)]
    crates_key = _fingerprint(config.crates, files=crate_files)
    if _read(p.dir / "crates.built") != crates_key or not p.crates.is_dir():
        if p.crates.exists():
            shutil.rmtree(p.crates)
        sums = build_registry(config.crates, p.crates)
        places.write_atomic(
            p.dir / "crates", "".join(f"{k} {v}\n" for k, v in sorted(sums.items()))
        )
        places.write_atomic(p.dir / "crates.built", crates_key + "\n")


def answering(p: Paths) -> int | None:
    return daemon.answering((p.pid, p.port), p.www, _serves)


def _serves(port: int) -> bool:
    import urllib.request

    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/crates/index/config.json", timeout=2):
            return True
    except OSError:
        return False


def serve(p: Paths, port: int = 0) -> int:
    """A static HTTP server of ``p.www`` on 127.0.0.1; its port."""
    port = port or daemon.free_port()
    if not daemon.port_free(port):
        raise RustError(f"port {port} is in use")
    p.crates.mkdir(parents=True, exist_ok=True)
    (p.crates / "index").mkdir(exist_ok=True)
    base = f"http://127.0.0.1:{port}/crates"
    places.put(p.crates / "index" / "config.json", registry_config(base))
    argv = [
        sys.executable,
        "-I",
        "-m",
        "http.server",
        "--bind",
        "127.0.0.1",
        "--directory",
        str(p.www),
        str(port),
    ]
    died = daemon.serve(argv, p.log, (p.pid, p.port), port, lambda: _serves(port))
    if died:
        raise RustError(f"http server on 127.0.0.1:{port} {died}: {daemon.tail(p.log, 5)}")
    return port


def start(config: Config, p: Paths, port: int = 0, mirror: str | None = None) -> int:
    """Build (when changed) and serve; the port. The caller holds the sources' lock. A
    running server keeps its port (config.json names it)."""
    found = answering(p)
    if found is not None and port and port != found:
        raise RustError(f"already serving on 127.0.0.1:{found}; stop it to move to {port}")
    build(config, p, mirror)
    if found is not None:
        places.put(
            p.crates / "index" / "config.json", registry_config(f"http://127.0.0.1:{found}/crates")
        )
        return found
    return serve(p, port)


def stop(p: Paths) -> int | None:
    pid = daemon.read_int(p.pid)
    if pid and daemon.ours(pid, p.www):
        daemon.terminate(pid, 5, error=RustError, what="http server")
        return pid
    return None


def served(p: Paths) -> tuple[str, dict[str, str]]:
    """The toolchain's version line and {"crate version": checksum} of the last build."""
    sums = dict(line.rsplit(" ", 1) for line in _read(p.dir / "crates").splitlines() if line)
    return _read(p.dir / "toolchain"), sums
