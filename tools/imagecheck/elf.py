"""ELF64 little-endian shared objects: DT_NEEDED, sections, the GPU targets of .hip_fatbin.

Stdlib only: the images copy this file and run it with their own Python (3.10+).

    python3 elf.py needed FILE...    the DT_NEEDED entries of each file, in order
    python3 elf.py targets FILE...   the GPU targets of each file's .hip_fatbin ("-": none)
"""

from __future__ import annotations

import argparse
import mmap
import os
import struct
import sys
import zlib

_EHDR = struct.Struct("<16sHHIQQQIHHHHHH")  # e_ident ... e_shstrndx
_PHDR = struct.Struct("<IIQQQQQQ")  # p_type, p_flags, p_offset, p_vaddr, p_paddr, p_filesz, ...
_SHDR = struct.Struct("<IIQQQQIIQQ")  # sh_name, sh_type, sh_flags, sh_addr, sh_offset, sh_size, ...
_DYN = struct.Struct("<qQ")
PT_LOAD, PT_DYNAMIC = 1, 2
DT_NULL, DT_NEEDED, DT_STRTAB, DT_STRSZ = 0, 1, 5, 10
SHT_NOBITS = 8
SHN_XINDEX = 0xFFFF

# clang's OffloadBundler (clang/lib/Driver/OffloadBundler.cpp).
BUNDLE_MAGIC = b"__CLANG_OFFLOAD_BUNDLE__"
COMPRESSED_MAGIC = b"CCOB"
_METHODS = {0: "zlib", 1: "zstd"}
# version -> (header layout after magic/version/method, header size): (total size, uncompressed
# size), the uint64 hash follows. Version 1 has no total size: its data runs to the end.
_CCOB = {1: (struct.Struct("<I"), 20), 2: (struct.Struct("<II"), 24), 3: (struct.Struct("<QQ"), 32)}


class ElfError(ValueError):
    """A file that is not an ELF64 little-endian object, or is cut short."""

    def __init__(self, path: str | os.PathLike[str], reason: str) -> None:
        super().__init__(f"{os.fspath(path)}: {reason}")
        self.path = os.fspath(path)
        self.reason = reason


def _cstr(table: bytes, offset: int) -> str:
    end = table.find(b"\0", offset)
    return table[offset : end if end >= 0 else len(table)].decode("utf-8", "surrogateescape")


class _Elf:
    """The headers of an open ELF64 little-endian file; reads bounded by its size."""

    def __init__(self, path: str | os.PathLike[str], f) -> None:
        self.path, self.f = path, f
        self.size = os.fstat(f.fileno()).st_size
        head = f.read(_EHDR.size)
        if head[:4] != b"\x7fELF":
            raise ElfError(path, "not an ELF file")
        if len(head) < _EHDR.size:
            raise ElfError(path, f"truncated: {len(head)} bytes, shorter than an ELF64 header")
        if head[4:6] != b"\x02\x01":
            raise ElfError(path, "not a 64-bit little-endian ELF file")
        h = _EHDR.unpack(head)
        phoff, shoff, phentsize, phnum, shentsize, shnum, shstrndx = *h[5:7], *h[9:]
        if (phnum and phentsize != _PHDR.size) or (shoff and shentsize != _SHDR.size):
            raise ElfError(path, "unexpected program or section header size")
        table = self.read(phoff, phnum * _PHDR.size, "program headers")
        self.phdrs = [_PHDR.unpack_from(table, i * _PHDR.size) for i in range(phnum)]
        self.shdrs: list[tuple] = []
        self.shstrndx = shstrndx
        if shoff:
            first = _SHDR.unpack(self.read(shoff, _SHDR.size, "section headers"))
            shnum = shnum or first[5]  # more than 0xff00 sections: the count is in sh_size
            if shstrndx == SHN_XINDEX:
                self.shstrndx = first[6]
            table = self.read(shoff, shnum * _SHDR.size, "section headers")
            self.shdrs = [_SHDR.unpack_from(table, i * _SHDR.size) for i in range(shnum)]

    def read(self, offset: int, size: int, what: str) -> bytes:
        if offset + size > self.size:
            raise ElfError(
                self.path, f"truncated: {what} end at byte {offset + size} of {self.size}"
            )
        self.f.seek(offset)
        return self.f.read(size)

    def find_section(self, name: str) -> tuple | None:
        """The section header named ``name``, None without one."""
        if not self.shdrs:
            return None
        if self.shstrndx >= len(self.shdrs):
            raise ElfError(self.path, "no section name table")
        strtab = self.shdrs[self.shstrndx]
        names = self.read(strtab[4], strtab[5], "the section name table")
        return next((s for s in self.shdrs if _cstr(names, s[0]) == name), None)


