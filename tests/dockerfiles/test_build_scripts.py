"""The build scripts of docker/scripts on fixture source trees, with pip faked (no network).

A fake `python` first on PATH records every `python -m pip ...` and
`python -m build ...` call (its arguments, the requirement files it was given,
and the build environment at `pip wheel` / `build` time) and makes the wheel
that call would make (an empty file, or a zip of the members FAKE_WHEEL_MEMBERS
names); `python -m wheel
unpack/pack` unpacks a fixture tree and records what would be packed;
everything else it hands to the real interpreter, so own-packages.py and the
projects' helper scripts really run. The native builds (MAGMA's make,
AOTriton's cmake, git for fetch-source.sh) get fake tools of their own that
record their arguments and environment and make what the real ones would.
"""

from __future__ import annotations

import os
import re
import shutil
import socket
import subprocess
import sys
from pathlib import Path

import pytest

SCRIPTS = Path("docker/scripts").resolve()  # runfiles path (cwd = runfiles root)

FAKE_PYTHON = r"""#!/bin/bash
make_wheel() {  # the wheel pip wheel --wheel-dir DIR / build --outdir DIR makes
    wheel=$1/$FAKE_WHEEL
    mkdir -p "$1" && : >"$wheel"
    if [ -n "${FAKE_WHEEL_MEMBERS:-}" ]; then
        # shellcheck disable=SC2086
        "$REAL_PYTHON" -c 'import sys, zipfile
with zipfile.ZipFile(sys.argv[1], "w") as z:
    for name in sys.argv[2:]:
        z.writestr(name, "")' "$wheel" $FAKE_WHEEL_MEMBERS
    fi
}
if [ "$1" = -m ] && [ "$2" = build ]; then
    echo "build ${*:3}" >>"$FAKE_LOG"
    env | sort | sed 's/^/env /' >>"$FAKE_LOG"
    # the backend's compiles (FAKE_BUILD_RUNS: shell commands)
    [ -z "${FAKE_BUILD_RUNS:-}" ] || eval "$FAKE_BUILD_RUNS" >>"$FAKE_LOG"
    args=("${@:3}")
    for i in "${!args[@]}"; do
        [ "${args[$i]}" != --outdir ] || make_wheel "${args[$((i + 1))]}"
    done
    exit 0
fi
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
        [ -z "${FAKE_BUILD_RUNS:-}" ] || eval "$FAKE_BUILD_RUNS" >>"$FAKE_LOG"
        for i in "${!args[@]}"; do
            [ "${args[$i]}" != --wheel-dir ] || make_wheel "${args[$((i + 1))]}"
        done
    fi
    exit 0
fi
if [ "$1" = -m ] && [ "$2" = wheel ]; then
    echo "wheel ${*:3}" >>"$FAKE_LOG"
    case "$3" in
        unpack)  # unpack --dest DIR WHEEL
            name=$(basename "$6")
            mkdir -p "$5/${name%%-cp*}" && cp -a "$FAKE_WHEEL_TREE/." "$5/${name%%-cp*}/" ;;
        pack)  # pack --dest-dir DIR ROOT
            (cd "$6" && find . -type f | sort | sed 's/^/packed /') >>"$FAKE_LOG"
            : >"$5/$FAKE_WHEEL" ;;
    esac
    exit 0
fi
exec "$REAL_PYTHON" "$@"
"""

# readelf -d / ldd -r of a fixture "library" print the file next to it.
FAKE_READELF = '#!/bin/bash\ncat "${@: -1}.dynamic" 2>/dev/null\n'
FAKE_LDD = '#!/bin/bash\ncat "${@: -1}.ldd" 2>/dev/null\n'

# MAGMA's make: records argv, environment and make.inc; `make lib/libmagma.so`
# makes the library (with the SONAME the make.inc asks for) and the headers.
FAKE_MAKE = r"""#!/bin/bash
echo "make $*" >>"$FAKE_LOG"
echo "make-env MKLROOT=${MKLROOT:-} ROCM_PATH=${ROCM_PATH:-}" >>"$FAKE_LOG"
cp make.inc "$FAKE_LOG.make.inc"
if [ "$1" = lib/libmagma.so ] && [ -z "${FAKE_MAKE_FAILS:-}" ]; then
    mkdir -p lib include
    : >lib/libmagma.so
    : >include/magma.h
    if grep -q -- '-soname,libmagma.so' make.inc; then
        echo ' 0x0e (SONAME) Library soname: [libmagma.so]' >lib/libmagma.so.dynamic
    fi
    fortran=yes
    for arg in "$@"; do [ "$arg" != FORT= ] || fortran=""; done
    [ -z "${FAKE_FORTRAN:-}" ] || fortran=yes
    [ -z "${FAKE_UNDEFINED:-}" ] || echo "undefined symbol: $FAKE_UNDEFINED" >lib/libmagma.so.ldd
    if [ -n "$fortran" ]; then
        echo ' 0x01 (NEEDED) Shared library: [libgfortran.so.5]' >>lib/libmagma.so.dynamic
    fi
fi
"""

# AOTriton's cmake: records argv and environment; `--build ... --target install`
# installs what AOTriton installs (no kernel images with FAKE_NO_IMAGES).
FAKE_CMAKE = r"""#!/bin/bash
echo "cmake $*" >>"$FAKE_LOG"
env | sort | sed 's/^/cmake-env /' >>"$FAKE_LOG"
for arg in "$@"; do
    case "$arg" in -DCMAKE_INSTALL_PREFIX=*) echo "${arg#*=}" >"$FAKE_LOG.prefix" ;; esac
done
if [ "$1" = --build ]; then
    prefix=$(cat "$FAKE_LOG.prefix")
    mkdir -p "$prefix/lib/aotriton.images" "$prefix/include/aotriton"
    : >"$prefix/lib/libaotriton_v2.so"
    [ -n "${FAKE_NO_IMAGES:-}" ] || mkdir -p "$prefix/lib/aotriton.images/amd-gfx950"
fi
"""

# git as fetch-source.sh uses it: a fetch of a tag fails (the ref is a commit),
# the checkout copies FAKE_GIT_TREE into the repository.
FAKE_GIT = r"""#!/bin/bash
echo "git $*" >>"$FAKE_LOG"
if [ "$1" = init ]; then mkdir -p "${@: -1}"; exit 0; fi
case " $* " in
    *refs/tags/*) exit 1 ;;
    *" checkout "*) cp -a "$FAKE_GIT_TREE/." "$2/" ;;
    *" rev-parse "*) echo 0123456789abcdef0123456789abcdef01234567 ;;
esac
exit 0
"""


# PyTorch build options the host may have set: the scripts must set them themselves.
BUILD_OPTIONS = ("USE_DISTRIBUTED", "USE_NCCL", "USE_RCCL", "USE_KINETO")


class Run:
    def __init__(self, proc: subprocess.CompletedProcess[str], log: Path) -> None:
        self.proc = proc
        self.lines = log.read_text().splitlines() if log.exists() else []

    def calls(self, kind: str) -> list[str]:
        return [line for line in self.lines if line.startswith(f"pip {kind} ")]

    def builds(self) -> list[list[str]]:
        """The arguments of every `python -m build` call."""
        return [line.split()[1:] for line in self.lines if line.startswith("build ")]

    def env(self) -> dict[str, str]:
        return dict(line[4:].split("=", 1) for line in self.lines if line.startswith("env "))

    def first(self, prefix: str) -> str:
        return next(line for line in self.lines if line.startswith(prefix))


