"""NIXL's ROCm wheel, and the `nixl` import name over it.

Usage: python nixl-rocm.py rename PYPROJECT
       python nixl-rocm.py shim NIXL_ROCM_WHEEL OUT_DIR

NIXL names its Python project for a CUDA build (pyproject.toml: `nixl-cu12`)
and its package by `-Dwheel_variant` (`nixl_rocm` for ROCm). vLLM's ROCm
image renames the project to `nixl-rocm` before building (docker/
Dockerfile.rocm, stage build_nixl: contrib/tomlutil.py --wheel-name), so the
wheel is what it is: distribution nixl-rocm, import package nixl_rocm.

`rename` does that rename (and fails when the pyproject is not the one it
knows). `shim` writes a small pure-Python wheel, distribution `nixl` at the
same version, requiring nixl-rocm: its `nixl` package makes `nixl._api`,
`nixl._bindings`, `nixl._utils` and `nixl.logging` the very modules of
nixl_rocm. Upstream's own `nixl` meta package only looks for CUDA builds
(nixl-meta/nixl/__init__.py tries nixl_cu13, nixl_cu12), and LMCache imports
`nixl._api`.
"""

import base64
import hashlib
import re
import sys
import zipfile
from pathlib import Path

SUBMODULES = ("_api", "_bindings", "_utils", "logging")
SHIM = '''"""`nixl` over this image's ROCm build of NIXL (nixl_rocm): one set of modules."""

import importlib
import sys

import nixl_rocm as _impl

for _name in {submodules!r}:
    try:
        _module = importlib.import_module("nixl_rocm." + _name)
    except ImportError:
        continue
    sys.modules[__name__ + "." + _name] = _module
    globals()[_name] = _module

__version__ = getattr(_impl, "__version__", "{version}")
'''


def die(message: str) -> None:
    sys.exit(f"nixl-rocm: {message}")


def rename(pyproject: Path) -> None:
    text = pyproject.read_text()
    new, n = re.subn(r'^name = "nixl-cu\d+"$', 'name = "nixl-rocm"', text, flags=re.M)
    if n != 1:
        die(
            f'{pyproject}: no `name = "nixl-cu<N>"` line to rename;'
            " has NIXL changed how it names its wheel?"
        )
    pyproject.write_text(new)
    print(f"nixl-rocm: {pyproject}: project renamed to nixl-rocm")


def _record_line(name: str, data: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{name},sha256={digest},{len(data)}"


def shim(wheel: Path, out: Path) -> Path:
    m = re.fullmatch(r"nixl_rocm-([^-]+)-.*\.whl", wheel.name)
    if not m:
        die(f"{wheel.name} is not a nixl_rocm wheel (nixl_rocm-<version>-...whl)")
    version = m.group(1)
    info = f"nixl-{version}.dist-info"
    files = {
        "nixl/__init__.py": SHIM.format(submodules=SUBMODULES, version=version).encode(),
        f"{info}/METADATA": (
            f"Metadata-Version: 2.1\nName: nixl\nVersion: {version}\n"
            "Summary: NIXL's import name over its ROCm build\n"
            f"Requires-Dist: nixl-rocm=={version}\n"
        ).encode(),
        f"{info}/WHEEL": (
            b"Wheel-Version: 1.0\nGenerator: nixl-rocm.py\nRoot-Is-Purelib: true\n"
            b"Tag: py3-none-any\n"
        ),
    }
    record = [_record_line(name, data) for name, data in files.items()] + [f"{info}/RECORD,,"]
    files[f"{info}/RECORD"] = ("\n".join(record) + "\n").encode()
    out.mkdir(parents=True, exist_ok=True)
    target = out / f"nixl-{version}-py3-none-any.whl"
    with zipfile.ZipFile(target, "w", zipfile.ZIP_DEFLATED) as z:
        for name, data in files.items():
            z.writestr(zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0)), data)
    print(f"nixl-rocm: {target.name} (nixl over nixl_rocm {version})")
    return target


def main(argv: list[str]) -> None:
    if len(argv) == 2 and argv[0] == "rename":
        rename(Path(argv[1]))
    elif len(argv) == 3 and argv[0] == "shim":
        shim(Path(argv[1]), Path(argv[2]))
    else:
        die("usage: nixl-rocm.py rename PYPROJECT | shim NIXL_ROCM_WHEEL OUT_DIR")


if __name__ == "__main__":
    main(sys.argv[1:])