def needed(path: str | os.PathLike[str]) -> list[str]:
    """The DT_NEEDED entries of ``path``, in order ([] without a PT_DYNAMIC segment)."""
    with open(path, "rb") as f:
        elf = _Elf(path, f)
        dynamic = [p for p in elf.phdrs if p[0] == PT_DYNAMIC]
        if not dynamic:
            return []
        raw = elf.read(dynamic[0][2], dynamic[0][5], "the dynamic segment")
        tags: list[tuple[int, int]] = []
        for tag, value in _DYN.iter_unpack(raw[: len(raw) - len(raw) % _DYN.size]):
            if tag == DT_NULL:
                break
            tags.append((tag, value))
        offsets = [value for tag, value in tags if tag == DT_NEEDED]
        if not offsets:
            return []
        strtab = next((v for t, v in tags if t == DT_STRTAB), None)
        strsz = next((v for t, v in tags if t == DT_STRSZ), None)
        if strtab is None or strsz is None:
            raise ElfError(path, "DT_NEEDED without DT_STRTAB/DT_STRSZ")
        # DT_STRTAB is an address: the PT_LOAD segment that holds it gives its file offset.
        where = next(
            (
                p[2] + strtab - p[3]
                for p in elf.phdrs
                if p[0] == PT_LOAD and 0 <= strtab - p[3] < p[5]
            ),
            None,
        )
        if where is None:
            raise ElfError(path, f"DT_STRTAB {strtab:#x} is in no loaded segment")
        table = elf.read(where, strsz, "the dynamic string table")
        return [_cstr(table, offset) for offset in offsets]


def section(path: str | os.PathLike[str], name: str) -> bytes | None:
    """The bytes of section ``name`` of ``path`` (b"" for SHT_NOBITS), None without one."""
    with open(path, "rb") as f:
        elf = _Elf(path, f)
        shdr = elf.find_section(name)
        if shdr is None:
            return None
        return b"" if shdr[1] == SHT_NOBITS else elf.read(shdr[4], shdr[5], f"section {name}")


class _Short(Exception):
    """A structure runs past the end of the data."""


def _unpack(fmt: struct.Struct, data, offset: int, end: int) -> tuple:
    if offset + fmt.size > end:
        raise _Short
    return fmt.unpack_from(data, offset)


_U64 = struct.Struct("<Q")
_ENTRY = struct.Struct("<QQQ")
_VERSION_METHOD = struct.Struct("<HH")


def _target(triple: str) -> str | None:
    """The target ID of an offload bundle entry ID: kind-arch-vendor-os-env-target_id.

    None for the host entry and for an entry without one. The target ID keeps its
    features (gfx90a:xnack+) and may hold dashes itself (gfx9-4-generic).
    """
    parts = triple.split("-", 4)
    if len(parts) < 5 or parts[0] == "host":
        return None
    rest = parts[4]  # "-gfx1100" (empty env), "gfx906" (old form, no env), "unknown-gfx908"
    if rest.startswith("-"):
        return rest[1:] or None
    if rest.startswith("gfx"):
        return rest
    return rest.partition("-")[2] or None


def _bundle(data, start: int, end: int, targets: set[str]) -> int:
    """Add the targets of the uncompressed bundle at ``start``; return where it ends."""
    p = start + len(BUNDLE_MAGIC)
    try:
        (count,) = _unpack(_U64, data, p, end)
        p += _U64.size
        stop = p
        for _ in range(count):
            offset, size, length = _unpack(_ENTRY, data, p, end)
            p += _ENTRY.size
            if p + length > end:
                raise _Short
            triple = bytes(data[p : p + length]).decode("utf-8", "replace")
            p += length
            stop = max(stop, p, min(start + offset + size, end))
            if target := _target(triple):
                targets.add(target)
    except _Short:
        targets.add("bundle:truncated")
        return end
    return stop


def _decompress(method: str, blob) -> tuple[bytes, int] | None:
    """The first stream of ``blob`` decompressed and the bytes it took; None: no zstd here."""
    if method == "zlib":
        d = zlib.decompressobj()
        try:
            out = d.decompress(blob)
        except zlib.error as e:
            raise ValueError(e) from e
    else:
        try:
            from compression import zstd  # Python 3.14+
        except ImportError:
            return None
        d = zstd.ZstdDecompressor()
        try:
            out = d.decompress(blob)
        except zstd.ZstdError as e:
            raise ValueError(e) from e
    if not d.eof:
        raise ValueError("incomplete stream")
    return out, len(blob) - len(d.unused_data)