@pytest.fixture
def run_script(tmp_path):
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    fakes = {"python": FAKE_PYTHON, "readelf": FAKE_READELF, "ldd": FAKE_LDD,
             "make": FAKE_MAKE, "cmake": FAKE_CMAKE, "git": FAKE_GIT}  # fmt: skip
    for tool, text in fakes.items():
        (bin_dir / tool).write_text(text)
        (bin_dir / tool).chmod(0o755)
    log = tmp_path / "pip.log"

    def run(script: str, *args: str, wheel: str = "", env: dict | None = None) -> Run:
        full_env = dict(
            {k: v for k, v in os.environ.items() if k not in BUILD_OPTIONS},
            PATH=f"{bin_dir}:{os.environ['PATH']}",
            FAKE_LOG=str(log),
            FAKE_WHEEL=wheel,
            REAL_PYTHON=sys.executable,
            VIRTUAL_ENV=str(tmp_path / "venv"),
            # no compiler cache settings but a test's own (build-env.sh)
            ROCM_PYTORCH_SECRETS_DIR=str(tmp_path / "no-secrets"),
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
    ccache = tmp_path / "bin" / "ccache"  # the fixture's PATH directory
    ccache.write_text("#!/bin/sh\n")
    ccache.chmod(0o755)
    r = run_script(
        "build-triton.sh", "--version", "7.8.9", str(src), str(tmp_path / "out"),
        wheel="triton-7.8.9-cp314-cp314-linux_x86_64.whl",
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
    # the compiler cache of build-env.sh, without its arch check (triton has no arch)
    assert env["CCACHE_DIR"] == "/root/.cache/ccache" and "PYTORCH_ROCM_ARCH" not in env
    assert "build-env: compiler cache: ccache" in r.proc.stdout
    assert "build-triton: triton-7.8.9-cp314" in r.proc.stdout


def test_triton_refuses_a_tree_without_setup_py(tmp_path, run_script):
    (tmp_path / "empty").mkdir()
    r = run_script(
        "build-triton.sh",
        "--version",
        "7.8.9",
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
    # One backend call: build_wheel. Not pip wheel, whose prepare_metadata_for_build_wheel
    # runs setup.py a first time (aiter compiles its PREBUILD_KERNELS there), and no
    # get_requires_for_build_wheel (a third setup.py run) after the install above.
    assert r.calls("wheel") == []
    assert r.builds() == [
        ["--wheel", "--no-isolation", "--skip-dependency-check", "--outdir",
         str(tmp_path / "out"), "."],
    ]  # fmt: skip
    assert r.env()["PYTORCH_ROCM_ARCH"] == "gfx1100"
    assert (tmp_path / "out/proj-1.0-cp314-cp314-linux_x86_64.whl").exists()


def test_build_wheel_passes_every_config_setting_to_the_backend(tmp_path, run_script):
    # NIXL's meson setup-args: one key, given once per meson option; `build`
    # hands a repeated key to the backend as a list, which meson-python takes.
    src = project(tmp_path / "nixl", ["meson-python", "pybind11"])
    r = run_script(
        "build-wheel.sh", "--arch", "gfx1100", str(src), str(tmp_path / "out"),
        "--config-setting", "setup-args=-Ducx_path=/opt/ucx",
        "--config-setting", "setup-args=-Dwheel_variant=rocm",
        "--config-setting", "--build-option=--x",
        wheel="nixl_rocm-1.5.2-cp314-cp314-linux_x86_64.whl",
    )  # fmt: skip
    assert r.proc.returncode == 0, r.proc.stderr
    (args,) = r.builds()
    # the = form: a KEY or VALUE starting with - is not taken for an option of build
    assert [a for a in args if a.startswith("--config-setting")] == [
        "--config-setting=setup-args=-Ducx_path=/opt/ucx",
        "--config-setting=setup-args=-Dwheel_variant=rocm",
        "--config-setting=--build-option=--x",
    ]
    assert args[-1] == "."


def test_build_wheel_fails_when_no_wheel_comes_out(tmp_path, run_script):
    src = project(tmp_path / "proj", ["setuptools>=64"])
    r = run_script("build-wheel.sh", "--arch", "gfx1100", str(src), str(tmp_path / "out"))
    assert r.proc.returncode == 1 and "build produced no wheel for" in r.proc.stderr


def test_build_wheel_isolated_installs_nothing_first(tmp_path, run_script):
    src = project(tmp_path / "proj", ["setuptools>=64"])
    r = run_script(
        "build-wheel.sh", "--arch", "gfx1100", str(src), str(tmp_path / "out"), "--isolated",
        "--config-setting", "k=v",
        wheel="proj-1.0-py3-none-any.whl",
    )  # fmt: skip
    assert r.proc.returncode == 0, r.proc.stderr
    assert r.calls("install") == [] and r.builds() == []
    (wheel,) = r.calls("wheel")
    assert wheel.split() == [
        "pip", "wheel", "--no-deps", "--wheel-dir", str(tmp_path / "out"), "--verbose",
        "--config-settings", "k=v", ".",
    ]  # fmt: skip


# --- the compiler cache in front of CC and CXX (build-env.sh) ----------------

# ccache as a compile reaches it: it records the call and a miss in the step's stats
# log (CCACHE_STATSLOG), and --show-log-stats counts them as ccache 4.14 prints them.
FAKE_CCACHE = r"""#!/bin/bash
if [ "$1" = --show-log-stats ]; then
    misses=$(grep -c '^cache_miss$' "$CCACHE_STATSLOG")
    printf 'Cacheable calls: %s / %s\n  Hits: 0 / %s\n  Misses: %s / %s\n' \
        "$misses" "$misses" "$misses" "$misses" "$misses"
    exit 0
fi
echo "ccache $*" >>"$FAKE_LOG"
printf '# %s\ncache_miss\n' "${*: -1}" >>"$CCACHE_STATSLOG"
"""


def with_ccache(tmp_path: Path) -> dict[str, str]:
    """ccache (fake) and gcc/g++ that say they ran first on PATH; the env for it."""
    bin_dir = tmp_path / "bin"
    for name, text in {"ccache": FAKE_CCACHE, "gcc": '#!/bin/sh\necho "gcc $*"\n',
                       "g++": '#!/bin/sh\necho "g++ $*"\n'}.items():  # fmt: skip
        (bin_dir / name).write_text(text)
        (bin_dir / name).chmod(0o755)
    return {"ROCM_PYTORCH_RUN_DIR": str(tmp_path), "TMPDIR": str(tmp_path), "CC": "gcc",
            "CXX": "g++"}  # fmt: skip


def test_build_wheel_puts_the_compiler_cache_in_front_of_cc_and_cxx(tmp_path, run_script):
    # setuptools (CC, CXX), torch.utils.cpp_extension's .cpp ($CXX) and meson take
    # the compilers from CC and CXX, and read none of the launcher variables
    env = with_ccache(tmp_path)
    src = project(tmp_path / "vision", ["setuptools>=64", "torch"])
    r = run_script(
        "build-wheel.sh", "--arch", "gfx1100", str(src), str(tmp_path / "out"),
        wheel="torchvision-0.30.0-cp314-cp314-linux_x86_64.whl",
        env={**env, "FAKE_BUILD_RUNS": '"$CC" -c a.c && "$CXX" -c b.cpp'},
    )  # fmt: skip
    assert r.proc.returncode == 0, r.proc.stderr
    cc, cxx = Path(r.env()["CC"]), Path(r.env()["CXX"])
    assert (cc.name, cxx.name) == ("gcc", "g++") and cc.parent == cxx.parent
    assert not cc.parent.exists()  # a temporary directory of the build, gone
    bin_dir = tmp_path / "bin"
    assert [x for x in r.lines if x.startswith("ccache ")] == [
        f"ccache {bin_dir / 'gcc'} -c a.c",
        f"ccache {bin_dir / 'g++'} -c b.cpp",
    ]
    assert (
        r.proc.stderr.splitlines()[-1]
        == "compiler cache: ccache (local): 0 hits, 2 misses, 0.0 % hits"
    )


def test_build_wheel_isolated_puts_the_compiler_cache_in_front_of_cc_and_cxx(tmp_path, run_script):
    # CuPy: pip's isolated build inherits CC and CXX (its Cython C++)
    env = with_ccache(tmp_path)
    src = project(tmp_path / "cupy", ["setuptools>=64", "Cython"])
    r = run_script(
        "build-wheel.sh", "--arch", "gfx1100", str(src), str(tmp_path / "out"), "--isolated",
        wheel="cupy-14.2.0-cp314-cp314-linux_x86_64.whl",
        env={**env, "FAKE_BUILD_RUNS": '"$CXX" -c core.cpp'},
    )  # fmt: skip
    assert r.proc.returncode == 0, r.proc.stderr
    assert Path(r.env()["CXX"]).name == "g++"
    assert f"ccache {tmp_path / 'bin' / 'g++'} -c core.cpp" in r.lines


def test_build_wheel_leaves_cc_to_a_build_that_runs_cmake(tmp_path, run_script):
    # vLLM's setup.py runs CMake and passes CMAKE_*_COMPILER_LAUNCHER itself; CMake
    # would take a CC of ours for the compiler and put the launcher in front again
    env = with_ccache(tmp_path)
    src = project(tmp_path / "vllm", ["cmake>=3.26.1", "ninja", "setuptools>=77.0.3"])
    r = run_script(
        "build-wheel.sh", "--arch", "gfx1100", str(src), str(tmp_path / "out"),
        wheel="vllm-0.33.0-cp38-abi3-linux_x86_64.whl", env=env,
    )  # fmt: skip
    assert r.proc.returncode == 0, r.proc.stderr
    assert (r.env()["CC"], r.env()["CXX"]) == ("gcc", "g++")
    assert r.env()["CMAKE_CXX_COMPILER_LAUNCHER"] == "ccache"
    assert "the build runs CMake ([build-system] requires cmake)" in r.proc.stdout


def test_build_wheel_refuses_a_pyproject_it_cannot_read(tmp_path, run_script):
    src = project(tmp_path / "proj", ["setuptools"])
    (src / "pyproject.toml").write_text("[build-system\n")
    r = run_script("build-wheel.sh", "--arch", "gfx1100", str(src), str(tmp_path / "out"))
    assert r.proc.returncode == 1, r.proc.stderr
    assert "build-wheel: cannot read the [build-system] requires of" in r.proc.stderr


def ucx_tree(root: Path) -> Path:
    """UCX's autotools as build-ucx.sh runs them: configure compiles a test with $CC
    and (here) installs what `make install-strip` would."""
    (root / "contrib").mkdir(parents=True)
    (root / "autogen.sh").write_text("#!/bin/sh\n")
    (root / "contrib/configure-release-mt").write_text(
        r"""#!/bin/bash
echo "configure $* CC=$CC CXX=$CXX" >>"$FAKE_LOG"
"$CC" -c conftest.c >>"$FAKE_LOG"
for arg in "$@"; do case "$arg" in --prefix=*) prefix=${arg#*=} ;; esac; done
mkdir -p "$prefix/bin" "$prefix/lib/ucx"
printf '#!/bin/sh\necho "UCX 1.19.0"\n' >"$prefix/bin/ucx_info"
chmod 755 "$prefix/bin/ucx_info"
: >"$prefix/lib/ucx/libuct_rocm.so"
: >"$prefix/lib/ucx/libucm_rocm.so"
"""
    )
    for f in ("autogen.sh", "contrib/configure-release-mt"):
        (root / f).chmod(0o755)
    return root


def test_ucx_builds_through_the_compiler_cache(tmp_path, run_script):
    env = with_ccache(tmp_path)
    env["FAKE_GIT_TREE"] = str(ucx_tree(tmp_path / "tree"))
    prefix = tmp_path / "opt/ucx"
    r = run_script("build-ucx.sh", "--ref", "v1.19.0", str(prefix), env=env)
    assert r.proc.returncode == 0, r.proc.stderr
    work = tmp_path / "build-ucx"  # the same path each build: the compiles hash alike
    (configure,) = [x for x in r.lines if x.startswith("configure ")]
    assert configure.endswith(f"CC={work}/compilers/gcc CXX={work}/compilers/g++")
    assert f"ccache {tmp_path / 'bin' / 'gcc'} -c conftest.c" in r.lines
    # no GPU arch needed (the compiler cache only), and its line ends the build
    assert "PYTORCH_ROCM_ARCH" not in r.proc.stdout
    assert (
        r.proc.stderr.splitlines()[-1]
        == "compiler cache: ccache (local): 0 hits, 1 misses, 0.0 % hits"
    )


@pytest.mark.parametrize(
    ("arch", "message"),
    [
        ("gfx950", None),
        ("gfx1100;gfx1101;gfx1102", None),
        ("", "PYTORCH_ROCM_ARCH is not set"),
        ("gfx942 gfx950", "takes archs separated by ';', got 'gfx942 gfx950'"),
        ("sm_90", "'sm_90' is not a GPU architecture (gfx...)"),
        ("gfx942;sm_90", "'gfx942;sm_90' is not a GPU architecture"),
        (";", "is not a GPU architecture"),
    ],
)
def test_build_env_checks_the_arch_list_for_every_script_that_sources_it(tmp_path, arch, message):
    # one check for build-magma.sh's and build-aotriton.sh's --arch, and every build's
    # PYTORCH_ROCM_ARCH: sourced with set -e, a refused list ends the script there
    script = f"set -e; . {SCRIPTS / 'build-env.sh'} >/dev/null; echo sourced"
    env = dict(os.environ, PATH="/usr/bin:/bin", PYTORCH_ROCM_ARCH=arch)
    out = subprocess.run(["bash", "-c", script], env=env, capture_output=True, text=True)
    if message is None:
        assert out.returncode == 0 and out.stdout.strip() == "sourced", out.stderr
    else:
        assert out.returncode == 1 and out.stdout == ""
        assert out.stderr.startswith("build-env: ") and message in out.stderr, out.stderr


@pytest.mark.parametrize("script", ["build-magma.sh", "build-aotriton.sh"])
def test_magma_and_aotriton_refuse_an_arch_list_with_build_envs_message(
    tmp_path, run_script, script
):
    r = run_script(script, "--arch", "gfx942 gfx950", "--pytorch-src", str(tmp_path), "P")
    assert r.proc.returncode == 1 and r.lines == []
    assert r.proc.stderr.strip() == (
        "build-env: --arch (PYTORCH_ROCM_ARCH) takes archs separated by ';', got 'gfx942 gfx950'"
    )


def pytorch_fixture(tmp_path: Path, torch_links_magma: bool = True) -> dict:
    """A PyTorch tree, MAGMA and AOTriton installs, and what `pip wheel` builds of them."""
    src = project(
        tmp_path / "pytorch",
        ["setuptools>=77,<82", "cmake>=3.27", "numpy"],
        {
            "tools/amd_build/build_amd.py": "print('hipified')\n",
            "requirements.txt": "numpy\n",
            "requirements-build.txt": "scikit-build-core>=1.0\n",
        },
    )
    magma = tmp_path / "magma"
    (magma / "lib").mkdir(parents=True)
    (magma / "include").mkdir()
    (magma / "lib/libmagma.so").write_text("magma")
    (magma / "include/magma.h").write_text("")
    aotriton = tmp_path / "aotriton"
    (aotriton / "lib/aotriton.images/amd-gfx110x").mkdir(parents=True)
    (aotriton / "include/aotriton").mkdir(parents=True)
    (aotriton / "lib/libaotriton_v2.so").write_text("aotriton")
    tree = tmp_path / "wheel-tree"
    lib = tree / "torch/lib"
    (lib / "aotriton.images/amd-gfx110x").mkdir(parents=True)
    (lib / "libtorch_hip.so").write_text("")
    needed = " 0x01 (NEEDED) Shared library: [libamdhip64.so.7]\n"
    if torch_links_magma:
        needed += " 0x01 (NEEDED) Shared library: [libmagma.so]\n"
    (lib / "libtorch_hip.so.dynamic").write_text(needed)
    (lib / "libaotriton_v2.so").write_text("aotriton")
    return {"src": src, "magma": magma, "aotriton": aotriton, "tree": tree}


def run_pytorch(run_script, tmp_path: Path, fx: dict, env: dict | None = None, drop=()) -> Run:
    opts = {"--magma": str(fx["magma"]), "--aotriton": str(fx["aotriton"])}
    args = ["--version", "4.5.6", "--rocm", "9.8.7-full", "--arch", "gfx1100"]
    for opt, value in opts.items():
        if opt not in drop:
            args += [opt, value]
    return run_script(
        "build-pytorch.sh", *args, str(fx["src"]), str(tmp_path / "out"),
        wheel="torch-4.5.6+rocm9.8.7-cp314-cp314-linux_x86_64.whl",
        env={"ROCM_VERSION": "9.8.7-full", "FAKE_WHEEL_TREE": str(fx["tree"]), **(env or {})},
    )  # fmt: skip


def test_pytorch_installs_its_build_requirements_with_our_pins_and_builds_for_the_arch(
    tmp_path, run_script
):
    fx = pytorch_fixture(tmp_path)
    r = run_pytorch(run_script, tmp_path, fx)
    assert r.proc.returncode == 0, r.proc.stderr
    install, mkl = r.calls("install")
    assert install.count("--requirement") == 3 and "requirements-build.txt" in install
    assert "mkl-static==2025.3.0" in mkl.split() and "mkl-include==2025.3.0" in mkl.split()
    files = [line for line in r.lines if line.startswith("requirements: ")]
    assert any("scikit-build-core>=1.0" in line for line in files)
    assert any("setuptools>=77,<82" in line for line in files)  # [build-system] requires
    env = r.env()
    assert env["PYTORCH_ROCM_ARCH"] == "gfx1100" and env["USE_ROCM"] == "1"
    assert env["PYTORCH_BUILD_VERSION"] == "4.5.6+rocm9.8.7" and "ROCM_VERSION" not in env
    assert env["BLAS"] == "MKL" and env["CMAKE_INCLUDE_PATH"].endswith("/include")
    # torch.distributed with RCCL and Kineto, named as upstream's ROCm wheels name them
    for option in ("USE_DISTRIBUTED", "USE_NCCL", "USE_RCCL", "USE_KINETO"):
        assert env[option] == "1", option
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


def test_pytorch_builds_with_magma_and_our_aotriton_and_ships_libmagma(tmp_path, run_script):
    fx = pytorch_fixture(tmp_path)
    # a caller's AOTriton switches must not reach PyTorch's CMake
    stray = {"AOTRITON_INSTALL_FROM_SOURCE": "0", "PYTORCH_AOTRITON_BASE_URL": "http://x/",
             "PYTORCH_AOTRITON_COMMIT": "abc"}  # fmt: skip
    r = run_pytorch(run_script, tmp_path, fx, env=stray)
    assert r.proc.returncode == 0, r.proc.stderr
    env = r.env()
    assert env["USE_MAGMA"] == "1" and env["MAGMA_HOME"] == str(fx["magma"])
    assert env["AOTRITON_INSTALLED_PREFIX"] == str(fx["aotriton"])
    assert env["USE_FLASH_ATTENTION"] == "1" and env["USE_MEM_EFF_ATTENTION"] == "1"
    assert not set(stray) & set(env)
    unpack, pack = (line for line in r.lines if line.startswith("wheel "))
    assert unpack.startswith("wheel unpack --dest ") and unpack.endswith(".whl")
    assert pack.startswith(f"wheel pack --dest-dir {tmp_path / 'out'} ")
    packed = {line.split()[1] for line in r.lines if line.startswith("packed ")}
    assert "./torch/lib/libmagma.so" in packed and "./torch/lib/libaotriton_v2.so" in packed
    assert "with MAGMA and AOTriton" in r.proc.stdout


def _no_magma_lib(fx):
    (fx["magma"] / "lib/libmagma.so").unlink()


def _no_magma_header(fx):
    (fx["magma"] / "include/magma.h").unlink()


def _no_aotriton_lib(fx):
    (fx["aotriton"] / "lib/libaotriton_v2.so").unlink()


def _no_aotriton_images(fx):
    shutil.rmtree(fx["aotriton"] / "lib/aotriton.images")


def _other_aotriton_in_wheel(fx):
    (fx["tree"] / "torch/lib/libaotriton_v2.so").write_text("downloaded")


def _no_images_in_wheel(fx):
    shutil.rmtree(fx["tree"] / "torch/lib/aotriton.images")


def _no_torch_hip(fx):
    (fx["tree"] / "torch/lib/libtorch_hip.so").unlink()


@pytest.mark.parametrize(
    ("breakage", "message"),
    [
        (_no_magma_lib, "no MAGMA at"),
        (_no_magma_header, "no MAGMA at"),
        (_no_aotriton_lib, "no AOTriton at"),
        (_no_aotriton_images, "has no lib/aotriton.images"),
        (_other_aotriton_in_wheel, "not the one from"),
        (_no_images_in_wheel, "has no torch/lib/aotriton.images"),
        (_no_torch_hip, "has no torch/lib/libtorch_hip.so"),
    ],
)
def test_pytorch_fails_without_magma_or_our_aotriton(tmp_path, run_script, breakage, message):
    fx = pytorch_fixture(tmp_path)
    breakage(fx)
    r = run_pytorch(run_script, tmp_path, fx)
    assert r.proc.returncode == 1 and message in r.proc.stderr, r.proc.stderr
    assert not any(line.startswith("packed ") for line in r.lines)


def test_pytorch_fails_when_torch_does_not_link_magma(tmp_path, run_script):
    fx = pytorch_fixture(tmp_path, torch_links_magma=False)
    r = run_pytorch(run_script, tmp_path, fx)
    assert r.proc.returncode == 1 and "built without MAGMA" in r.proc.stderr
    assert not any(line.startswith("wheel pack") for line in r.lines)


@pytest.mark.parametrize("option", ["--magma", "--aotriton"])
def test_pytorch_requires_magma_and_aotriton(tmp_path, run_script, option):
    fx = pytorch_fixture(tmp_path)
    r = run_pytorch(run_script, tmp_path, fx, drop=(option,))
    assert r.proc.returncode == 1 and "usage: build-pytorch.sh" in r.proc.stderr
    assert r.calls("install") == []


# ---------------------------------------------------------------------------
# build-magma.sh
# ---------------------------------------------------------------------------

MAGMA_PIN = "a68b9257ac435afa1ebdfb8f50d67668950aef61"


def magma_tree(root: Path) -> Path:
    (root / "make.inc-examples").mkdir(parents=True)
    (root / "make.inc-examples/make.inc.hip-gcc-mkl").write_text(
        "CC = hipcc\nFOPENMP     = -fopenmp\nDEVCCFLAGS  = -O3\n"
    )
    return root


def mkl(tmp_path: Path, libs=("mkl_gf_lp64", "mkl_gnu_thread", "mkl_core")) -> None:
    (tmp_path / "venv/lib").mkdir(parents=True, exist_ok=True)
    for lib in libs:
        (tmp_path / f"venv/lib/lib{lib}.a").write_text("")


def test_magma_builds_as_pytorch_ci_for_the_arch_against_static_mkl(tmp_path, run_script):
    mkl(tmp_path)
    src = magma_tree(tmp_path / "magma-src")
    prefix = tmp_path / "opt/rocm/magma"
    r = run_script("build-magma.sh", "--arch", "gfx1100", "--source", str(src), str(prefix))
    assert r.proc.returncode == 0, r.proc.stderr
    (mkl_install,) = r.calls("install")
    assert "mkl-static==2025.3.0" in mkl_install.split()
    assert "mkl-include==2025.3.0" in mkl_install.split()
    gen, lib = (line.split() for line in r.lines if line.startswith("make "))
    assert gen[:3] == ["make", "-f", "make.gen.hipMAGMA"] and gen[3] == "-j"
    assert lib[:3] == ["make", "lib/libmagma.so", "-j"]
    assert f"MKLROOT={tmp_path / 'venv'}" in lib and "FORT=" in lib
    make_inc = Path(f"{tmp_path / 'pip.log'}.make.inc").read_text()
    assert "#FOPENMP     = -fopenmp" in make_inc.splitlines()
    for line in (
        "LIBDIR += -L$(MKLROOT)/lib",
        "LIB = -Wl,--start-group -lmkl_gf_lp64 -lmkl_gnu_thread -lmkl_core -Wl,--end-group"
        " -lpthread -lstdc++ -lm -lgomp -lhipblas -lhipsparse",
        "LDFLAGS += -Wl,-soname,libmagma.so",
        "DEVCCFLAGS += --gpu-max-threads-per-block=256",
        "DEVCCFLAGS += --offload-arch=gfx1100",
    ):
        assert line in make_inc.splitlines(), line
    assert (prefix / "lib/libmagma.so").is_file() and (prefix / "include/magma.h").is_file()
    assert not any(line.startswith("git ") for line in r.lines)  # --source: no fetch
    assert (src / "make.inc-examples").is_dir() and not (src / "make.inc").exists()  # a copy


def test_magma_builds_for_every_arch_of_a_family(tmp_path, run_script):
    mkl(tmp_path)
    src = magma_tree(tmp_path / "magma-src")
    prefix = tmp_path / "opt/rocm/magma"
    r = run_script("build-magma.sh", "--arch", "gfx1100;gfx1101", "--source", str(src), str(prefix))
    assert r.proc.returncode == 0, r.proc.stderr
    make_inc = Path(f"{tmp_path / 'pip.log'}.make.inc").read_text().splitlines()
    offload = [line for line in make_inc if "--offload-arch" in line]
    assert offload == [
        "DEVCCFLAGS += --offload-arch=gfx1100",
        "DEVCCFLAGS += --offload-arch=gfx1101",
    ]


def pin_tree(root: Path, text: str | None = None) -> Path:
    """A PyTorch tree holding only what build-magma.sh reads: its CI's MAGMA pin."""
    (root / ".ci/magma-rocm").mkdir(parents=True)
    (root / ".ci/magma-rocm/build_magma.sh").write_text(
        text
        if text is not None
        else "#!/usr/bin/env bash\n# https://github.com/icl-utk-edu/magma/pull/77\n"
        f"MAGMA_VERSION={MAGMA_PIN}\n"
        "pushd ${PACKAGE_DIR}\ngit clone https://github.com/k-artem/magma.git\n"
        "pushd magma\ngit checkout ${MAGMA_VERSION}\n"
    )
    return root


def test_magma_fetches_the_pin_of_the_pytorch_trees_ci(tmp_path, run_script):
    mkl(tmp_path)
    r = run_script(
        "build-magma.sh", "--arch", "gfx950", "--pytorch-src", str(pin_tree(tmp_path / "pt")),
        str(tmp_path / "prefix"), env={"FAKE_GIT_TREE": str(magma_tree(tmp_path / "tree"))},
    )  # fmt: skip
    assert r.proc.returncode == 0, r.proc.stderr
    assert any(
        line.startswith("git ") and "remote add origin https://github.com/k-artem/magma.git" in line
        for line in r.lines
    )
    fetches = [line for line in r.lines if line.startswith("git ") and " fetch " in line]
    assert fetches[-1].split()[-1] == MAGMA_PIN
    assert not any("submodule" in line for line in r.lines)
    assert "--offload-arch=gfx950" in Path(f"{tmp_path / 'pip.log'}.make.inc").read_text()
    assert f"https://github.com/k-artem/magma.git {MAGMA_PIN} for gfx950" in r.proc.stdout


@pytest.mark.parametrize(
    ("pin", "message"),
    [
        (None, "has no .ci/magma-rocm/build_magma.sh"),
        ("git clone https://github.com/k-artem/magma.git\n", "no single MAGMA_VERSION="),
        (f"MAGMA_VERSION={MAGMA_PIN}\n", "no single 'git clone https://....git'"),
        (
            f"MAGMA_VERSION={MAGMA_PIN}\nMAGMA_VERSION={'1' * 40}\n"
            "git clone https://github.com/k-artem/magma.git\n",
            "no single MAGMA_VERSION=",
        ),
    ],
)
def test_magma_refuses_a_tree_without_one_pin(tmp_path, run_script, pin, message):
    mkl(tmp_path)
    tree = tmp_path / "pt"
    tree.mkdir()
    if pin is not None:
        (tree / ".ci/magma-rocm").mkdir(parents=True)
        (tree / ".ci/magma-rocm/build_magma.sh").write_text(pin)
    r = run_script(
        "build-magma.sh", "--arch", "gfx950", "--pytorch-src", str(tree), str(tmp_path / "p")
    )
    assert r.proc.returncode == 1 and message in r.proc.stderr, r.proc.stderr
    assert not any(line.startswith("git ") for line in r.lines)


def test_magma_needs_a_pytorch_tree_or_a_source(tmp_path, run_script):
    r = run_script("build-magma.sh", "--arch", "gfx950", str(tmp_path / "p"))
    assert r.proc.returncode == 1 and "usage: build-magma.sh" in r.proc.stderr


def test_magma_help(tmp_path, run_script):
    r = run_script("build-magma.sh", "--help")
    assert r.proc.returncode == 0 and r.proc.stdout.startswith("usage: build-magma.sh")


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ([], "usage: build-magma.sh"),
        (["PREFIX"], "usage: build-magma.sh"),
        (["--arch", "gfx950"], "usage: build-magma.sh"),
        (["--arch"], "usage: build-magma.sh"),
        (["--arch", "gfx950", "--bogus", "P"], "unknown option '--bogus'"),
        (["--arch", "sm_90", "P"], "is not a GPU architecture"),
        (["--arch", "gfx942 gfx950", "P"], "takes archs separated by ';'"),
        (["--arch", "gfx942;sm_90", "P"], "is not a GPU architecture"),
        (["--arch", "gfx950", "--source", "/nonexistent", "P"], "is not a MAGMA checkout"),
    ],
)
def test_magma_refuses_bad_arguments(tmp_path, run_script, args, message):
    r = run_script("build-magma.sh", *args)
    assert r.proc.returncode == 1 and message in r.proc.stderr, r.proc.stderr
    assert r.lines == []


@pytest.mark.parametrize(
    ("env", "libs", "message"),
    [
        ({}, ("mkl_gf_lp64", "mkl_gnu_thread"), "libmkl_core.a after installing mkl-static"),
        ({"FAKE_MAKE_FAILS": "1"}, None, "make produced no lib/libmagma.so"),
        ({"FAKE_FORTRAN": "1"}, None, "needs libgfortran"),
        ({"FAKE_UNDEFINED": "dgetrf_"}, None, "does not link completely"),
    ],
)
def test_magma_fails_loudly(tmp_path, run_script, env, libs, message):
    mkl(tmp_path, *([libs] if libs else []))
    src = magma_tree(tmp_path / "magma-src")
    prefix = tmp_path / "prefix"
    r = run_script("build-magma.sh", "--arch", "gfx950", "--source", str(src), str(prefix), env=env)
    assert r.proc.returncode == 1 and message in r.proc.stderr, r.proc.stderr
    assert not prefix.exists()


def test_magma_and_pytorch_link_the_same_mkl():
    def pin(script: str) -> str:
        text = (SCRIPTS / script).read_text()
        return re.search(r"^MKL_VERSION=\$\{MKL_VERSION:-([^}]+)\}$", text, re.M).group(1)

    assert pin("build-magma.sh") == pin("build-pytorch.sh")


# ---------------------------------------------------------------------------
# build-aotriton.sh
# ---------------------------------------------------------------------------

AOTRITON_PIN = "ab" * 20


def aotriton_cmake(pytorch: Path, body: str | None = None) -> Path:
    path = pytorch / "cmake/External/aotriton.cmake"
    path.parent.mkdir(parents=True)
    path.write_text(
        body
        if body is not None
        else f"""  set(__AOTRITON_VER "0.14.2b")
  if(DEFINED ENV{{PYTORCH_AOTRITON_COMMIT}})
    set(__AOTRITON_CI_COMMIT "$ENV{{PYTORCH_AOTRITON_COMMIT}}")
  else()
    set(__AOTRITON_CI_COMMIT "{AOTRITON_PIN}")
  endif()
"""
    )
    return pytorch


def aotriton_tree(root: Path, triton: bool = True) -> Path:
    (root / "v3src").mkdir(parents=True)
    (root / "CMakeLists.txt").write_text("project(AOTriton)\n")
    if triton:
        (root / "third_party/triton").mkdir(parents=True)
        (root / "third_party/triton/setup.py").write_text("")
    return root


def test_aotriton_builds_the_pinned_commit_for_the_arch_as_aotriton_cmake_does(
    tmp_path, run_script
):
    pytorch = aotriton_cmake(tmp_path / "pytorch")
    prefix = tmp_path / "opt/aotriton"
    r = run_script(
        "build-aotriton.sh", "--arch", "gfx950", "--pytorch-src", str(pytorch),
        "--source", str(aotriton_tree(tmp_path / "aotriton-src")), str(prefix),
    )  # fmt: skip
    assert r.proc.returncode == 0, r.proc.stderr
    configure, build = (line.split() for line in r.lines if line.startswith("cmake "))
    assert configure[configure.index("-G") + 1] == "Ninja"
    for arg in (
        f"-DCMAKE_INSTALL_PREFIX={prefix}",
        "-DCMAKE_BUILD_TYPE=Release",
        "-DAOTRITON_TARGET_ARCH=gfx950",
        "-DAOTRITON_GPU_BUILD_TIMEOUT=0",
        "-DAOTRITON_NO_PYTHON=ON",
        "-DAOTRITON_NOIMAGE_MODE=OFF",
        "-DHIP_PLATFORM=amd",
    ):
        assert arg in configure, arg
    assert build[:2] == ["cmake", "--build"] and build[-2:] == ["--target", "install"]
    env = dict(line[10:].split("=", 1) for line in r.lines if line.startswith("cmake-env "))
    # Triton's NVIDIA downloads are off, as in build-triton.sh
    for tool in ("PTXAS", "PTXAS_BLACKWELL", "CUOBJDUMP", "NVDISASM", "CUDACRT", "CUDART",
                 "CUPTI_INCLUDE", "CUPTI_LIB", "CUPTI_LIB_BLACKWELL"):  # fmt: skip
        assert env[f"TRITON_{tool}_PATH"] == env["TRITON_PTXAS_PATH"]
    assert env["TRITON_BUILD_PROTON"] == "OFF" and env["PYTORCH_ROCM_ARCH"] == "gfx950"
    assert env["ROCM_PATH"]
    assert (prefix / "lib/libaotriton_v2.so").is_file()
    assert f"AOTriton 0.14.2b {AOTRITON_PIN} for gfx950" in r.proc.stdout
    assert not any(line.startswith("git ") for line in r.lines)


def test_aotriton_builds_for_every_arch_of_a_family(tmp_path, run_script):
    pytorch = aotriton_cmake(tmp_path / "pytorch")
    r = run_script(
        "build-aotriton.sh", "--arch", "gfx942;gfx950", "--pytorch-src", str(pytorch),
        "--source", str(aotriton_tree(tmp_path / "aotriton-src")), str(tmp_path / "prefix"),
    )  # fmt: skip
    assert r.proc.returncode == 0, r.proc.stderr
    configure = next(line.split() for line in r.lines if line.startswith("cmake "))
    assert "-DAOTRITON_TARGET_ARCH=gfx942;gfx950" in configure


def test_aotriton_fetches_the_commit_pytorch_pins_with_submodules(tmp_path, run_script):
    pytorch = aotriton_cmake(tmp_path / "pytorch")
    r = run_script(
        "build-aotriton.sh", "--arch", "gfx950", "--pytorch-src", str(pytorch),
        str(tmp_path / "prefix"),
        env={"FAKE_GIT_TREE": str(aotriton_tree(tmp_path / "tree"))},
    )  # fmt: skip
    assert r.proc.returncode == 0, r.proc.stderr
    assert any("remote add origin https://github.com/ROCm/aotriton.git" in line for line in r.lines)
    fetches = [line for line in r.lines if line.startswith("git ") and " fetch " in line]
    assert fetches[-1].split()[-1] == AOTRITON_PIN
    assert any("submodule update --init --recursive" in line for line in r.lines)


def test_aotriton_help(tmp_path, run_script):
    r = run_script("build-aotriton.sh", "-h")
    assert r.proc.returncode == 0 and r.proc.stdout.startswith("usage: build-aotriton.sh")


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ([], "usage: build-aotriton.sh"),
        (["--arch", "gfx950", "P"], "usage: build-aotriton.sh"),
        (["--pytorch-src", "{pytorch}", "P"], "usage: build-aotriton.sh"),
        (["--arch", "gfx950", "--pytorch-src"], "usage: build-aotriton.sh"),
        (["--arch", "gfx950", "--pytorch-src", "{pytorch}", "-x", "P"], "unknown option '-x'"),
        (["--arch", "x86", "--pytorch-src", "{pytorch}", "P"], "is not a GPU architecture"),
        (["--arch", "gfx90a gfx942", "--pytorch-src", "{pytorch}", "P"],
         "takes archs separated by ';'"),
        (["--arch", "gfx950", "--pytorch-src", "{tmp}", "P"], "has no cmake/External/aotriton"),
        (["--arch", "gfx950", "--pytorch-src", "{pytorch}", "--source", "{tmp}", "P"],
         "is not an AOTriton checkout"),
        (["--arch", "gfx950", "--pytorch-src", "{pytorch}", "--source", "{notriton}", "P"],
         "has no third_party/triton"),
    ],
)  # fmt: skip
def test_aotriton_refuses_bad_arguments(tmp_path, run_script, args, message):
    paths = {
        "pytorch": str(aotriton_cmake(tmp_path / "pytorch")),
        "tmp": str(tmp_path),
        "notriton": str(aotriton_tree(tmp_path / "notriton", triton=False)),
    }
    r = run_script("build-aotriton.sh", *(a.format(**paths) for a in args))
    assert r.proc.returncode == 1 and message in r.proc.stderr, r.proc.stderr
    assert r.lines == []


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ('set(__AOTRITON_CI_COMMIT "$ENV{PYTORCH_AOTRITON_COMMIT}")\n', "no set(__AOTRITON_CI"),
        ("GIT_TAG 24a3fe9cb57e5cda3c923df29743f9767194cc27\n", "no set(__AOTRITON_CI"),
        (f'set(__AOTRITON_CI_COMMIT "{AOTRITON_PIN}")\nset(__AOTRITON_CI_COMMIT "{"0" * 40}")\n',
         "several AOTriton commits"),
    ],
)  # fmt: skip
def test_aotriton_needs_exactly_one_pin_in_pytorchs_cmake(tmp_path, run_script, body, message):
    pytorch = aotriton_cmake(tmp_path / "pytorch", body)
    r = run_script("build-aotriton.sh", "--arch", "gfx950", "--pytorch-src", str(pytorch), "P")
    assert r.proc.returncode == 1 and message in r.proc.stderr, r.proc.stderr


