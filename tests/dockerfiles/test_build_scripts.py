"""The build scripts of docker/scripts on fixture source trees, with pip faked (no network).

A fake `python` first on PATH records every `python -m pip ...` call (its
arguments, the requirement files it was given, and the build environment at
`pip wheel` time) and makes the wheel that call would make; everything else
it hands to the real interpreter, so own-packages.py and the projects'
helper scripts really run.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

SCRIPTS = Path("docker/scripts").resolve()  # runfiles path (cwd = runfiles root)

FAKE_PYTHON = r"""#!/bin/bash
if [ "$1" = -m ] && [ "$2" = pip ]; then
    echo "pip ${*:3}" >>"$FAKE_LOG"
    args=("${@:3}")
    for i in "${!args[@]}"; do
        file=${args[$((i + 1))]:-}
        case "${args[$i]}" in
            --requirement|-r) echo "requirements: $(tr '\n' ' ' <"$file")" >>"$FAKE_LOG" ;;
            --constraint|-c) echo "constraints: $(tr '\n' ' ' <"$file")" >>"$FAKE_LOG" ;;
        esac
    done
    if [ "$3" = wheel ]; then
        env | sort | sed 's/^/env /' >>"$FAKE_LOG"
        for i in "${!args[@]}"; do
            if [ "${args[$i]}" = --wheel-dir ]; then
                mkdir -p "${args[$((i + 1))]}" && : >"${args[$((i + 1))]}/$FAKE_WHEEL"
            fi
        done
    fi
    exit 0
