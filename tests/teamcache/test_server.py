"""The team cache's lifecycle, its refusals in one line, and what it serves, against a real
nginx (the sid tree's, as `bazel` runs the tests there)."""

from __future__ import annotations

import hashlib
import json
import os
import socket
import subprocess
from pathlib import Path

import pytest

from tests.teamcache.conftest import request
from tools.mirrors import secrets as mirror_secrets
from tools.mirrors import settings as mirror_settings
from tools.process.daemon import alive, free_port
from tools.teamcache import clients, server
from tools.teamcache.cli import main


def binary(*args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    """`bazel run //tools/teamcache -- ARGS` as a user runs it (a process of its own)."""
    return subprocess.run(
        [os.environ["TEAMCACHE_BIN"], *args],
        capture_output=True,
        text=True,
        check=False,
        env={**os.environ, **(env or {})},
        timeout=60,
    )


def test_start_status_stop(state):
    port = int(os.environ[server.PORT_ENV])
    r = binary("start")
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines[0].startswith(f"team cache http://127.0.0.1:{port}: started (pid ")
    assert f"build --remote_cache=http://127.0.0.1:{port}" in lines
    assert f'endpoint = "http://127.0.0.1:{port}/ccache"' in lines
    # nginx outlives the command that started it
    info = server.status(state)
    assert info["running"] and info["url"] == f"http://127.0.0.1:{port}"
    pid = info["pid"]
    assert alive(pid) and server.ours(pid, state.conf)

    status, _, _ = request(port, "PUT", "/cas/" + "a" * 64, b"x" * 1000)
    assert status == 201
    r = binary("status")
    assert r.returncode == 0, r.stderr
    assert f"team cache http://127.0.0.1:{port}: running (pid {pid})" in r.stdout
    assert f"dir:    {state.root}" in r.stdout
    assert "data:   1000 B" in r.stdout
    info = json.loads(binary("status", "--json").stdout)
    assert (info["pid"], info["data_bytes"]) == (pid, 1000)

    r = binary("stop")
    assert r.returncode == 0 and r.stdout.strip() == f"stopped the team cache (pid {pid})"
    assert not alive(pid)
    assert not server.status(state)["running"]
    assert binary("stop").stdout.strip() == "team cache not running"
    assert (state.data / "cas" / ("a" * 64)).read_bytes() == b"x" * 1000  # the data stays


def test_start_is_idempotent_and_keeps_its_port(state, monkeypatch, capsys):
    first = server.start()
    assert first.started
    again = server.start()
    assert (again.port, again.pid, again.started) == (first.port, first.pid, False)
    assert main(["start"]) == 0
    assert f": already running (pid {first.pid}," in capsys.readouterr().out
    # the port is recorded: without the variable the next start takes it again
    server.stop()
    monkeypatch.delenv(server.PORT_ENV)
    assert server.start().port == first.port


def test_stop_ends_only_its_own_nginx(state, tmp_path):
    other = server.Paths(tmp_path / "other")
    theirs = server.start(other, port=free_port())
    try:
        mine = server.start()
        assert server.stop() == mine.pid
        assert not alive(mine.pid)
        assert alive(theirs.pid) and server.answers(theirs.port)
    finally:
        server.stop(other)


def one_line_error(r: subprocess.CompletedProcess) -> str:
    assert r.returncode == 1, (r.stdout, r.stderr)
    assert r.stdout == ""
    lines = r.stderr.splitlines()
    assert len(lines) == 1, r.stderr
    assert lines[0].startswith("teamcache: error: ")
    return lines[0]


def test_a_relative_dir_is_refused_in_one_line(state):
    line = one_line_error(binary("start", env={server.DIR_ENV: "relative/teamcache"}))
    assert "ROCM_PYTORCH_TEAMCACHE_DIR=relative/teamcache is not an absolute path" in line
    assert "make it absolute or unset it" in line
    assert not Path("relative").exists()


def test_a_dir_it_cannot_write_is_refused_in_one_line(state, tmp_path):
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    line = one_line_error(binary("start", env={server.DIR_ENV: str(blocker / "teamcache")}))
    assert f"cannot write the team cache dir {blocker / 'teamcache'} (Not a directory)" in line
    assert "set ROCM_PYTORCH_TEAMCACHE_DIR to the absolute path of one" in line


def test_a_taken_port_is_refused_in_one_line_naming_the_holder(state):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        port = s.getsockname()[1]
        line = one_line_error(binary("start", env={server.PORT_ENV: str(port)}))
    assert f"team cache port {port} ($ROCM_PYTORCH_TEAMCACHE_PORT) is taken by pid" in line
    assert f"is taken by pid {os.getpid()} (" in line
    assert "set ROCM_PYTORCH_TEAMCACHE_PORT to a free port" in line
    assert not server.status(state)["running"]


def test_a_bad_port_setting_is_refused_in_one_line(state):
    line = one_line_error(binary("start", env={server.PORT_ENV: "80a"}))
    assert "ROCM_PYTORCH_TEAMCACHE_PORT='80a' is not a port number; set it to 1-65535" in line


def test_missing_nginx_names_the_install_command(state, monkeypatch, capsys):
    line = one_line_error(binary("start", env={server.NGINX_ENV: "/nonexistent/nginx"}))
    assert "ROCM_PYTORCH_TEAMCACHE_NGINX=/nonexistent/nginx is not an executable file" in line
    monkeypatch.setattr(server.binaries, "tool", lambda name, tree_path: None)
    assert main(["start"]) == 1
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0
    assert "nginx not found" in err and "tools/bootstrap.sh" in err
    assert "apt-get install nginx" in err


def test_bazels_http_cache_protocol(state):
    port = server.start().port
    blob = os.urandom(3 << 20)  # larger than nginx's body buffer: through its temp files
    digest = hashlib.sha256(blob).hexdigest()
    assert request(port, "HEAD", f"/cas/{digest}")[0] == 404
    assert request(port, "GET", f"/ac/{digest}")[0] == 404
    assert request(port, "PUT", f"/cas/{digest}", blob)[0] == 201
    assert request(port, "PUT", f"/cas/{digest}", blob)[0] == 204  # again: overwritten
    status, _, body = request(port, "GET", f"/cas/{digest}")
    assert status == 200 and body == blob
    assert request(port, "HEAD", f"/cas/{digest}")[0] == 200
    assert request(port, "PUT", f"/ac/{digest}", b"action result")[0] == 201
    assert request(port, "GET", f"/ac/{digest}")[2] == b"action result"
    assert (state.data / "cas" / digest).stat().st_size == len(blob)
    # the access log: method, path, status, request bytes (what .ci/remote_cache_check.py reads)
    puts = [line.split() for line in state.access_log.read_text().splitlines()]
    puts = [p for p in puts if p[:3] == ["PUT", f"/cas/{digest}", "201"]]
    assert len(puts) == 1 and int(puts[0][3]) > len(blob)


def test_webdav_for_the_compiler_caches(state):
    port = server.start().port
    # a directory: PROPFIND (Depth 0) answers a collection, as OpenDAL's writer asks
    status, headers, body = request(port, "PROPFIND", "/sccache/", headers={"Depth": "0"})
    assert status == 207 and headers["Content-Type"] == "application/xml"
    assert b"<D:href>/sccache/</D:href>" in body and b"<D:collection/>" in body
    assert b"<D:getlastmodified>" in body
    # a missing one: 404, then MKCOL makes it (an existing one: 405, which OpenDAL accepts)
    assert request(port, "PROPFIND", "/sccache/a/b/", headers={"Depth": "0"})[0] == 404
    assert request(port, "MKCOL", "/sccache/a/")[0] == 201
    assert request(port, "MKCOL", "/sccache/a/")[0] == 405
    assert request(port, "PUT", "/sccache/a/b/entry", b"object")[0] == 201
    assert request(port, "PROPFIND", "/sccache/a/b/", headers={"Depth": "0"})[0] == 207
    assert request(port, "PROPFIND", "/sccache/a/b/entry")[0] == 404  # directories only
    # ccache's http storage: GET, HEAD, PUT, DELETE
    assert request(port, "PUT", "/ccache/ab/cdef", b"result")[0] == 201
    assert request(port, "HEAD", "/ccache/ab/cdef")[0] == 200
    assert request(port, "DELETE", "/ccache/ab/cdef")[0] == 204
    assert request(port, "GET", "/ccache/ab/cdef")[0] == 404
    # build-env.sh's probe of an endpoint: any answer but 5xx, 401 or 403
    for path in ("/ccache", "/sccache", "/sccache/", "/"):
        assert request(port, "GET", path)[0] == 200, path
    # a path that would need XML escaping is not echoed into the answer
    (state.data / "x&y").mkdir()
    status, _, body = request(port, "PROPFIND", "/x%26y/")
    assert status == 207 and b"<D:href>/</D:href>" in body


@pytest.mark.parametrize("backend", clients.BACKENDS)
def test_the_printed_settings_are_what_tools_mirrors_reads(state, tmp_path, capsys, backend):
    port = int(os.environ[server.PORT_ENV])
    assert main(["settings", "--backend", backend]) == 0
    out = capsys.readouterr().out
    assert f"build --remote_cache=http://127.0.0.1:{port}\n" in out
    table = out[out.index("[compiler_cache]") :]
    file = tmp_path / "mirrors.toml"
    file.write_text(table)
    cc = mirror_settings.load(file).compiler_cache
    want = f"http://127.0.0.1:{port}/{backend.split('-')[0]}"
    assert (cc.backend, cc.endpoint) == (backend, want)
    env = mirror_secrets.compiler_cache_env(cc)
    name = "CCACHE_REMOTE_STORAGE" if backend == "ccache-http" else "SCCACHE_WEBDAV_ENDPOINT"
    assert f"{name}={want}\n" in env