def test_aotriton_fails_when_no_kernels_were_built(tmp_path, run_script):
    pytorch = aotriton_cmake(tmp_path / "pytorch")
    r = run_script(
        "build-aotriton.sh", "--arch", "gfx950", "--pytorch-src", str(pytorch),
        "--source", str(aotriton_tree(tmp_path / "src")), str(tmp_path / "prefix"),
        env={"FAKE_NO_IMAGES": "1"},
    )  # fmt: skip
    assert r.proc.returncode == 1 and "no kernel images in" in r.proc.stderr


# build-flash-attn.sh: the flash_attn wheel through the real build-wheel.sh
# (pip faked) on the archs vLLM builds CK flash-attention for, NOT-BUILT on
# the others; its fetch step beside a fake fetch-source.sh.
FA_CK = "csrc/composable_kernel/example/ck_tile/01_fmha/generate.py"
FA_WHEEL = "flash_attn-2.8.3-cp314-cp314-linux_x86_64.whl"
FA_EXTENSION = "flash_attn_2_cuda.cpython-314-x86_64-linux-gnu.so"
FA_URL = "https://github.com/Dao-AILab/flash-attention.git"
FA_REF = "0e60e39473e8df549a20fb5353760f7a65b30e2d"


def flash_attention(root: Path) -> Path:
    """A checkout as fetch-source.sh leaves it: setup.py, no pyproject.toml, CK checked out."""
    root.mkdir(parents=True)
    (root / "setup.py").write_text("")
    (root / FA_CK).parent.mkdir(parents=True)
    (root / FA_CK).write_text("")
    return root


