"""AMD SMI in the stand-in upstream (tools/rehearsal/amdsmi.py, layout.py's part): the
generated libamd_smi.so from a small wrapper, the pin, the fetch, the unpacking."""

from __future__ import annotations

import hashlib
import io
import tarfile
from pathlib import Path

import pytest

from tools.rehearsal import amdsmi, layout, standin
from tools.rehearsal.amdsmi import AmdSmiError, Function, Pin

REPO = Path(__file__).resolve().parents[2]

# the shape of amdsmi_wrapper.py (ctypeslib's output), cut down
WRAPPER = """\
import ctypes
_libraries = {}
AMDSMI_STATUS_SUCCESS = 0
AMDSMI_STATUS_INIT_ERROR = 18
AMDSMI_STATUS_DRIVER_NOT_LOADED = 34
amdsmi_status_t = ctypes.c_uint32 # enum
amdsmi_free_name_value_pairs = _libraries['libamd_smi.so'].amdsmi_free_name_value_pairs
amdsmi_free_name_value_pairs.restype = None
amdsmi_free_name_value_pairs.argtypes = [ctypes.POINTER(None)]
amdsmi_init = _libraries['libamd_smi.so'].amdsmi_init
amdsmi_init.restype = amdsmi_status_t
amdsmi_init.argtypes = [uint64_t]
amdsmi_get_processor_handles = _libraries['libamd_smi.so'].amdsmi_get_processor_handles
amdsmi_get_processor_handles.restype = amdsmi_status_t
amdsmi_get_processor_handles.argtypes = [ctypes.POINTER(ctypes.c_uint32)]
"""


def test_bound_functions_in_the_wrappers_order_with_their_return_types():
    assert amdsmi.bound_functions(WRAPPER) == [
        Function("amdsmi_free_name_value_pairs", False),
        Function("amdsmi_init", True),
        Function("amdsmi_get_processor_handles", True),
    ]
    assert amdsmi.status_value(WRAPPER) == 34


def test_a_return_type_the_stand_in_cannot_answer_is_refused():
    text = WRAPPER + (
        "amdsmi_get_lib_name = _libraries['libamd_smi.so'].amdsmi_get_lib_name\n"
        "amdsmi_get_lib_name.restype = ctypes.c_char_p\n"
    )
    with pytest.raises(AmdSmiError, match=r"amdsmi_get_lib_name returns ctypes\.c_char_p"):
        amdsmi.bound_functions(text)
    with pytest.raises(AmdSmiError, match="binds no function"):
        amdsmi.bound_functions("import ctypes\n")
    with pytest.raises(AmdSmiError, match="defines no AMDSMI_STATUS_DRIVER_NOT_LOADED"):
        amdsmi.status_value("AMDSMI_STATUS_SUCCESS = 0\n")


def test_the_c_source_says_stand_in_and_answers_every_function():
    c = amdsmi.render_c(amdsmi.bound_functions(WRAPPER), 34, "7.0.2")
    assert "a STAND-IN, not AMD SMI" in c.splitlines()[0]
    assert "amdsmi 7.0.2" in c and "each of the 3 functions" in c
    assert "#define STANDIN_STATUS 34u /* AMDSMI_STATUS_DRIVER_NOT_LOADED */" in c
    assert "void amdsmi_free_name_value_pairs(void) {}\n" in c
    assert "unsigned int amdsmi_init(void) { return STANDIN_STATUS; }\n" in c
    assert "unsigned int amdsmi_get_processor_handles(void) { return STANDIN_STATUS; }\n" in c
    assert c.count("(void)") == 3


def sdist(tmp_path: Path, version: str = "7.0.2", wrapper: str = WRAPPER) -> Path:
    top = f"amdsmi-{version}"
    files = {
        "PKG-INFO": "Metadata-Version: 2.1\n",
        "pyproject.toml": '[project]\nname = "amdsmi"\n',
        "setup.cfg": "[egg_info]\n",
        "amdsmi.egg-info/PKG-INFO": "x\n",
        "amdsmi/__init__.py": "",
        "amdsmi/amdsmi_wrapper.py": wrapper,
    }
    out = tmp_path / f"{top}.tar.gz"
    with tarfile.open(out, "w:gz") as tar:
        for name, text in files.items():
            data = text.encode()
            info = tarfile.TarInfo(f"{top}/{name}")
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return out


def test_generate_reads_the_wrapper_of_the_sdist(tmp_path):
    c = amdsmi.generate(sdist(tmp_path), "7.0.2")
    assert "unsigned int amdsmi_init(void)" in c
    bare = tmp_path / "amdsmi-0.tar.gz"
    with tarfile.open(bare, "w:gz") as tar:
        tar.addfile(tarfile.TarInfo("amdsmi-0/pyproject.toml"), io.BytesIO(b""))
    with pytest.raises(AmdSmiError, match=r"has no amdsmi/amdsmi_wrapper\.py"):
        amdsmi.read_wrapper(bare)


