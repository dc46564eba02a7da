"""docker/scripts/check-vllm-wheel.py on small zip wheels of each vllm-rs layout."""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

SCRIPT = Path("docker/scripts/check-vllm-wheel.py").resolve()  # runfiles path
WHEEL = "vllm-0.33.0+rocm101-cp314-cp314-linux_x86_64.whl"
DIST = "vllm-0.33.0+rocm101"
PARSER = "vllm/_rust_tool_parser.abi3.so"
COMMON = ["vllm/__init__.py", "vllm/_C.abi3.so", f"{DIST}.dist-info/METADATA",
          f"{DIST}.dist-info/WHEEL", f"{DIST}.dist-info/RECORD"]  # fmt: skip


def wheel(tmp_path: Path, members: list[str], name: str = WHEEL) -> Path:
    path = tmp_path / name
    with zipfile.ZipFile(path, "w") as z:
        for member in COMMON + members:
            z.writestr(member, b"\x7fELF" if member.endswith(("-rs", ".so")) else b"")
    return path


def check(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(SCRIPT), *args], capture_output=True, text=True, check=False
    )


@pytest.mark.parametrize(
    "vllm_rs",
    [
        "vllm/vllm-rs",  # in the package (vLLM's setup.py moves it there)
        f"{DIST}.data/scripts/vllm-rs",  # setuptools-rust's RustBin script (vLLM PR #57611)
    ],
)
def test_either_vllm_rs_layout_passes(tmp_path, vllm_rs):
    proc = check(str(wheel(tmp_path, [vllm_rs, PARSER])))
    assert proc.returncode == 0, proc.stderr
    assert "carries vllm-rs and vllm._rust_tool_parser" in proc.stdout


def test_the_parser_may_carry_the_interpreters_tag(tmp_path):
    parser = "vllm/_rust_tool_parser.cpython-314-x86_64-linux-gnu.so"
    proc = check(str(wheel(tmp_path, ["vllm/vllm-rs", parser])))
    assert proc.returncode == 0, proc.stderr


@pytest.mark.parametrize(
    ("members", "missing"),
    [
        (
            [PARSER],
            "no vllm-rs (neither vllm/vllm-rs nor vllm-0.33.0+rocm101.data/scripts/vllm-rs)",
        ),
        # a script of another distribution's data directory is not this wheel's
        ([PARSER, "other-1.0.data/scripts/vllm-rs"], "no vllm-rs"),
        # vllm-rs elsewhere in the package does not count
        ([PARSER, "vllm/bin/vllm-rs"], "no vllm-rs"),
        (["vllm/vllm-rs"], "no vllm/_rust_tool_parser extension"),
        (["vllm/vllm-rs", "vllm/_rust_tool_parser.py"], "no vllm/_rust_tool_parser extension"),
    ],
)
def test_a_wheel_without_them_fails_in_one_line(tmp_path, members, missing):
    proc = check(str(wheel(tmp_path, members)))
    assert proc.returncode == 1
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    assert lines[0].startswith(f"check-vllm-wheel: {WHEEL}: ")
    assert missing in lines[0]
    assert "VLLM_REQUIRE_RUST_FRONTEND=1" in lines[0]


def test_neither_fails_naming_both(tmp_path):
    proc = check(str(wheel(tmp_path, [])))
    assert proc.returncode == 1
    assert "no vllm-rs" in proc.stderr and "no vllm/_rust_tool_parser" in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1


def test_no_wheel_or_several_or_not_a_zip(tmp_path):
    # the unmatched glob bash passes on as it is
    none = check(str(tmp_path / "vllm-*.whl"))
    assert none.returncode == 1 and "no wheel at" in none.stderr
    a = wheel(tmp_path, ["vllm/vllm-rs", PARSER])
    b = wheel(tmp_path, ["vllm/vllm-rs", PARSER], name="vllm-0.34.0-cp314-cp314-linux_x86_64.whl")
    two = check(str(a), str(b))
    assert two.returncode == 2 and "expected one wheel, got 2" in two.stderr
    bad = tmp_path / "vllm-0-cp314-cp314-linux_x86_64.whl"
    bad.write_text("not a zip")
    broken = check(str(bad))
    assert broken.returncode == 1 and "cannot read it as a wheel" in broken.stderr