@pytest.fixture
def fa_build(tmp_path, run_script):
    src = flash_attention(tmp_path / "flash-attention")
    out = tmp_path / "wheels-fa"
    ccache = tmp_path / "bin" / "ccache"  # the fixture's PATH directory
    ccache.write_text("#!/bin/sh\n")
    ccache.chmod(0o755)

    def run(arch: str, members: str = f"flash_attn/__init__.py {FA_EXTENSION}", **kw) -> Run:
        env = {"FAKE_WHEEL_MEMBERS": members, **kw.pop("env", {})}
        return run_script(
            "build-flash-attn.sh", "build", "--arch", arch, str(src), str(out),
            wheel=kw.pop("wheel", FA_WHEEL), env=env,
        )  # fmt: skip

    run.src = src
    run.out = out
    return run


def test_flash_attn_builds_the_ck_wheel_for_gfx942_against_our_torch(fa_build):
    # a Triton-backend or no-extension setting from outside must not reach setup.py
    r = fa_build(
        "gfx942",
        env={
            "FLASH_ATTENTION_TRITON_AMD_ENABLE": "TRUE",
            "FLASH_ATTENTION_SKIP_CUDA_BUILD": "TRUE",
        },
    )
    assert r.proc.returncode == 0, r.proc.stderr
    # no pyproject.toml: nothing to install first, and no build isolation
    assert r.calls("install") == [] and r.calls("wheel") == []
    assert r.builds() == [
        ["--wheel", "--no-isolation", "--skip-dependency-check", "--outdir", str(fa_build.out),
         "."],
    ]  # fmt: skip
    env = r.env()
    assert env["BUILD_TARGET"] == "rocm" and env["GPU_ARCHS"] == "gfx942"
    assert env["PYTORCH_ROCM_ARCH"] == "gfx942"
    assert env["FLASH_ATTENTION_FORCE_BUILD"] == "TRUE"  # no prebuilt wheel download
    assert env["FLASH_ATTENTION_TRITON_AMD_ENABLE"] == "FALSE"
    assert env["FLASH_ATTENTION_SKIP_CUDA_BUILD"] == "FALSE"
    # build-env.sh's compiler cache and MAX_JOBS (setup.py keeps a MAX_JOBS it is given)
    for var in ("CMAKE_C_COMPILER_LAUNCHER", "CMAKE_CXX_COMPILER_LAUNCHER",
                "CMAKE_HIP_COMPILER_LAUNCHER", "HIP_CLANG_LAUNCHER"):  # fmt: skip
        assert env[var] == "ccache", var
    assert int(env["MAX_JOBS"]) >= 1
    assert sorted(p.name for p in fa_build.out.iterdir()) == [FA_WHEEL]
    assert f"build-flash-attn: {FA_WHEEL} for gfx942" in r.proc.stdout


