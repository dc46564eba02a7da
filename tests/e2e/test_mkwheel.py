"""mkwheel.sh, run under busybox sh, writes a valid, installable, reproducible wheel."""

from __future__ import annotations

import base64
import hashlib
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

# the bootstrap's sid tree has busybox-static at /usr/bin/busybox (tests run inside it)
BUSYBOX = os.environ.get("BUSYBOX") or shutil.which("busybox") or "/usr/bin/busybox"
SCRIPT = os.environ.get("MKWHEEL", "tests/e2e/docker/mkwheel.sh")

DIST = "Torch-Foo_bar"
VERSION = "4.5.6+rocm9.8.7.gfx950"
TEXT = 'BUILD_INFO = {"arch": "gfx950", "n": 1}'
WHEEL_NAME = f"Torch_Foo_bar-{VERSION}-py3-none-any.whl"
INFO = f"Torch_Foo_bar-{VERSION}.dist-info"


def mkwheel(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [BUSYBOX, "sh", SCRIPT, *args], capture_output=True, text=True, check=False
    )


@pytest.fixture
def whl(tmp_path: Path) -> Path:
    result = mkwheel(DIST, VERSION, str(tmp_path / "out"), TEXT)
    assert result.returncode == 0, result.stderr
    path = tmp_path / "out" / WHEEL_NAME
    assert path.is_file()
    return path


def test_zip_is_valid_and_has_the_expected_entries(whl):
    with zipfile.ZipFile(whl) as zf:
        assert zf.testzip() is None
        assert zf.namelist() == [
            "torch_foo_bar/__init__.py",
            f"{INFO}/METADATA",
            f"{INFO}/WHEEL",
            f"{INFO}/RECORD",
        ]
        assert zf.read("torch_foo_bar/__init__.py").decode() == TEXT + "\n"
        metadata = zf.read(f"{INFO}/METADATA").decode()
        assert f"Name: {DIST}\n" in metadata
        assert f"Version: {VERSION}\n" in metadata
        assert "Tag: py3-none-any\n" in zf.read(f"{INFO}/WHEEL").decode()
        assert all(i.date_time == (1980, 1, 1, 0, 0, 0) for i in zf.infolist())


def test_record_hashes_and_sizes_match(whl):
    with zipfile.ZipFile(whl) as zf:
        lines = zf.read(f"{INFO}/RECORD").decode().splitlines()
        assert [line.split(",")[0] for line in lines] == zf.namelist()
        for line in lines:
            path, digest, size = line.split(",")
            if path.endswith("/RECORD"):
                assert (digest, size) == ("", "")
                continue
            data = zf.read(path)
            b64 = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=")
            assert digest == "sha256=" + b64.decode()
            assert int(size) == len(data)


def test_pip_installs_and_module_imports(whl, tmp_path):
    target = tmp_path / "target"
    pip = [sys.executable, "-m", "pip", "install", "--no-deps", "--no-index"]
    result = subprocess.run(
        [*pip, "--target", str(target), str(whl)], capture_output=True, text=True, check=False
    )
    assert result.returncode == 0, result.stdout + result.stderr
    code = (
        "import importlib.metadata, torch_foo_bar; "
        "print(repr(torch_foo_bar.BUILD_INFO)); "
        f"print(importlib.metadata.version({DIST!r}))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, "PYTHONPATH": str(target)},
    ).stdout.splitlines()
    assert out == [repr({"arch": "gfx950", "n": 1}), VERSION]


def test_default_module_text(tmp_path):
    assert mkwheel("plain", "1.0", str(tmp_path)).returncode == 0
    with zipfile.ZipFile(tmp_path / "plain-1.0-py3-none-any.whl") as zf:
        assert zf.read("plain/__init__.py") == b"BUILD_INFO = {}\n"


def test_output_is_deterministic(whl, tmp_path):
    again = tmp_path / "again"
    assert mkwheel(DIST, VERSION, str(again), TEXT).returncode == 0
    assert (again / WHEEL_NAME).read_bytes() == whl.read_bytes()


@pytest.mark.parametrize(
    "args",
    [(), ("a", "1.0"), ("a", "1.0", "out", "text", "extra"), ("a/b", "1.0", "out")],
)
def test_wrong_usage_fails_with_a_message(args, tmp_path):
    result = mkwheel(*[str(tmp_path / a) if a == "out" else a for a in args])
    assert result.returncode == 1
    assert "mkwheel.sh" in result.stderr
    assert not list(tmp_path.iterdir())