def test_the_pin(tmp_path):
    pin = amdsmi.parse_pin({"version": "7.0.2", "sha256": "a" * 64}, "u.toml")
    assert pin.filename == "amdsmi-7.0.2.tar.gz"
    for bad, message in [
        ({"version": "7.0.2"}, "exactly version and sha256"),
        ({"version": ">=7", "sha256": "a" * 64}, "exact version"),
        ({"version": "7.0.2", "sha256": "A" * 64}, "64 lowercase hex"),
    ]:
        with pytest.raises(AmdSmiError, match=message):
            amdsmi.parse_pin(bad, "u.toml")
    text = 'suite = "sid"\nrocm_suite = "x"\npackages = ["a1"]\n[amd_smi]\nversion = "7"\n'
    (tmp_path / "upstream.toml").write_text(text)
    with pytest.raises(standin.StandInError, match=r"\[amd_smi\] needs"):
        standin.load_config(tmp_path / "upstream.toml")


def test_the_checked_in_config_pins_amd_smi():
    config = standin.load_config(REPO / "rehearsal/upstream.toml")
    assert config.amd_smi and config.amd_smi.filename.startswith("amdsmi-7.")


def test_fetch_finds_the_file_on_a_simple_index_and_checks_its_sha256(tmp_path):
    body = sdist(tmp_path).read_bytes()
    pages = {
        "https://one.invalid/simple/amdsmi/": b"<html><body></body></html>",
        "https://two.invalid/simple/amdsmi/": (
            b'<a href="../../files/amdsmi-7.0.1.tar.gz#sha256=00">amdsmi-7.0.1.tar.gz</a>'
            b'<a href="../../files/amdsmi-7.0.2.tar.gz#sha256=11">amdsmi-7.0.2.tar.gz</a>'
        ),
        "https://two.invalid/files/amdsmi-7.0.2.tar.gz": body,
    }

    def read(url):
        if url not in pages:
            raise OSError(f"404 {url}")
        return pages[url]

    dest = tmp_path / "dest"
    dest.mkdir()
    pin = Pin("7.0.2", hashlib.sha256(body).hexdigest())
    got = amdsmi.fetch(
        pin, ["https://one.invalid/simple", "https://two.invalid/simple/"], read, dest
    )
    assert got == dest / "amdsmi-7.0.2.tar.gz" and got.read_bytes() == body
    with pytest.raises(AmdSmiError, match="upstream.toml pins " + "0" * 64):
        amdsmi.fetch(Pin("7.0.2", "0" * 64), ["https://two.invalid/simple"], read, dest)
    with pytest.raises(
        AmdSmiError, match=r"amdsmi-7\.0\.9\.tar\.gz not found: .*no amdsmi-7\.0\.9"
    ):
        amdsmi.fetch(Pin("7.0.9", "0" * 64), ["https://two.invalid/simple"], read, dest)


def test_layout_unpacks_the_package_as_amds_image_and_compiles_the_library(tmp_path):
    root = tmp_path / "root"
    (root / "tmp").mkdir(parents=True)
    opt = "opt/rocm-10.1.0"
    (root / opt / "lib").mkdir(parents=True)
    files = layout.unpack_amd_smi(sdist(tmp_path), root / opt / "share/amd_smi")
    assert sorted(files) == [
        "amdsmi/__init__.py",
        "amdsmi/amdsmi_wrapper.py",
        "pyproject.toml",
        "setup.cfg",
    ]
    assert (root / opt / "share/amd_smi/pyproject.toml").stat().st_mode & 0o777 == 0o644
    c_source = tmp_path / "amd_smi_standin.c"
    c_source.write_text("int x;\n")
    calls = []

    def run(cmd, check):
        calls.append(cmd)
        assert (root / "tmp/amd_smi_standin.c").read_text() == "int x;\n"
        (root / opt / "lib/libamd_smi.so").write_bytes(b"\x7fELF")

    out = layout.compile_amd_smi(root, opt, c_source, "llvm-22", run=run)
    assert out == "/opt/rocm-10.1.0/lib/libamd_smi.so"
    assert calls[0][:3] == ["chroot", str(root), "/usr/lib/llvm-22/bin/clang"]
    assert "-shared" in calls[0] and calls[0][-1] == "/tmp/amd_smi_standin.c"
    assert not (root / "tmp/amd_smi_standin.c").exists()  # no trace in the image
    assert (root / opt / "lib/libamd_smi.so").stat().st_mode & 0o777 == 0o755