@pytest.mark.parametrize("arch", ["gfx1100", "gfx1201"])
def test_flash_attn_is_not_built_on_rdna_and_says_why(fa_build, arch):
    (fa_build.src / "setup.py").unlink()  # nothing of the source tree is read
    r = fa_build(arch)
    assert r.proc.returncode == 0, r.proc.stderr
    assert r.lines == []  # no pip call at all
    assert [p.name for p in fa_build.out.iterdir()] == ["NOT-BUILT"]
    (why,) = (fa_build.out / "NOT-BUILT").read_text().splitlines()
    assert "gfx90a gfx942 gfx950 only" in why and f"on {arch} vLLM uses PyTorch's SDPA" in why
    assert "build-flash-attn: not built:" in r.proc.stdout


@pytest.mark.parametrize(
    ("arch", "message"),
    [
        ("gfx942 gfx950", "--arch takes a GPU arch (gfx942) or several separated by ';'"),
        ("gfx942;", "--arch takes a GPU arch (gfx942) or several separated by ';'"),
        ("", "--arch is empty"),
    ],
)
def test_flash_attn_refuses_a_bad_arch(fa_build, arch, message):
    r = fa_build(arch)
    assert r.proc.returncode == 1 and message in r.proc.stderr, r.proc.stderr
    assert r.lines == [] and not fa_build.out.exists()