fi
exec "$REAL_PYTHON" "$@"
"""


class Run:
    def __init__(self, proc: subprocess.CompletedProcess[str], log: Path) -> None:
        self.proc = proc
        self.lines = log.read_text().splitlines() if log.exists() else []

    def calls(self, kind: str) -> list[str]:
        return [line for line in self.lines if line.startswith(f"pip {kind} ")]

    def env(self) -> dict[str, str]:
        return dict(line[4:].split("=", 1) for line in self.lines if line.startswith("env "))

    def first(self, prefix: str) -> str:
        return next(line for line in self.lines if line.startswith(prefix))


@pytest.fixture
def run_script(tmp_path):
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "python").write_text(FAKE_PYTHON)
    (bin_dir / "python").chmod(0o755)
    log = tmp_path / "pip.log"

    def run(script: str, *args: str, wheel: str, env: dict | None = None) -> Run:
        full_env = dict(
            os.environ,
            PATH=f"{bin_dir}:{os.environ['PATH']}",
            FAKE_LOG=str(log),
            FAKE_WHEEL=wheel,
            REAL_PYTHON=sys.executable,
            **(env or {}),
        )
        log.unlink(missing_ok=True)
        proc = subprocess.run(
            ["bash", str(SCRIPTS / script), *args], env=full_env, capture_output=True, text=True
        )
        return Run(proc, log)

    return run


def project(root: Path, requires: list[str], extra: dict[str, str] | None = None) -> Path:
    root.mkdir(parents=True)
    (root / "setup.py").write_text("")
    quoted = ", ".join(f'"{r}"' for r in requires)
    (root / "pyproject.toml").write_text(f"[build-system]\nrequires = [{quoted}]\n")
    for rel, text in (extra or {}).items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    return root


def test_triton_builds_amd_without_nvidias_downloads_on_our_build_tools(tmp_path, run_script):
    src = project(tmp_path / "triton", ["setuptools>=40.8.0", "cmake>=3.20,<4.0", "torch"])
    r = run_script(
        "build-triton.sh", "--version", "3.9.0", str(src), str(tmp_path / "out"),
        wheel="triton-3.9.0-cp314-cp314-linux_x86_64.whl",
    )  # fmt: skip
    assert r.proc.returncode == 0, r.proc.stderr
    # the project's build requirements, without the torch the image provides, with our pins
    assert r.first("requirements: ").split() == [
        "requirements:",
        "setuptools>=40.8.0",
        "cmake>=3.20,<4.0",
    ]
    (wheel,) = r.calls("wheel")
    assert "--no-build-isolation" in wheel.split()
    env = r.env()
    # every CUDA tool Triton would download names an (empty) directory instead
    for tool in ("PTXAS", "PTXAS_BLACKWELL", "CUOBJDUMP", "NVDISASM", "CUDACRT", "CUDART",
                 "CUPTI_INCLUDE", "CUPTI_LIB", "CUPTI_LIB_BLACKWELL"):  # fmt: skip
        assert env[f"TRITON_{tool}_PATH"] == env["TRITON_PTXAS_PATH"]
    assert env["TRITON_BUILD_PROTON"] == "OFF" and env["TRITON_BUILD_WITH_CCACHE"] == "true"
    assert "build-triton: triton-3.9.0-cp314" in r.proc.stdout


def test_triton_refuses_a_tree_without_setup_py(tmp_path, run_script):
    (tmp_path / "empty").mkdir()
    r = run_script(
        "build-triton.sh",
        "--version",
        "3.9.0",
        str(tmp_path / "empty"),
        str(tmp_path / "o"),
        wheel="x",
    )
    assert r.proc.returncode == 1 and "no setup.py in" in r.proc.stderr


def test_build_wheel_installs_build_requirements_minus_ours_without_isolation(tmp_path, run_script):
    src = project(
        tmp_path / "proj", ["setuptools>=64", "torch==2.11.*", "pytorch-triton-rocm", "ninja"]
    )
    r = run_script(
        "build-wheel.sh", "--arch", "gfx1100", str(src), str(tmp_path / "out"),
        wheel="proj-1.0-cp314-cp314-linux_x86_64.whl",
        env={"PYTORCH_ROCM_ARCH": "gfx1100"},
    )  # fmt: skip
    assert r.proc.returncode == 0, r.proc.stderr
    assert r.first("requirements: ").split() == ["requirements:", "setuptools>=64", "ninja"]
    assert "--no-build-isolation" in r.calls("wheel")[0].split()
    assert r.env()["PYTORCH_ROCM_ARCH"] == "gfx1100"


def test_build_wheel_isolated_installs_nothing_first(tmp_path, run_script):
    src = project(tmp_path / "proj", ["setuptools>=64"])
    r = run_script(
        "build-wheel.sh", "--arch", "gfx1100", str(src), str(tmp_path / "out"), "--isolated",
        wheel="proj-1.0-py3-none-any.whl",
    )  # fmt: skip
    assert r.proc.returncode == 0, r.proc.stderr
    assert r.calls("install") == [] and "--no-build-isolation" not in r.calls("wheel")[0].split()


@pytest.mark.parametrize("tool", ["ccache", "sccache"])
def test_build_env_puts_the_compiler_cache_in_front_of_every_compiler(tmp_path, tool):
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / tool).write_text("#!/bin/sh\n")
    (bin_dir / tool).chmod(0o755)
    etc = tmp_path / "etc"
    script = f". {SCRIPTS / 'build-env.sh'} >/dev/null && env"
    if tool == "sccache":  # base recorded a backend (configure-sccache.sh)
        etc.mkdir()
        (etc / "sccache.env").write_text("SCCACHE_BUCKET=b\n")
        script = f'sed "s#/etc/rocm-pytorch#{etc}#g" {SCRIPTS / "build-env.sh"} > {tmp_path}/env.sh'
        script += f" && . {tmp_path}/env.sh >/dev/null && env"
    env = dict(os.environ, PATH=f"{bin_dir}:/usr/bin:/bin", PYTORCH_ROCM_ARCH="gfx1100")
    out = subprocess.run(
        ["bash", "-c", script], env=env, capture_output=True, text=True, check=True
    )
    got = dict(line.split("=", 1) for line in out.stdout.splitlines() if "=" in line)
    for var in ("CMAKE_C_COMPILER_LAUNCHER", "CMAKE_CXX_COMPILER_LAUNCHER",
                "CMAKE_HIP_COMPILER_LAUNCHER", "HIP_CLANG_LAUNCHER"):  # fmt: skip
        assert got.get(var) == tool, var


def test_pytorch_installs_its_build_requirements_with_our_pins_and_builds_for_the_arch(
    tmp_path, run_script
):
    src = project(
        tmp_path / "pytorch",
        ["setuptools>=77,<82", "cmake>=3.27", "numpy"],
        {
            "tools/amd_build/build_amd.py": "print('hipified')\n",
            "requirements.txt": "numpy\n",
            "requirements-build.txt": "scikit-build-core>=1.0\n",
        },
    )
    r = run_script(
        "build-pytorch.sh", "--version", "2.15.0", "--rocm", "10.1.0-full", "--arch", "gfx1100",
        str(src), str(tmp_path / "out"),
        wheel="torch-2.15.0+rocm10.1.0-cp314-cp314-linux_x86_64.whl",
        env={"ROCM_VERSION": "10.1.0-full"},
    )  # fmt: skip
    assert r.proc.returncode == 0, r.proc.stderr
    install, mkl = r.calls("install")
    assert install.count("--requirement") == 3 and "requirements-build.txt" in install
    assert "mkl-static==2025.3.0" in mkl.split() and "mkl-include==2025.3.0" in mkl.split()
    files = [line for line in r.lines if line.startswith("requirements: ")]
    assert any("scikit-build-core>=1.0" in line for line in files)
    assert any("setuptools>=77,<82" in line for line in files)  # [build-system] requires
    env = r.env()
    assert env["PYTORCH_ROCM_ARCH"] == "gfx1100" and env["USE_ROCM"] == "1"
    assert env["PYTORCH_BUILD_VERSION"] == "2.15.0+rocm10.1.0" and "ROCM_VERSION" not in env
    assert env["BLAS"] == "MKL" and env["CMAKE_INCLUDE_PATH"].endswith("/include")
    assert "--no-build-isolation" in r.calls("wheel")[0].split()
    assert "hipified" in r.proc.stdout
