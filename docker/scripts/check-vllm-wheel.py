"""Check that a vLLM wheel carries its Rust frontend: vllm-rs and vllm._rust_tool_parser.

Usage: python check-vllm-wheel.py WHEEL

vLLM's tools/build_rust.py builds both with setuptools-rust. The program
vllm-rs (a RustBin) is in one of two places, depending on the vLLM release:

  - in the package, `vllm/vllm-rs` (vLLM's setup.py moved it there);
  - among the wheel's scripts, `<name>-<version>.data/scripts/vllm-rs`, where
    setuptools-rust installs a RustBin (vLLM PR #57611); pip installs it into
    the environment's bin/.

Either is accepted. The tool parser is a Python extension,
`vllm/_rust_tool_parser.<tag>.so` (abi3 or the interpreter's tag). Exits 1
with one line naming what is missing when either is not there.
"""

import re
import sys
import zipfile
from pathlib import Path

PARSER = re.compile(r"^vllm/_rust_tool_parser\.[^/]*so$")


def problems(wheel: Path) -> list[str]:
    try:
        with zipfile.ZipFile(wheel) as z:
            names = set(z.namelist())
    except (OSError, zipfile.BadZipFile) as e:
        return [f"cannot read it as a wheel ({e}): pass the vllm wheel the build made"]
    dist_info = sorted({n.split("/", 1)[0] for n in names if ".dist-info/" in n})
    if len(dist_info) != 1:
        return [f"has {len(dist_info)} .dist-info directories, not 1: not a wheel"]
    script = dist_info[0].removesuffix(".dist-info") + ".data/scripts/vllm-rs"
    missing = []
    if "vllm/vllm-rs" not in names and script not in names:
        missing.append(f"no vllm-rs (neither vllm/vllm-rs nor {script})")
    if not any(PARSER.match(n) for n in names):
        missing.append("no vllm/_rust_tool_parser extension (vllm/_rust_tool_parser.*.so)")
    return missing


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print(
            f"check-vllm-wheel: expected one wheel, got {len(argv)} ({' '.join(argv)});"
            " usage: check-vllm-wheel.py WHEEL",
            file=sys.stderr,
        )
        return 2
    wheel = Path(argv[0])
    if not wheel.is_file():
        print(
            f"check-vllm-wheel: no wheel at {wheel}: the vllm wheel build made none",
            file=sys.stderr,
        )
        return 1
    found = problems(wheel)
    if found:
        print(
            f"check-vllm-wheel: {wheel.name}: {'; '.join(found)}: build it with"
            " VLLM_REQUIRE_RUST_FRONTEND=1 and the toolchain of its rust-toolchain.toml",
            file=sys.stderr,
        )
        return 1
    print(f"check-vllm-wheel: {wheel.name} carries vllm-rs and vllm._rust_tool_parser")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