def test_flash_attn_builds_for_a_family_when_every_member_is_one_of_its_archs(fa_build):
    r = fa_build("gfx942;gfx950")
    assert r.proc.returncode == 0, r.proc.stderr
    assert r.env()["GPU_ARCHS"] == "gfx942;gfx950"
    assert sorted(p.name for p in fa_build.out.iterdir()) == [FA_WHEEL]


def test_flash_attn_is_not_built_for_a_family_with_an_rdna_member(fa_build):
    r = fa_build("gfx942;gfx1100")
    assert r.proc.returncode == 0, r.proc.stderr
    assert r.lines == []
    assert [p.name for p in fa_build.out.iterdir()] == ["NOT-BUILT"]


def test_flash_attn_needs_setup_py_and_composable_kernel(fa_build):
    (fa_build.src / FA_CK).unlink()
    r = fa_build("gfx950")
    assert r.proc.returncode == 1, r.proc.stderr
    assert (
        "no csrc/composable_kernel in" in r.proc.stderr and "with its submodules" in r.proc.stderr
    )
    (fa_build.src / "setup.py").unlink()
    r = fa_build("gfx950")
    assert r.proc.returncode == 1 and "no setup.py in" in r.proc.stderr
    assert r.lines == []


def test_flash_attn_refuses_a_wheel_without_its_extension(fa_build):
    r = fa_build("gfx90a", members="flash_attn/__init__.py flash_attn/flash_attn_interface.py")
    assert r.proc.returncode == 1
    assert f"build-flash-attn: {FA_WHEEL} has no flash_attn_2_cuda extension" in r.proc.stderr


