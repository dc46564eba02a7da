"""tools/imagecheck/elf.py on shared libraries gcc builds here.

DT_NEEDED against readelf's, sections, and offload bundles put into .hip_fatbin by a
C array: plain, concatenated with padding, compressed (CCOB v1-3, zlib and zstd).
"""

from __future__ import annotations

import hashlib
import re
import shutil
import struct
import subprocess
import sys
import types
import zlib
from pathlib import Path

import pytest

from tools.imagecheck import elf

MAGIC = b"__CLANG_OFFLOAD_BUNDLE__"
HOST = "host-x86_64-unknown-linux-gnu-"


def _tool(name: str) -> str:
    path = shutil.which(name)
    if path is None:
        pytest.fail(f"{name} is not on PATH: these tests build and read shared libraries with it")
    return path


def build(out: Path, sources: dict[str, str], *flags: str) -> Path:
    """gcc -shared of ``sources`` (file name -> C text) into ``out``."""
    paths = []
    for name, text in sources.items():
        (out.parent / name).write_text(text)
        paths.append(str(out.parent / name))
    cmd = [_tool("gcc"), "-shared", "-fPIC", "-o", str(out), *paths, *flags]
    subprocess.run(cmd, check=True, capture_output=True, text=True)
    return out


def fatbin_c(name: str, data: bytes) -> str:
    """A C array of ``data`` in .hip_fatbin, aligned like a translation unit's fat binary."""
    body = ",".join(str(b) for b in data)
    return (
        f'__attribute__((section(".hip_fatbin"), aligned(4096), used))\n'
        f"const unsigned char {name}[{len(data)}] = {{{body}}};\n"
    )


def bundle(*triples: str, code: bytes = b"") -> bytes:
    """An uncompressed offload bundle: each triple with a made-up code object ending in ``code``."""
    payloads = [b"" if t.startswith("host-") else b"\x7fELF " + t.encode() + code for t in triples]
    offset = len(MAGIC) + 8 + sum(24 + len(t) for t in triples)
    head = MAGIC + struct.pack("<Q", len(triples))
    for triple, payload in zip(triples, payloads, strict=True):
        head += struct.pack("<QQQ", offset, len(payload), len(triple)) + triple.encode()
        offset += len(payload)
    return head + b"".join(payloads)


def ccob(version: int, inner: bytes, method: int = 0, data: bytes | None = None) -> bytes:
    """A compressed bundle as clang writes it: ``data`` defaults to zlib of ``inner``."""
    data = zlib.compress(inner) if data is None else data
    digest = int.from_bytes(hashlib.md5(inner).digest()[:8], "little")
    sizes = {
        1: struct.pack("<I", len(inner)),
        2: struct.pack("<II", 24 + len(data), len(inner)),
        3: struct.pack("<QQ", 32 + len(data), len(inner)),
    }[version]
    return b"CCOB" + struct.pack("<HH", version, method) + sizes + struct.pack("<Q", digest) + data


def readelf_needed(path: Path) -> list[str]:
    out = subprocess.run(
        [_tool("readelf"), "-dW", str(path)], check=True, capture_output=True, text=True
    ).stdout
    return re.findall(r"\(NEEDED\)\s+Shared library: \[(.*)\]", out)


@pytest.fixture
def linked(tmp_path: Path) -> Path:
    """libmain.so linked with -lbeta -lalpha -lm (in this order, all kept)."""
    for lib in ("alpha", "beta"):
        build(
            tmp_path / f"lib{lib}.so",
            {f"{lib}.c": f"int {lib}(void) {{ return 1; }}\n"},
            f"-Wl,-soname,lib{lib}.so.1",
        )
    main = "int alpha(void); int beta(void); int f(void) { return alpha() + beta(); }\n"
    return build(
        tmp_path / "libmain.so",
        {"main.c": main},
        "-Wl,--no-as-needed",
        f"-L{tmp_path}",
        "-lbeta",
        "-lalpha",
        "-lm",
    )


def test_needed_in_link_order(linked: Path) -> None:
    names = elf.needed(linked)
    assert names == readelf_needed(linked)
    assert names[:3] == ["libbeta.so.1", "libalpha.so.1", "libm.so.6"]
    assert elf.needed(str(linked)) == names


