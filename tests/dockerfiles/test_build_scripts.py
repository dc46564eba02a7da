"""The build scripts of docker/scripts on fixture source trees, with pip faked (no network).

A fake `python` first on PATH records every `python -m pip ...` call (its
arguments, the requirement files it was given, and the build environment at
`pip wheel` time) and makes the wheel that call would make; everything else
it hands to the real interpreter, so own-packages.py and the projects'
helper scripts really run.
"""

from __future__ import annotations

import os
import shutil
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


# install-rust.sh runs beside a fake apt-install.sh, with fake rustup, rustc
# and cargo first on PATH: each records its arguments and the environment
# rustup and cargo read; cargo vendor prints the configuration cargo prints.
FAKE_RUST_TOOL = r"""#!/bin/bash
tool=${0##*/}
echo "$tool $*" >>"$FAKE_LOG"
for var in RUSTUP_DIST_SERVER CARGO_HTTP_CAINFO SSL_CERT_FILE CARGO_NET_GIT_FETCH_WITH_CLI; do
    echo "$tool env $var=${!var-<unset>}" >>"$FAKE_LOG"
done
if [ "$tool" = cargo ] && [[ " $* " == *" vendor "* ]] && [ "${FAKE_VENDOR:-ok}" = ok ]; then
    dir=${*: -1}
    mkdir -p "$dir/serde" "$dir/tokio"
    printf '[source.crates-io]\nreplace-with = "vendored-sources"\n\n'
    printf '[source.vendored-sources]\ndirectory = "%s"\n' "$dir"
fi
exit 0
"""

TOOLCHAIN = '[toolchain]\nchannel = "nightly-2026-03-10"\n'


@pytest.fixture
def rust(tmp_path):
    scripts = tmp_path / "scripts"
    scripts.mkdir()
    (scripts / "install-rust.sh").write_text((SCRIPTS / "install-rust.sh").read_text())
    (scripts / "apt-install.sh").write_text('#!/bin/sh\necho "apt-install $*" >>"$FAKE_LOG"\n')
    (scripts / "apt-install.sh").chmod(0o755)
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for tool in ("rustup", "rustc", "cargo"):
        (bin_dir / tool).write_text(FAKE_RUST_TOOL)
        (bin_dir / tool).chmod(0o755)
    secrets = tmp_path / "secrets"
    secrets.mkdir()
    src = tmp_path / "vllm"
    (src / "rust").mkdir(parents=True)
    (src / "rust-toolchain.toml").write_text(TOOLCHAIN)
    (src / "rust" / "Cargo.toml").write_text("[workspace]\n")
    (src / "rust" / "extra").mkdir()
    (src / "rust" / "extra" / "Cargo.toml").write_text("[package]\n")
    log = tmp_path / "rust.log"

    def run(*manifests: str, env: dict | None = None):
        log.unlink(missing_ok=True)
        full_env = dict(
            os.environ,
            PATH=f"{bin_dir}:{os.environ['PATH']}",
            FAKE_LOG=str(log),
            ROCM_PYTORCH_SECRETS_DIR=str(secrets),
            CARGO_HOME=str(tmp_path / "cargo"),
            **(env or {}),
        )
        for var in ("RUSTUP_DIST_SERVER", "CARGO_HTTP_CAINFO", "SSL_CERT_FILE"):
            full_env.pop(var, None)
        proc = subprocess.run(
            ["bash", str(scripts / "install-rust.sh"), str(src), str(tmp_path / "crates"),
             *(manifests or ("rust/Cargo.toml",))],
            env=full_env, capture_output=True, text=True,
        )  # fmt: skip
        lines = log.read_text().splitlines() if log.exists() else []
        return proc, lines

    run.src = src
    run.secrets = secrets
    run.cargo_home = tmp_path / "cargo"
    run.vendor = tmp_path / "crates"
    return run


def test_rust_installs_the_pinned_nightly_and_vendors_the_locked_crates_offline(rust):
    proc, lines = rust()
    assert proc.returncode == 0, proc.stderr
    assert "apt-install rustup protobuf-compiler" in lines
    assert "rustup toolchain install nightly-2026-03-10 --profile minimal" in lines
    assert "rustup default nightly-2026-03-10" in lines
    # without the rust-mirror secret: rustup's and cargo's own defaults
    assert "rustup env RUSTUP_DIST_SERVER=<unset>" in lines
    assert "cargo env CARGO_HTTP_CAINFO=<unset>" in lines
    (vendor,) = [line for line in lines if line.startswith("cargo vendor")]
    assert vendor.split() == [
        "cargo", "vendor", "--locked", "--respect-source-config",
        "--manifest-path", f"{rust.src}/rust/Cargo.toml", str(rust.vendor),
    ]  # fmt: skip
    assert "cargo env CARGO_NET_GIT_FETCH_WITH_CLI=true" in lines
    config = (rust.cargo_home / "config.toml").read_text()
    assert f'directory = "{rust.vendor}"' in config
    assert 'replace-with = "vendored-sources"' in config
    assert config.rstrip().endswith("[net]\noffline = true")
    assert "nightly-2026-03-10, 2 crates in" in proc.stdout