def test_flash_attn_refuses_a_build_without_exactly_one_flash_attn_wheel(fa_build):
    r = fa_build("gfx942", wheel="other-1.0-cp314-cp314-linux_x86_64.whl")
    assert r.proc.returncode == 1 and "made no flash_attn wheel in" in r.proc.stderr
    (fa_build.out / "other-1.0-cp314-cp314-linux_x86_64.whl").unlink()
    (fa_build.out / "flash_attn-2.8.2-cp314-cp314-linux_x86_64.whl").write_text("")
    r = fa_build("gfx942")
    assert r.proc.returncode == 1 and "more than one flash_attn wheel in" in r.proc.stderr


def test_flash_attn_not_built_refuses_an_out_dir_holding_files(fa_build):
    fa_build.out.mkdir()
    (fa_build.out / FA_WHEEL).write_text("")
    r = fa_build("gfx1100")
    assert r.proc.returncode == 1 and "is not empty" in r.proc.stderr
    assert not (fa_build.out / "NOT-BUILT").exists()


@pytest.fixture
def fa_fetch(tmp_path):
    """build-flash-attn.sh fetch beside a fake fetch-source.sh that records its arguments."""
    scripts = tmp_path / "scripts"
    scripts.mkdir()
    (scripts / "build-flash-attn.sh").write_text((SCRIPTS / "build-flash-attn.sh").read_text())
    (scripts / "fetch-source.sh").write_text(
        "#!/bin/bash\n"
        'echo "fetch-source $*" >>"$FAKE_LOG"\n'
        '[ "${FAKE_CK:-yes}" = no ] && exit 0\n'
        f'mkdir -p "$(dirname "$3/{FA_CK}")" && : >"$3/{FA_CK}"\n'
    )
    (scripts / "fetch-source.sh").chmod(0o755)
    log = tmp_path / "fetch.log"
    dest = tmp_path / "src" / "flash-attention"

    def run(*args: str, env: dict | None = None):
        log.unlink(missing_ok=True)
        proc = subprocess.run(
            ["bash", str(scripts / "build-flash-attn.sh"), *args],
            env=dict(os.environ, FAKE_LOG=str(log), **(env or {})),
            capture_output=True, text=True,
        )  # fmt: skip
        return proc, (log.read_text().splitlines() if log.exists() else [])

    run.dest = dest
    return run