def _compressed(data, start: int, end: int, targets: set[str]) -> int:
    """Add the targets of the compressed bundle at ``start``; return where it ends.

    A bundle that cannot be read here is reported in ``targets``: compressed:zstd
    (no compression.zstd in this Python), compressed:<method>:corrupt,
    compressed:v<version>, compressed:method<method>, compressed:truncated.
    """
    try:
        version, method = _unpack(_VERSION_METHOD, data, start + 4, end)
        if version not in _CCOB:
            targets.add(f"compressed:v{version}")
            return start + 8
        sizes, header = _CCOB[version]
        total = _unpack(sizes, data, start + 8, end)[0] if version > 1 else 0
        if start + header > end:
            raise _Short
    except _Short:
        targets.add("compressed:truncated")
        return end
    # The total size (v2, v3) bounds the data; v1's data runs on, its stream says where it ends.
    stop = start + total if header < total <= end - start else end
    name = _METHODS.get(method)
    if name is None:
        targets.add(f"compressed:method{method}")
        return stop if total else start + header
    try:
        result = _decompress(name, data[start + header : stop])
    except ValueError:
        targets.add(f"compressed:{name}:corrupt")
        return stop if total else start + header
    if result is None:
        targets.add(f"compressed:{name}")
        return stop if total else start + header
    inner, used = result
    if inner[: len(BUNDLE_MAGIC)] == BUNDLE_MAGIC:
        _bundle(inner, 0, len(inner), targets)
    else:
        targets.add(f"compressed:{name}:corrupt")
    return stop if total else start + header + used


def _scan(data, begin: int, end: int) -> list[str] | None:
    """offload_targets of data[begin:end] (bytes or an mmap: both have find)."""
    targets: set[str] = set()
    magics = (BUNDLE_MAGIC, COMPRESSED_MAGIC)
    nearest = [data.find(m, begin, end) for m in magics]
    found, pos = False, begin
    while True:
        for i, magic in enumerate(magics):
            if 0 <= nearest[i] < pos:
                nearest[i] = data.find(magic, pos, end)
        hits = [n for n in nearest if n >= 0]
        if not hits:
            return sorted(targets) if found else None
        start, found = min(hits), True
        read = _bundle if start == nearest[0] else _compressed
        pos = max(read(data, start, end, targets), start + len(COMPRESSED_MAGIC))


def offload_targets(data: bytes) -> list[str] | None:
    """The sorted GPU targets of every offload bundle in ``data`` (a .hip_fatbin section).

    Bundles may be concatenated (one per translation unit, padded) and compressed
    (CCOB v1-3, zlib or zstd). The target of an entry is its target ID (gfx90a:xnack+);
    the host entry has none. A compressed bundle that cannot be read here is one
    "compressed:..." string (compressed:zstd before Python 3.14); a header cut short
    is bundle:truncated. None when ``data`` holds no bundle at all.
    """
    return _scan(data, 0, len(data))


def fatbin_targets(path: str | os.PathLike[str]) -> list[str] | None:
    """offload_targets of the .hip_fatbin section of ``path``; None without one."""
    with open(path, "rb") as f:
        elf = _Elf(path, f)
        shdr = elf.find_section(".hip_fatbin")
        if shdr is None or shdr[1] == SHT_NOBITS:
            return None
        offset, size = shdr[4], shdr[5]
        if offset + size > elf.size:
            raise ElfError(path, f"truncated: section .hip_fatbin ends at byte {offset + size}")
        # Mapped, not read: the fat binaries of a large library take gigabytes.
        with mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as data:
            return _scan(data, offset, offset + size)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="elf.py",
        description="Read ELF64 little-endian shared objects: one line per file, FILE: VALUES.",
    )
    parser.add_argument(
        "command",
        choices=["needed", "targets"],
        help="needed: the DT_NEEDED entries, in order; targets: the GPU targets of the "
        '.hip_fatbin section, sorted ("-" without one)',
    )
    parser.add_argument("files", nargs="+", metavar="FILE")
    args = parser.parse_args(argv)
    rc = 0
    for file in args.files:
        try:
            values = needed(file) if args.command == "needed" else fatbin_targets(file)
        except (OSError, ValueError) as e:
            print(f"elf.py: {e}", file=sys.stderr)
            rc = 1
            continue
        print(f"{file}: {'-' if values is None else ' '.join(values)}".rstrip(), flush=True)
    return rc


if __name__ == "__main__":
    sys.exit(main())