def test_rust_takes_the_dist_server_and_crates_registry_from_the_rust_mirror_secret(rust):
    # the secret as tools/mirrors renders it from the host's [rust] settings
    from tools.mirrors import secrets, settings

    mine = settings.Settings(
        rust_dist_server="https://rust.example.internal/dist/",
        rust_crates_registry="sparse+https://crates.example.internal/index/",
    )
    settings.validate(mine)
    resolved = secrets.resolve(mine, etc_apt=rust.secrets, pip_files=[], ca_bundle="")
    rendered = secrets.render(resolved, rust.secrets / "rendered")
    shutil.copy(rendered["rust-mirror"], rust.secrets / "rust-mirror")
    (rust.secrets / "mirror-ca").write_text("-----BEGIN CERTIFICATE-----\n")
    proc, lines = rust("rust/Cargo.toml", "rust/extra/Cargo.toml")
    assert proc.returncode == 0, proc.stderr
    assert "rustup env RUSTUP_DIST_SERVER=https://rust.example.internal/dist" in lines
    (vendor,) = [line for line in lines if line.startswith("cargo --config")]
    assert vendor.split()[:5] == [
        "cargo",
        "--config",
        'source.crates-io.replace-with="rust-mirror"',
        "--config",
        'source.rust-mirror.registry="sparse+https://crates.example.internal/index/"',
    ]
    assert f"--sync {rust.src}/rust/extra/Cargo.toml" in vendor
    assert f"cargo env CARGO_HTTP_CAINFO={rust.secrets}/mirror-ca" in lines
    # rustup trusts the mirror's CA with the image's own bundle
    assert any(
        line.startswith("rustup env SSL_CERT_FILE=") and "<unset>" not in line for line in lines
    )
    # the configuration that stays in the layer names no mirror
    assert "example.internal" not in (rust.cargo_home / "config.toml").read_text()


@pytest.mark.parametrize(
    ("setting", "message"),
    [
        ("dist-server ftp://rust.example.internal\n", "is not a http https URL"),
        ("crates-registry https://user:pw@crates.example.internal/\n", "credentials in its URL"),
        (
            "crates-mirror sparse+https://crates.example.internal/\n",
            "unknown setting 'crates-mirror'",
        ),
        ("dist-server\n", "'dist-server' needs exactly one URL"),
        ("dist-server https://a.internal https://b.internal\n", "needs exactly one URL"),
    ],
)
def test_rust_refuses_bad_mirror_settings(rust, setting, message):
    (rust.secrets / "rust-mirror").write_text(setting)
    proc, lines = rust()
    assert proc.returncode == 1 and message in proc.stderr, proc.stderr
    assert lines == []  # nothing installed or fetched


def test_rust_needs_the_toolchain_file_its_channel_and_the_manifests(rust):
    proc, _ = rust("rust/missing/Cargo.toml")
    assert proc.returncode == 1 and "no rust/missing/Cargo.toml in" in proc.stderr
    (rust.src / "rust-toolchain.toml").write_text('[toolchain]\nprofile = "minimal"\n')
    proc, _ = rust()
    assert proc.returncode == 1 and "names no channel" in proc.stderr
    (rust.src / "rust-toolchain.toml").unlink()
    proc, _ = rust()
    assert proc.returncode == 1 and "has no rust-toolchain.toml" in proc.stderr


def test_rust_fails_when_cargo_vendor_prints_no_source_configuration(rust):
    proc, _ = rust(env={"FAKE_VENDOR": "silent"})
    assert proc.returncode == 1 and "cargo vendor printed no source configuration" in proc.stderr
    assert not (rust.cargo_home / "config.toml").exists()


def test_rust_usage(rust, tmp_path):
    proc = subprocess.run(
        ["bash", str(SCRIPTS / "install-rust.sh"), str(tmp_path)], capture_output=True, text=True
    )
    assert proc.returncode == 1 and "usage: install-rust.sh" in proc.stderr
