"""The stand-in Rust servers: the rustup channel manifest and rust-installer tarballs,
the toolchain made of Debian's packages (on a small Debian-shaped tree of made-up ELF
files), and the crates registry's index and reproducible .crate files, served."""

import gzip
import hashlib
import io
import json
import os
import struct
import tarfile
import tomllib
import urllib.request
from pathlib import Path

import pytest

from tools.mirrors import settings
from tools.rehearsal import rust, sources

T = rust.TARGET


def _elf(path: Path, soname: str = "", needed: tuple[str, ...] = ()) -> Path:
    """A minimal ELF64 file whose only content is a .dynamic and its string table."""
    strings = b"\0"
    entries = []
    for tag, name in [(1, n) for n in needed] + ([(14, soname)] if soname else []):
        entries.append((tag, len(strings)))
        strings += name.encode() + b"\0"
    dynamic = b"".join(struct.pack("<qQ", t, v) for t, v in entries) + struct.pack("<qQ", 0, 0)
    dynstr_at = 64
    dynamic_at = dynstr_at + len(strings)
    shoff = dynamic_at + len(dynamic)
    head = bytearray(64)
    head[:6] = b"\x7fELF\x02\x01"
    struct.pack_into("<Q", head, 0x28, shoff)
    struct.pack_into("<HH", head, 0x3A, 64, 3)
    sections = b"".join(
        [
            struct.pack("<IIQQQQIIQQ", 0, 0, 0, 0, 0, 0, 0, 0, 0, 0),
            struct.pack("<IIQQQQIIQQ", 0, 3, 0, 0, dynstr_at, len(strings), 0, 0, 1, 0),
            struct.pack("<IIQQQQIIQQ", 0, 6, 0, 0, dynamic_at, len(dynamic), 1, 0, 8, 16),
        ]
    )
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(bytes(head) + strings + dynamic + sections)
    path.chmod(0o755)
    return path


def test_elf_dynamic_reads_soname_and_needed(tmp_path):
    lib = _elf(tmp_path / "libx.so.1", "libx.so.1", ("liby.so.2", "libc.so.6"))
    assert rust.elf_dynamic(lib) == ("libx.so.1", ["liby.so.2", "libc.so.6"])
    (tmp_path / "text").write_text("not an ELF file, long enough to have a header " * 3)
    assert rust.elf_dynamic(tmp_path / "text") is None
    _, needed = rust.elf_dynamic(Path("/bin/sh").resolve())  # a real one
    assert "libc.so.6" in needed


def test_library_closure_follows_needed_and_leaves_glibc_out(tmp_path):
    libs = {
        "libx.so.1": _elf(tmp_path / "libx.so.1", "libx.so.1", ("liby.so.2", "libc.so.6")),
        "liby.so.2": _elf(tmp_path / "liby.so.2", "liby.so.2", ("libgcc_s.so.1", "libm.so.6")),
    }
    prog = _elf(tmp_path / "prog", needed=("libx.so.1", "libnope.so.3", "ld-linux-x86-64.so.2"))
    found, missing = rust.library_closure([prog], libs)
    assert found == libs
    assert missing == ["libnope.so.3"]


def _debian_tree(root: Path) -> Path:
    """Debian's rustc, cargo and libstd-rust-dev as dpkg-deb -x leaves them, in small."""
    usr = root / "usr"
    multiarch = usr / "lib" / rust.MULTIARCH
    driver = "librustc_driver-0123abcd.so"
    _elf(usr / "bin" / "rustc", needed=(driver, "libc.so.6"))
    _elf(usr / "bin" / "rustdoc", needed=(driver, "libgcc_s.so.1"))
    _elf(usr / "bin" / "cargo", needed=("libcurl.so.4", "libz.so.1", "libc.so.6"))
    _elf(multiarch / driver, driver, ("libLLVM.so.22.1", "libstdc++.so.6"))
    _elf(usr / "lib" / "llvm-22" / "lib" / "libLLVM.so.1", "libLLVM.so.22.1", ("libz.so.1",))
    (multiarch / "libLLVM.so.22.1").symlink_to("/usr/lib/llvm-22/lib/libLLVM.so.1")  # absolute
    _elf(multiarch / "libstdc++.so.6.0.34", "libstdc++.so.6")
    (multiarch / "libstdc++.so.6").symlink_to("libstdc++.so.6.0.34")
    _elf(multiarch / "libz.so.1.3", "libz.so.1")
    (multiarch / "libz.so.1").symlink_to("libz.so.1.3")
    _elf(multiarch / "libcurl.so.4.8.0", "libcurl.so.4", ("libz.so.1",))
    (multiarch / "libcurl.so.4").symlink_to("libcurl.so.4.8.0")
    std = usr / "lib" / "rustlib" / T / "lib"
    std.mkdir(parents=True)
    (std / "libstd-0123.rlib").write_bytes(b"!<arch>\n")
    (usr / "lib" / "rustlib" / "etc").mkdir()
    (usr / "lib" / "rustlib" / "etc" / "rust_types.py").write_text("")
    return root