def test_needed_empty_without_libraries(tmp_path: Path) -> None:
    lib = build(tmp_path / "libnone.so", {"none.c": "int f(void) { return 0; }\n"}, "-nostdlib")
    assert readelf_needed(lib) == []
    assert elf.needed(lib) == []


def test_section(tmp_path: Path) -> None:
    data = bundle(HOST, "hipv4-amdgcn-amd-amdhsa--gfx1100")
    lib = build(tmp_path / "libone.so", {"one.c": fatbin_c("fatbin", data)})
    assert elf.section(lib, ".hip_fatbin") == data
    assert b"GCC" in (elf.section(lib, ".comment") or b"")
    assert elf.section(lib, ".no_such_section") is None
    assert elf.section(lib, ".hip_fatbi") is None


def test_uncompressed_bundle(tmp_path: Path) -> None:
    data = bundle(
        HOST,
        "hipv4-amdgcn-amd-amdhsa--gfx942",
        "hipv4-amdgcn-amd-amdhsa--gfx90a:xnack+",
        "hipv4-amdgcn-amd-amdhsa--gfx1100",
    )
    # A bundle elsewhere (the HIP runtime holds the magic string in .rodata) is not read.
    other = bundle(HOST, "hipv4-amdgcn-amd-amdhsa--gfx803")
    rodata = f"const unsigned char other[] = {{{','.join(map(str, other))}}};\n"
    lib = build(tmp_path / "libone.so", {"one.c": fatbin_c("fatbin", data) + rodata})
    assert elf.offload_targets(elf.section(lib, ".rodata") or b"") == ["gfx803"]
    assert elf.fatbin_targets(lib) == ["gfx1100", "gfx90a:xnack+", "gfx942"]
    assert elf.offload_targets(data) == ["gfx1100", "gfx90a:xnack+", "gfx942"]


def test_concatenated_bundles_with_padding(tmp_path: Path) -> None:
    first = bundle(HOST, "hipv4-amdgcn-amd-amdhsa--gfx908", "hipv4-amdgcn-amd-amdhsa--gfx1030")
    second = bundle(HOST, "hipv4-amdgcn-amd-amdhsa--gfx1201", "hipv4-amdgcn-amd-amdhsa--gfx908")
    sources = {"a.c": fatbin_c("fatbin_a", first), "b.c": fatbin_c("fatbin_b", second)}
    lib = build(tmp_path / "libtwo.so", sources)
    section = elf.section(lib, ".hip_fatbin") or b""
    assert len(section) == 4096 + len(second)  # the first padded to 4096, like two units
    assert section.count(MAGIC) == 2
    assert elf.fatbin_targets(lib) == ["gfx1030", "gfx1201", "gfx908"]


def test_compressed_zlib(tmp_path: Path) -> None:
    v1 = ccob(1, bundle(HOST, "hipv4-amdgcn-amd-amdhsa--gfx906"))
    v2 = ccob(
        2, bundle(HOST, "hipv4-amdgcn-amd-amdhsa--gfx942", "hipv4-amdgcn-amd-amdhsa--gfx1100")
    )
    v3 = ccob(3, bundle(HOST, "hipv4-amdgcn-amd-amdhsa--gfx1101"))
    plain = bundle(HOST, "hipv4-amdgcn-amd-amdhsa--gfx1030")
    assert elf.offload_targets(v2) == ["gfx1100", "gfx942"]
    assert elf.offload_targets(v3) == ["gfx1101"]
    # v1 has no total size: its zlib stream ends it, and the next bundle is still found.
    assert elf.offload_targets(v1 + b"\0" * 100 + plain) == ["gfx1030", "gfx906"]
    # What looks like a bundle inside a code object is not one, nor inside a stored
    # (level 0) zlib stream, which holds the code objects as they are.
    trap = bundle(HOST, "hipv4-amdgcn-amd-amdhsa--gfx906", code=b"CCOB\x09\x00\x00\x00")
    assert elf.offload_targets(trap + plain) == ["gfx1030", "gfx906"]
    stored = ccob(1, trap, data=zlib.compress(trap, 0))
    assert elf.offload_targets(stored + plain) == ["gfx1030", "gfx906"]
    # A v1 stream is passed over whole: two stored blocks cut its bundle's header in
    # two, and the bundle that follows is still read.
    z = zlib.compressobj(0)
    cut = z.compress(trap[:28]) + z.flush(zlib.Z_FULL_FLUSH) + z.compress(trap[28:]) + z.flush()
    assert elf.offload_targets(ccob(1, trap, data=cut) + plain) == ["gfx1030", "gfx906"]
    sources = {
        "a.c": fatbin_c("fatbin_a", v2),
        "b.c": fatbin_c("fatbin_b", v3),
        "c.c": fatbin_c("fatbin_c", v1),
        "d.c": fatbin_c("fatbin_d", plain),
    }
    lib = build(tmp_path / "libz.so", sources)
    assert elf.fatbin_targets(lib) == ["gfx1030", "gfx1100", "gfx1101", "gfx906", "gfx942"]