def test_flash_attn_fetches_the_pinned_commit_with_its_submodules_on_gfx950(fa_fetch):
    proc, lines = fa_fetch("fetch", "--arch", "gfx950", FA_URL, FA_REF, str(fa_fetch.dest))
    assert proc.returncode == 0, proc.stderr
    assert lines == [f"fetch-source {FA_URL} {FA_REF} {fa_fetch.dest} --recursive"]


def test_flash_attn_fetches_nothing_on_rdna(fa_fetch):
    proc, lines = fa_fetch("fetch", "--arch", "gfx1151", FA_URL, FA_REF, str(fa_fetch.dest))
    assert proc.returncode == 0, proc.stderr
    assert lines == [] and not fa_fetch.dest.exists()
    assert "build-flash-attn: nothing to fetch for gfx1151:" in proc.stdout


def test_flash_attn_fetch_fails_without_composable_kernel(fa_fetch):
    proc, _ = fa_fetch(
        "fetch", "--arch", "gfx942", FA_URL, FA_REF, str(fa_fetch.dest), env={"FAKE_CK": "no"}
    )
    assert proc.returncode == 1
    assert f"{FA_URL} {FA_REF} has no csrc/composable_kernel/example" in proc.stderr


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ((), "usage: build-flash-attn.sh fetch --arch ARCH URL REF SRC_DIR | build"),
        (("build", "gfx942", "src", "out"), "usage: build-flash-attn.sh"),
        (("fetch", "--arch", "gfx942", FA_URL, FA_REF), "usage: build-flash-attn.sh"),
        (("build", "--arch", "gfx942", "src"), "usage: build-flash-attn.sh"),
        (("install", "--arch", "gfx942", "src", "out"), "unknown command 'install'"),
    ],
)
def test_flash_attn_usage_errors(fa_fetch, args, message):
    proc, lines = fa_fetch(*args)
    assert proc.returncode == 1 and message in proc.stderr, proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1  # one line
    assert lines == []


def test_flash_attn_help(fa_fetch):
    proc, _ = fa_fetch("--help")
    assert proc.returncode == 0 and proc.stderr == ""
    assert "Usage: build-flash-attn.sh fetch --arch ARCH URL REF SRC_DIR" in proc.stdout
    assert "FLASH_ATTENTION_FORCE_BUILD=TRUE" in proc.stdout


# --- fetch-source.sh with the real git: a server that does not answer is named --------
# (#42 1.8) A mirror that did not answer read "cannot fetch <sha> ... (does the tag,
# branch or commit exist?)", sending users after a ref that was fine.


def fetch_source(tmp_path: Path, url: str, ref: str, gitconfig: str = ""):
    config = tmp_path / "gitconfig"
    config.write_text(gitconfig)
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith("GIT_")},
        "HOME": str(tmp_path),
        "GIT_CONFIG_GLOBAL": str(config),
        "GIT_CONFIG_NOSYSTEM": "1",
        "FETCH_SOURCE_RETRY_SECONDS": "0",
    }
    dest = tmp_path / f"checkout-{len(list(tmp_path.glob('checkout-*')))}"
    return subprocess.run(
        ["bash", str(SCRIPTS / "fetch-source.sh"), url, ref, str(dest)],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def dead_git_url() -> str:
    with socket.socket() as s:  # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    return f"git://127.0.0.1:{port}/github.com/org/x.git"


def test_fetch_source_names_a_git_server_that_does_not_answer(tmp_path):
    dead = dead_git_url()
    proc = fetch_source(tmp_path, dead, "0" * 40)
    assert proc.returncode == 1
    last = proc.stderr.splitlines()[-1]
    assert last.startswith(f"fetch-source: the git server does not answer ({dead}: "), last
    assert "check that mirror (the [git.rewrite] of the mirror settings) or the network" in last
    assert "does the tag" not in last


def test_fetch_source_names_the_mirror_a_git_config_rewrites_to(tmp_path):
    dead = dead_git_url()
    rewrite = f'[url "{dead.removesuffix("github.com/org/x.git")}github.com/"]\n'
    rewrite += '\tinsteadOf = "https://github.com/"\n'
    proc = fetch_source(tmp_path, "https://github.com/org/x.git", "v1.0", rewrite)
    assert proc.returncode == 1
    last = proc.stderr.splitlines()[-1]
    assert last.startswith(
        "fetch-source: the git server does not answer (https://github.com/org/x.git,"
        f" rewritten to {dead} by the git config: "
    ), last


def test_fetch_source_says_the_ref_may_not_exist_when_the_server_answers(tmp_path):
    bare = tmp_path / "x.git"
    work = tmp_path / "work"
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run([*git, "init", "-q", "--bare", str(bare)], check=True)
    subprocess.run([*git, "init", "-q", str(work)], check=True)
    (work / "f").write_text("x\n")
    subprocess.run([*git, "-C", str(work), "add", "f"], check=True)
    subprocess.run([*git, "-C", str(work), "commit", "-qm", "c"], check=True)
    subprocess.run([*git, "-C", str(work), "push", "-q", str(bare), "HEAD:main"], check=True)
    url = f"file://{bare}"
    proc = fetch_source(tmp_path, url, "v9.9.9")
    assert proc.returncode == 1
    assert proc.stderr.splitlines()[-1] == (
        f"fetch-source: cannot fetch v9.9.9 from {url} (the server answers; does the tag,"
        " branch or commit exist?)"
    )
    ok = fetch_source(tmp_path, url, "main")
    assert ok.returncode == 0, ok.stderr