def test_the_toolchain_is_laid_out_as_rustups_with_its_libraries(tmp_path):
    comps = rust.toolchain_components(_debian_tree(tmp_path))
    rel = {
        name: {p: str(f.relative_to(tmp_path)) for p, f in c.items()} for name, c in comps.items()
    }
    assert rel["rustc"] == {
        "bin/rustc": "usr/bin/rustc",
        "bin/rustdoc": "usr/bin/rustdoc",
        "lib/librustc_driver-0123abcd.so": f"usr/lib/{rust.MULTIARCH}/librustc_driver-0123abcd.so",
        "lib/libLLVM.so.22.1": "usr/lib/llvm-22/lib/libLLVM.so.1",  # the link followed
        "lib/libstdc++.so.6": f"usr/lib/{rust.MULTIARCH}/libstdc++.so.6.0.34",
        "lib/libz.so.1": f"usr/lib/{rust.MULTIARCH}/libz.so.1.3",
        "lib/rustlib/etc/rust_types.py": "usr/lib/rustlib/etc/rust_types.py",
    }
    # what both need ships once, with rustc (rustup refuses two components' same file)
    assert rel["cargo"] == {
        "bin/cargo": "usr/bin/cargo",
        "lib/libcurl.so.4": f"usr/lib/{rust.MULTIARCH}/libcurl.so.4.8.0",
    }
    assert rel["rust-std"] == {
        f"lib/rustlib/{T}/lib/libstd-0123.rlib": f"usr/lib/rustlib/{T}/lib/libstd-0123.rlib"
    }


def test_a_library_no_package_has_is_named(tmp_path):
    root = _debian_tree(tmp_path)
    _elf(root / "usr" / "bin" / "cargo", needed=("libgit2.so.1.9",))
    with pytest.raises(rust.RustError, match=r"cargo needs libgit2\.so\.1\.9"):
        rust.toolchain_components(root)


def test_the_installer_tarball_is_rust_installer_version_3_and_reproducible(tmp_path):
    files = {
        f"lib/rustlib/{T}/lib/libstd.rlib": _elf(tmp_path / "in" / "a"),
        "bin/x": _elf(tmp_path / "in" / "b"),
    }
    sha = rust.installer_tarball("rust-std", files, tmp_path / "one.tar.gz")
    assert sha == hashlib.sha256((tmp_path / "one.tar.gz").read_bytes()).hexdigest()
    assert rust.installer_tarball("rust-std", files, tmp_path / "two.tar.gz") == sha
    top, name = f"rust-std-nightly-{T}", f"rust-std-{T}"
    with tarfile.open(tmp_path / "one.tar.gz") as tar:
        members = tar.getmembers()
        names = [m.name for m in members]
        read = {m.name: tar.extractfile(m).read() for m in members if m.isfile()}
    assert read[f"{top}/rust-installer-version"] == b"3\n"
    assert read[f"{top}/components"] == f"{name}\n".encode()
    assert read[f"{top}/{name}/manifest.in"] == (
        f"file:bin/x\nfile:lib/rustlib/{T}/lib/libstd.rlib\n".encode()
    )
    for m in members:  # every file after its directories, regular files only
        parent = m.name.rpartition("/")[0]
        assert parent == "" or names.index(parent) < names.index(m.name), m.name
        assert m.isdir() or m.isfile()
    assert next(m for m in members if m.name == f"{top}/{name}/bin/x").mode == 0o755


