"""The Rust artifacts of the stand-in vLLM, for setuptools-rust (as vLLM's tools/build_rust.py).

vllm-rs (RustBin, rust/src/cmd) and vllm._rust_tool_parser (a Python
extension, rust/src/parser/python), with vLLM's manifest paths, targets and
cargo arguments. vLLM binds the extension with PyO3 (features
pyo3/abi3-py38); the stand-in's crate uses CPython's stable ABI itself
(Binding.NoBinding, py_limited_api), so it builds without a crates registry.
`python tools/build_rust.py` builds both in place, as vLLM's does.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from setuptools import setup
from setuptools_rust import Binding, RustBin, RustExtension

ROOT_DIR = Path(__file__).resolve().parents[1]
RUST_STAGING_DIR = ROOT_DIR / "vllm"


def rust_extensions(*, optional: bool = False) -> list[RustExtension]:
    return [
        RustBin(
            target="vllm-rs",
            path="rust/src/cmd/Cargo.toml",
            args=["--bin", "vllm-rs"],
            features=["native-tls-vendored"],
            optional=optional,
        ),
        RustExtension(
            target="vllm._rust_tool_parser",
            path="rust/src/parser/python/Cargo.toml",
            binding=Binding.NoBinding,
            optional=optional,
            py_limited_api=True,
        ),
    ]


def rust_py_extension_module_names() -> list[str]:
    return [
        target.rsplit(".", 1)[-1]
        for extension in rust_extensions()
        if extension.binding is not Binding.Exec
        for target in extension.target.values()
        if target.startswith("vllm._rust_")
    ]


def build_binary(build_rust_args: list[str]) -> None:
    os.chdir(ROOT_DIR)
    RUST_STAGING_DIR.mkdir(exist_ok=True)
    setup(
        name="vllm-rust-frontend-build",
        packages=[],
        rust_extensions=rust_extensions(optional=False),
        options={"install_scripts": {"build_dir": str(RUST_STAGING_DIR)}},
        script_args=["build_rust", "--quiet", "--inplace", *build_rust_args],
    )


if __name__ == "__main__":
    build_binary(sys.argv[1:])