def _zstd():
    try:
        from compression import zstd  # type: ignore[import-not-found]
    except ImportError:
        return None
    return zstd


def test_compressed_zstd(tmp_path: Path) -> None:
    inner = bundle(HOST, "hipv4-amdgcn-amd-amdhsa--gfx950")
    zstd = _zstd()
    data = zstd.compress(inner) if zstd else b"(\xb5/\xfd not decompressed here" * 10
    sources = {
        "a.c": fatbin_c("fatbin_a", ccob(3, inner, method=1, data=data)),
        "b.c": fatbin_c("fatbin_b", bundle(HOST, "hipv4-amdgcn-amd-amdhsa--gfx942")),
    }
    lib = build(tmp_path / "libzstd.so", sources)
    expected = ["gfx942", "gfx950"] if zstd else ["compressed:zstd", "gfx942"]
    assert elf.fatbin_targets(lib) == expected


class _FakeZstdDecompressor:
    """compression.zstd's decompressor on zlib data: the zstd path on any Python."""

    def __init__(self) -> None:
        self._d = zlib.decompressobj()

    def decompress(self, data: bytes) -> bytes:
        return self._d.decompress(data)

    @property
    def eof(self) -> bool:
        return self._d.eof

    @property
    def unused_data(self) -> bytes:
        return self._d.unused_data


def test_zstd_path_uses_compression_zstd(monkeypatch: pytest.MonkeyPatch) -> None:
    fake = types.ModuleType("compression.zstd")
    fake.ZstdDecompressor = _FakeZstdDecompressor  # type: ignore[attr-defined]
    fake.ZstdError = RuntimeError  # type: ignore[attr-defined]
    package = types.ModuleType("compression")
    package.zstd = fake  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "compression", package)
    monkeypatch.setitem(sys.modules, "compression.zstd", fake)
    inner = bundle(HOST, "hipv4-amdgcn-amd-amdhsa--gfx1151")
    tail = bundle(HOST, "hipv4-amdgcn-amd-amdhsa--gfx1200")
    assert elf.offload_targets(ccob(2, inner, method=1) + tail) == ["gfx1151", "gfx1200"]
    assert elf.offload_targets(ccob(1, inner, method=1) + tail) == ["gfx1151", "gfx1200"]


def test_target_forms() -> None:
    data = bundle(
        "hip-amdgcn-amd-amdhsa-gfx906",  # before the empty environment: no "--"
        "hipv4-amdgcn-amd-amdhsa-unknown-gfx908",
        "hipv4-amdgcn-amd-amdhsa--gfx9-4-generic:xnack-",
        "hipv4-amdgcn-amd-amdhsa--gfx90a:sramecc+:xnack-",
        "hipv4-amdgcn-amd-amdhsa-",
        HOST,
    )
    assert elf.offload_targets(data) == [  # sorted: "-" before digits
        "gfx9-4-generic:xnack-",
        "gfx906",
        "gfx908",
        "gfx90a:sramecc+:xnack-",
    ]


def test_no_bundle(tmp_path: Path, linked: Path) -> None:
    assert elf.offload_targets(b"") is None
    assert elf.offload_targets(b"\0" * 4096 + b"CCO" + b"__CLANG_OFFLOAD_BUNDLE") is None
    assert elf.fatbin_targets(linked) is None
    lib = build(tmp_path / "libzero.so", {"z.c": fatbin_c("fatbin", b"\0" * 64)})
    assert elf.fatbin_targets(lib) is None