def test_the_channel_manifest_is_rustups_v2_with_the_minimal_profile():
    comps = {n: (f"{n}-nightly-{T}.tar.gz", n * 4) for n in ("rustc", "cargo", "rust-std")}
    text = rust.manifest_text("2026-03-10", "1.97.1-nightly (x)", comps)
    m = tomllib.loads(text)
    assert m["manifest-version"] == "2" and m["date"] == "2026-03-10"
    assert m["profiles"]["minimal"] == ["rustc", "cargo", "rust-std"]
    rust_pkg = m["pkg"]["rust"]["target"][T]
    assert rust_pkg["available"] is True and rust_pkg["extensions"] == []
    assert sorted((c["pkg"], c["target"]) for c in rust_pkg["components"]) == [
        ("cargo", T),
        ("rust-std", T),
        ("rustc", T),
    ]
    for name, (file, sha) in comps.items():
        target = m["pkg"][name]["target"][T]
        # rust-lang's URL: rustup puts RUSTUP_DIST_SERVER in place of its origin
        assert target["url"] == f"https://static.rust-lang.org/dist/2026-03-10/{file}"
        assert target["hash"] == sha and target["available"] is True


@pytest.mark.parametrize(
    ("name", "path"),
    [("a", "1/a"), ("ab", "2/ab"), ("hex", "3/h/hex"), ("anyhow", "an/yh/anyhow"),
     ("Serde_JSON", "se/rd/serde_json")],
)  # fmt: skip
def test_index_paths_are_cargos(name, path):
    assert rust.index_path(name) == path


def test_an_index_entry_carries_deps_features_and_checksum():
    manifest = tomllib.loads(
        """
[package]
name = "demo"
version = "1.2.3"
rust-version = "1.70"
[dependencies]
hex = "0.4"
fast = { package = "anyhow", version = "1", optional = true, default-features = false }
[build-dependencies]
cc = { version = "1.0", features = ["parallel"] }
[dev-dependencies]
x = "2"
[features]
default = ["std"]
std = []
"""
    )
    entry = json.loads(rust.index_entry(manifest, "ab" * 32))
    assert entry["name"] == "demo" and entry["vers"] == "1.2.3" and entry["cksum"] == "ab" * 32
    assert entry["features"] == {"default": ["std"], "std": []}
    assert entry["yanked"] is False and entry["links"] is None and entry["rust_version"] == "1.70"
    deps = {d["name"]: d for d in entry["deps"]}
    assert deps["hex"]["req"] == "0.4" and deps["hex"]["kind"] == "normal"
    assert deps["fast"]["package"] == "anyhow" and deps["fast"]["optional"] is True
    assert deps["fast"]["default_features"] is False
    assert deps["cc"]["kind"] == "build" and deps["cc"]["features"] == ["parallel"]
    assert deps["x"]["kind"] == "dev"
    with pytest.raises(rust.RustError, match="registry crates only"):
        rust.index_entry(tomllib.loads('[package]\nname="a"\nversion="1.0.0"\n'
                                       '[dependencies]\nb = { path = "../b" }\n'), "")  # fmt: skip


def test_a_crate_file_is_reproducible_and_leaves_build_output_out(tmp_path):
    crate = tmp_path / "demo"
    (crate / "src").mkdir(parents=True)
    (crate / "Cargo.toml").write_text('[package]\nname = "demo"\nversion = "0.1.0"\n')
    (crate / "src" / "lib.rs").write_text("pub fn f() {}\n")
    first = rust.crate_file(crate)
    (crate / "target" / "debug").mkdir(parents=True)
    (crate / "target" / "debug" / "junk").write_text("x")
    (crate / "Cargo.lock").write_text("x")
    os.utime(crate / "src" / "lib.rs", (1, 1))
    assert rust.crate_file(crate) == first
    with tarfile.open(fileobj=io.BytesIO(first)) as tar:
        assert tar.getnames() == ["demo-0.1.0/Cargo.toml", "demo-0.1.0/src/lib.rs"]
    (crate / "src" / "lib.rs").write_text("pub fn g() {}\n")
    assert rust.crate_file(crate) != first


def test_the_checked_in_configuration_and_crates():
    config = rust.load()
    assert config.channels and all(c.startswith("nightly-") for c in config.channels)
    assert config.suite == tomllib.loads(rust.UPSTREAM.read_text())["suite"]
    crates = {rust.crate_meta(c)[:2] for c in config.crates}
    assert {("hex", "0.4.3"), ("anyhow", "1.0.100")} <= crates


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('channels = ["stable"]\npackages = ["rustc", "cargo", "libstd-rust-dev"]\n',
         "not nightly-YYYY-MM-DD"),
        ('channels = []\npackages = ["rustc"]\n', "must include cargo"),
        ('channel = []\n', "unknown keys"),
    ],
)  # fmt: skip
def test_a_bad_configuration_names_the_problem(tmp_path, text, message):
    (tmp_path / "rust.toml").write_text(text)
    (tmp_path / "upstream.toml").write_text('suite = "sid"\n')
    with pytest.raises(rust.RustError, match=message):
        rust.load(tmp_path / "rust.toml", tmp_path / "upstream.toml")


def test_the_registry_is_served_as_cargo_reads_it(tmp_path):
    p = rust.Paths(tmp_path / "rust")
    sums = rust.build_registry(rust.load().crates, p.crates)
    port = rust.serve(p)
    try:
        base = f"http://127.0.0.1:{port}/crates"

        def get(url: str) -> bytes:
            with urllib.request.urlopen(url, timeout=10) as r:
                return r.read()

        config = json.loads(get(f"{base}/index/config.json"))
        assert config["dl"] == f"{base}/dl/{{crate}}/{{crate}}-{{version}}.crate"
        entry = json.loads(get(f"{base}/index/3/h/hex"))
        assert entry["vers"] == "0.4.3" and entry["cksum"] == sums["hex 0.4.3"]
        crate = get(config["dl"].replace("{crate}", "hex").replace("{version}", "0.4.3"))
        assert hashlib.sha256(crate).hexdigest() == sums["hex 0.4.3"]
        assert rust.answering(p) == port
    finally:
        assert rust.stop(p)
    assert rust.answering(p) is None


def test_the_mirror_settings_sources_writes_are_accepted(tmp_path):
    file = tmp_path / "mirrors.toml"
    file.write_text(sources.mirror_settings(9418, 8080))
    loaded = settings.load(file)
    settings.validate(loaded)
    assert loaded.git_rewrite == {"https://github.com/": "git://127.0.0.1:9418/github.com/"}
    assert loaded.rust_dist_server == "http://127.0.0.1:8080/rustup"
    assert loaded.rust_crates_registry == "sparse+http://127.0.0.1:8080/crates/index/"
    assert "[rust]" not in sources.mirror_settings(9418, None)


def test_a_crate_is_the_same_bytes_whatever_zlib_python_links():
    data = os.urandom(150_000)  # three stored blocks
    packed = rust._gzip_stored(data)
    assert gzip.decompress(packed) == data
    assert packed[:10] == b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\xff"  # no name, no time
    assert gzip.decompress(rust._gzip_stored(b"")) == b""


def test_the_stand_in_sources_cargo_locks_pin_the_registrys_crates(tmp_path):
    """A stand-in's Cargo.lock (vLLM's rust/Cargo.lock) names crates-io crates: each must
    be a stand-in crate at that version with the checksum the registry serves."""
    sums = rust.build_registry(rust.load().crates, tmp_path)
    for lock in sorted((rust.CONFIG.parent / "sources").rglob("Cargo.lock")):
        for package in tomllib.loads(lock.read_text()).get("package", []):
            if package.get("source", "").startswith("registry+"):
                key = f"{package['name']} {package['version']}"
                assert key in sums, f"{lock}: {key} is no stand-in crate"
                assert package.get("checksum") == sums[key], f"{lock}: {key}'s checksum"