def test_unreadable_bundles_are_reported() -> None:
    good = bundle(HOST, "hipv4-amdgcn-amd-amdhsa--gfx942")
    assert elf.offload_targets(good[:40]) == ["bundle:truncated"]
    corrupt = ccob(2, good, data=b"not zlib at all")
    assert elf.offload_targets(corrupt + good) == ["compressed:zlib:corrupt", "gfx942"]
    not_a_bundle = ccob(3, b"something else")
    assert elf.offload_targets(not_a_bundle) == ["compressed:zlib:corrupt"]
    assert elf.offload_targets(b"CCOB" + struct.pack("<HH", 9, 0) + good) == [
        "compressed:v9",
        "gfx942",
    ]
    assert elf.offload_targets(ccob(3, good, method=7)) == ["compressed:method7"]
    assert elf.offload_targets(ccob(3, good)[:20]) == ["compressed:truncated"]


def test_errors(tmp_path: Path, linked: Path) -> None:
    text = tmp_path / "notes.txt"
    text.write_text("not an ELF file at all\n")
    with pytest.raises(elf.ElfError, match=r"notes\.txt: not an ELF file") as info:
        elf.needed(text)
    assert isinstance(info.value, ValueError)
    assert (info.value.path, info.value.reason) == (str(text), "not an ELF file")
    with pytest.raises(elf.ElfError, match="not an ELF file"):
        elf.fatbin_targets(text)

    elf32 = tmp_path / "elf32.so"
    elf32.write_bytes(b"\x7fELF\x01\x01\x01" + b"\0" * 100)
    with pytest.raises(elf.ElfError, match="not a 64-bit little-endian ELF file"):
        elf.needed(elf32)

    data = linked.read_bytes()
    cut = tmp_path / "cut.so"
    for size in (40, 64 + 30):  # in the ELF header, in the program headers
        cut.write_bytes(data[:size])
        with pytest.raises(elf.ElfError, match=r"cut\.so: truncated"):
            elf.needed(cut)
    cut.write_bytes(data[:-10])  # section headers come last
    with pytest.raises(elf.ElfError, match=r"cut\.so: truncated"):
        elf.section(cut, ".comment")
    with pytest.raises(elf.ElfError, match=r"cut\.so: truncated"):
        elf.fatbin_targets(cut)
    program = subprocess.run(
        [_tool("readelf"), "-lW", str(linked)], check=True, capture_output=True, text=True
    ).stdout
    dynamic = int(re.search(r"^\s*DYNAMIC\s+(0x[0-9a-f]+)", program, re.M).group(1), 16)
    cut.write_bytes(data[: dynamic + 8])  # in the dynamic segment
    with pytest.raises(elf.ElfError, match=r"cut\.so: truncated"):
        elf.needed(cut)


def test_cli(tmp_path: Path, linked: Path) -> None:
    # Run as the images run it: a copy alone, isolated from this project.
    script = tmp_path / "alone" / "elf.py"
    script.parent.mkdir()
    shutil.copy(elf.__file__, script)
    fat = build(
        tmp_path / "libfat.so",
        {"f.c": fatbin_c("fatbin", bundle(HOST, "hipv4-amdgcn-amd-amdhsa--gfx942"))},
    )

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        cmd = [sys.executable, "-I", str(script), *args]
        return subprocess.run(cmd, capture_output=True, text=True, check=False)

    done = run("needed", str(linked))
    assert (done.returncode, done.stderr) == (0, "")
    assert done.stdout == f"{linked}: {' '.join(readelf_needed(linked))}\n"
    done = run("targets", str(fat), str(linked))
    assert (done.returncode, done.stdout) == (0, f"{fat}: gfx942\n{linked}: -\n")
    bad = tmp_path / "bad.so"
    bad.write_text("text\n")
    done = run("targets", str(bad), str(fat))
    assert done.returncode == 1
    assert done.stderr == f"elf.py: {bad}: not an ELF file\n"
    assert done.stdout == f"{fat}: gfx942\n"
    done = run("--help")
    assert done.returncode == 0 and "targets" in done.stdout
    assert run("nonsense", str(fat)).returncode == 2
