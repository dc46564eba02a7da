"""Builder resolution (tools/imagebuild/builders.py) against a fake docker CLI.

What `--builders=` hands tools/imagebuild: a docker context or buildx
builder name, or none (the local engine). The resolved identity and versions
must reach the content key; an unknown builder and one that is down must fail
in one line naming it and the arch, within the timeout.
"""

from __future__ import annotations

import dataclasses
import json
import os
import socketserver
import sys
import tempfile
import threading
import time
from pathlib import Path

import pytest

from tools import places
from tools.imagebuild import build, builders

DOCKER_DRIVER = """\
Name:          hostb
Driver:        docker
Last Activity: 2026-12-03 14:26:45 +0000 UTC

Nodes:
Name:             hostb
Endpoint:         hostb
Status:           running
BuildKit version: v0.0.0+unknown
Platforms:        linux/amd64, linux/amd64/v2, linux/amd64/v3
Labels:
 org.mobyproject.buildkit.worker.hostname: vm
"""

LOCAL_DRIVER = DOCKER_DRIVER.replace("hostb", "default")

REMOTE_DRIVER = """\
Name:          farm
Driver:        remote
Last Activity: 2026-12-03 14:30:00 +0000 UTC

Nodes:
Name:                  farm0
Endpoint:              tcp://buildkitd.example.com:1234
Status:                running
BuildKit daemon flags: --oci-worker=true
BuildKit version:      v0.23.2
Platforms:             linux/amd64

Name:                  farm1
Endpoint:              tcp://buildkitd2.example.com:1234
Status:                running
BuildKit version:      v0.23.2
Platforms:             linux/amd64
"""

DOWN = (
    "Name:   hostb\n"
    "Driver: \n"
    "Error:  Cannot connect to the Docker daemon at unix:///tmp/nothing.sock."
    " Is the docker daemon running?\n"
)

CONTEXT_HOST = "context inspect {} --format {{{{.Endpoints.docker.Host}}}}"
VERSION = "version --format {{.Server.Version}}"


@pytest.fixture
def docker(tmp_path, monkeypatch):
    """Returns set(scenario) -> the fake docker's path; calls are in scenario.calls."""
    scenario = tmp_path / "scenario.json"
    exe = tmp_path / "docker"
    exe.write_text(f"#!{sys.executable}\n" + (Path(__file__).parent / "fake_docker.py").read_text())
    exe.chmod(0o755)
    monkeypatch.setenv("FAKE_DOCKER_SCENARIO", str(scenario))

    def set_scenario(answers: dict) -> str:
        scenario.write_text(json.dumps(answers))
        return str(exe)

    set_scenario.calls = lambda: Path(f"{scenario}.calls").read_text().splitlines()
    return set_scenario


def env() -> dict[str, str]:
    return dict(os.environ)


def test_parse_inspect_reads_driver_nodes_and_versions():
    info = builders.parse_inspect(REMOTE_DRIVER)
    assert info["name"] == "farm"
    assert info["driver"] == "remote"
    assert [n["endpoint"] for n in info["nodes"]] == [
        "tcp://buildkitd.example.com:1234",
        "tcp://buildkitd2.example.com:1234",
    ]
    assert [n["buildkit"] for n in info["nodes"]] == ["v0.23.2", "v0.23.2"]
    assert builders.parse_inspect(DOWN)["error"].startswith("Cannot connect to the Docker daemon")


def test_a_docker_context_is_addressed_with_context_and_keyed_by_endpoint_and_versions(docker):
    exe = docker(
        {
            CONTEXT_HOST.format("hostb"): {"out": "ssh://builder@hostb.example.com\n"},
            "--context hostb buildx inspect": {"out": DOCKER_DRIVER},
            f"--context hostb {VERSION}": {"out": "28.5.2\n"},
        }
    )
    b = builders.resolve("hostb", "gfx1201", exe, env())
    assert b.docker_args() == ["--context", "hostb"]
    assert b.build_args() == []
    assert b.identity() == {
        "name": "hostb",
        "driver": "docker",
        "endpoints": ["ssh://builder@hostb.example.com"],
        "buildkit": ["v0.0.0+unknown"],
        "engine": "28.5.2",
    }


def test_a_buildx_builder_is_addressed_with_builder_and_booted(docker):
    exe = docker(
        {
            CONTEXT_HOST.format("farm"): {"code": 1, "out": 'context "farm": not found\n'},
            "buildx inspect --bootstrap farm": {"out": REMOTE_DRIVER},
        }
    )
    b = builders.resolve("farm", "gfx950", exe, env())
    assert b.docker_args() == []
    assert b.build_args() == ["--builder", "farm"]
    assert b.identity()["driver"] == "remote"
    assert b.identity()["buildkit"] == ["v0.23.2", "v0.23.2"]
    assert b.identity()["engine"] == ""  # no Docker engine behind a buildkitd


def test_the_local_engine_is_keyed_by_its_versions_not_its_socket(docker):
    exe = docker({"buildx inspect": {"out": LOCAL_DRIVER}, VERSION: {"out": "28.5.2+dfsg4\n"}})
    b = builders.resolve(builders.LOCAL, "gfx950", exe, env())
    assert b.docker_args() == [] and b.build_args() == []
    assert b.identity() == {
        "name": "local",
        "driver": "docker",
        "endpoints": [],
        "buildkit": ["v0.0.0+unknown"],
        "engine": "28.5.2+dfsg4",
    }


def test_an_upgraded_builder_gets_a_new_content_key(tmp_path):
    dockerfile = tmp_path / "Dockerfile"
    dockerfile.write_text("FROM scratch\n")
    old = builders.Builder("hostb", "context", "docker", ("ssh://b",), ("v0.0.0",), "28.5.2")
    new = builders.Builder("hostb", "context", "docker", ("ssh://b",), ("v0.0.0",), "29.0.0")
    again = builders.Builder("hostb", "context", "docker", ("ssh://b",), ("v0.0.0",), "28.5.2")

    def key(b):
        request = build.BuildRequest(Path("s.json"), dockerfile, Path("o.json"), "none")
        return build.content_key(request, b"{}", [dockerfile], build.Inputs({}), b.key())

    assert key(old) != key(new)
    assert key(old) == key(again)
    moved = builders.Builder("hostb", "context", "docker", ("ssh://c",), ("v0.0.0",), "28.5.2")
    assert key(old) != key(moved)


def test_unknown_builder_fails_in_one_line_listing_the_known_ones(docker):
    exe = docker(
        {
            CONTEXT_HOST.format("hostc"): {"code": 1, "out": 'context "hostc": not found\n'},
            "buildx inspect --bootstrap hostc": {
                "code": 1,
                "out": 'ERROR: no builder "hostc" found\n',
            },
            "buildx ls --format {{.Name}}": {"out": "default\nfarm\nhostb\n"},
            "context ls --format {{.Name}}": {"out": "default\nhostb\n"},
        }
    )
    with pytest.raises(builders.BuilderError) as e:
        builders.resolve("hostc", "gfx1201", exe, env())
    message = str(e.value)
    assert "\n" not in message
    assert message.startswith(
        "builder hostc (for arch gfx1201) is not a buildx builder or docker context here;"
        " known: default, farm, hostb (`docker buildx ls`)"
    )


def test_a_builder_that_is_down_fails_naming_builder_and_arch(docker):
    exe = docker(
        {
            CONTEXT_HOST.format("hostb"): {"out": "unix:///tmp/nothing.sock\n"},
            "--context hostb buildx inspect": {"out": DOWN},
        }
    )
    with pytest.raises(builders.BuilderError) as e:
        builders.resolve("hostb", "gfx1201", exe, env())
    assert str(e.value) == (
        "builder hostb (for arch gfx1201) is down or unreachable: Cannot connect to the Docker"
        " daemon at unix:///tmp/nothing.sock. Is the docker daemon running?; start it, or map"
        " gfx1201 to another builder in --builders="
    )


@pytest.mark.parametrize("value", ["abc", "0", "-1", "nan"])
def test_a_builder_timeout_it_cannot_read_is_one_line_never_20_s(monkeypatch, value):
    monkeypatch.setenv(builders.TIMEOUT_ENV, value)
    with pytest.raises(builders.BuilderError) as e:
        builders.timeout()
    assert str(e.value) == (
        f"ROCM_PYTORCH_BUILDER_TIMEOUT={value!r} is not a number of seconds; set it to a number > 0"
    )
    monkeypatch.setenv(builders.TIMEOUT_ENV, "")
    assert builders.timeout() == builders.DEFAULT_TIMEOUT


def test_a_builder_that_hangs_fails_within_the_timeout(docker, monkeypatch):
    monkeypatch.setenv(builders.TIMEOUT_ENV, "3")  # the fake CLI starts slowly on a busy host
    exe = docker(
        {
            CONTEXT_HOST.format("hostb"): {"out": "ssh://hostb\n"},
            "--context hostb buildx inspect": {"sleep": 30, "out": DOCKER_DRIVER},
        }
    )
    start = time.monotonic()
    with pytest.raises(builders.BuilderError) as e:
        builders.resolve("hostb", "noarch", exe, env())
    assert time.monotonic() - start < 15
    assert str(e.value).startswith(
        "builder hostb (for arch noarch) is down or unreachable: no answer within 3 s"
    )


def test_buildx_command_puts_context_before_buildx_and_builder_after_build(tmp_path, monkeypatch):
    request = build.BuildRequest(Path("s.json"), Path("Dockerfile"), Path("o.json"), "none")
    spec = {"build_args": {}, "labels": {}}
    meta = build.Scratch(tmp_path, tmp_path / "m.json")
    ctx = builders.Builder("hostb", "context", "docker")
    cmd = build.buildx_command(request, spec, meta, build.Inputs({}), "r/x:t", ctx)
    assert cmd[:5] == ["docker", "--context", "hostb", "buildx", "build"]
    farm = builders.Builder("farm", "buildx", "remote", env={"DOCKER_CONFIG": str(tmp_path)})
    monkeypatch.setattr(builders, "PLUGIN_DIRS", ())  # no docker-buildx anywhere
    cmd = build.buildx_command(request, spec, meta, build.Inputs({}), "r/x:t", farm)
    assert cmd[:5] == ["docker", "buildx", "build", "--builder", "farm"]


def test_buildx_runs_on_its_own_when_the_docker_cli_would_run_its_plugin(tmp_path, monkeypatch):
    # the plugin the docker CLI would find (<DOCKER_CONFIG>/cli-plugins first), run in
    # buildx's standalone mode: no docker CLI start, no plugin check
    monkeypatch.setattr(builders, "PLUGIN_DIRS", ())
    plugin = tmp_path / "cli-plugins" / "docker-buildx"
    plugin.parent.mkdir()
    plugin.write_text("#!/bin/sh\n")
    plugin.chmod(0o755)
    request = build.BuildRequest(Path("s.json"), Path("Dockerfile"), Path("o.json"), "none")
    spec = {"build_args": {}, "labels": {}}
    meta = build.Scratch(tmp_path, tmp_path / "m.json")
    env = {"DOCKER_CONFIG": str(tmp_path)}
    for builder, head in (
        (builders.Builder(builders.LOCAL, "local", "docker", env=env), []),
        (builders.Builder("farm", "buildx", "remote", env=env), ["--builder", "farm"]),
    ):
        cmd = build.buildx_command(request, spec, meta, build.Inputs({}), "r/x:t", builder)
        assert cmd[: 3 + len(head)] == [str(plugin), "build", *head, "--progress=plain"]
    # a docker context is the docker CLI's flag; another docker CLI (--docker) is asked as is
    hostb = builders.Builder("hostb", "context", "docker", env=env)
    cmd = build.buildx_command(request, spec, meta, build.Inputs({}), "r/x:t", hostb)
    assert cmd[:5] == ["docker", "--context", "hostb", "buildx", "build"]
    request = dataclasses.replace(request, docker="/opt/docker")
    local = builders.Builder(builders.LOCAL, "local", "docker", env=env)
    cmd = build.buildx_command(request, spec, meta, build.Inputs({}), "r/x:t", local)
    assert cmd[:3] == ["/opt/docker", "buildx", "build"]


def test_a_named_builder_uses_the_users_docker_config(monkeypatch):
    given = builders.named_env({"PATH": "/bin"}, "/home/u")
    assert given["DOCKER_CONFIG"] == "/home/u/.docker"
    kept = builders.named_env({"DOCKER_CONFIG": "/etc/dc"}, "/home/u")
    assert kept["DOCKER_CONFIG"] == "/etc/dc"


def test_a_builder_lost_during_the_build_is_named_not_docker_host():
    tail = ["#5 ERROR: Cannot connect to the Docker daemon at ssh://hostb. Is it running?"]
    spec = {"arch": "gfx1201"}
    assert build.hints(tail, spec, "hostb") == [
        "builder hostb (for arch gfx1201) stopped answering during the build: check it, then"
        " build again (what finished is kept)"
    ]
    assert build.hints(tail, spec)[0].startswith("no Docker engine answers at DOCKER_HOST=")


# -- the local engine's identity, kept by its /version answer -------------------------


class FakeEngine:
    """An Engine API on a unix socket answering GET /version with ``version``."""

    def __init__(self, path: Path) -> None:
        self.version = "28.5.2+dfsg4"
        self.requests: list[str] = []
        engine_api = self

        class Handler(socketserver.StreamRequestHandler):
            def handle(self) -> None:
                line = self.rfile.readline().decode()
                while self.rfile.readline().strip():
                    pass
                url = line.split(" ")[1]
                engine_api.requests.append(url)
                if url == "/version":
                    body = json.dumps({"Version": engine_api.version}).encode()
                    self.wfile.write(b"HTTP/1.0 200 OK\r\n\r\n" + body)
                else:
                    self.wfile.write(b"HTTP/1.0 404 Not Found\r\n\r\n")

        self.server = socketserver.ThreadingUnixStreamServer(str(path), Handler)
        self.host = f"unix://{path}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def fake_engine():
    # a short path: unix socket paths are limited to 107 bytes
    with tempfile.TemporaryDirectory(prefix="eng-", dir="/tmp") as d:
        e = FakeEngine(Path(d) / "docker.sock")
        yield e
        e.close()


def local_env(host: str, config: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "BUILDX_BUILDER"}
    return dict(env, DOCKER_HOST=host, DOCKER_CONFIG=str(config))


def local_scenario(version: str, driver: str = LOCAL_DRIVER) -> dict:
    return {"buildx inspect": {"out": driver}, VERSION: {"out": version + "\n"}}


def test_the_local_engine_is_asked_through_the_cli_once_then_kept(docker, fake_engine, tmp_path):
    exe = docker(local_scenario("28.5.2+dfsg4"))
    env = local_env(fake_engine.host, tmp_path / "config")
    first = builders.resolve(builders.LOCAL, "gfx950", exe, env, cache=tmp_path / "cache")
    assert docker.calls() == ["buildx inspect", VERSION]
    again = [
        builders.resolve(builders.LOCAL, "gfx950", exe, env, cache=tmp_path / "cache")
        for _ in range(3)
    ]
    assert docker.calls() == ["buildx inspect", VERSION]  # no CLI run after the first
    assert fake_engine.requests == ["/version"] * 4  # the engine is still asked each time
    assert {b.key() for b in again} == {first.key()}
    assert first.identity()["engine"] == "28.5.2+dfsg4"
    assert again[0].kind == "local" and again[0].docker_args() == again[0].build_args() == []


def test_an_upgraded_engine_is_asked_again_and_gets_a_new_key(docker, fake_engine, tmp_path):
    exe = docker(local_scenario("28.5.2+dfsg4"))
    env = local_env(fake_engine.host, tmp_path / "config")
    old = builders.resolve(builders.LOCAL, "gfx950", exe, env, cache=tmp_path / "cache")
    fake_engine.version = "29.0.0"
    exe = docker(local_scenario("29.0.0"))
    new = builders.resolve(builders.LOCAL, "gfx950", exe, env, cache=tmp_path / "cache")
    assert docker.calls() == ["buildx inspect", VERSION] * 2
    assert new.identity()["engine"] == "29.0.0" and new.key() != old.key()


def test_another_buildx_selection_is_asked_again_and_only_the_docker_driver_is_kept(
    docker, fake_engine, tmp_path
):
    config = tmp_path / "config"
    env = local_env(fake_engine.host, config)
    exe = docker(local_scenario("28.5.2+dfsg4"))
    builders.resolve(builders.LOCAL, "gfx950", exe, env, cache=tmp_path / "cache")
    # `docker buildx use farm` writes buildx/current: the CLI's builder is another one now
    (config / "buildx").mkdir(parents=True)
    (config / "buildx" / "current").write_text('{"Key":"x","Name":"farm","Global":true}')
    exe = docker(local_scenario("", REMOTE_DRIVER))
    for _ in range(2):
        b = builders.resolve(builders.LOCAL, "gfx950", exe, env, cache=tmp_path / "cache")
        assert b.driver == "remote" and b.identity()["buildkit"] == ["v0.23.2", "v0.23.2"]
    # a buildkitd's version is not pinned by the engine's answer: asked every time
    assert docker.calls() == ["buildx inspect", VERSION] + ["buildx inspect"] * 2


def test_a_local_engine_that_does_not_answer_fails_in_one_line_without_the_cli(docker, tmp_path):
    exe = docker(local_scenario("28.5.2+dfsg4"))
    env = local_env(f"unix://{tmp_path}/gone.sock", tmp_path / "config")
    with pytest.raises(builders.BuilderError) as e:
        builders.resolve(builders.LOCAL, "gfx950", exe, env, cache=tmp_path / "cache")
    msg = str(e.value)
    assert "\n" not in msg
    assert "local engine (for arch gfx950) is down" in msg and "gone.sock" in msg
    assert not Path(f"{os.environ['FAKE_DOCKER_SCENARIO']}.calls").exists()


def test_a_local_engine_off_a_unix_socket_is_asked_through_the_cli_every_time(docker, tmp_path):
    exe = docker(local_scenario("28.5.2+dfsg4"))
    env = local_env("tcp://127.0.0.1:1", tmp_path / "config")
    for _ in range(2):
        builders.resolve(builders.LOCAL, "gfx950", exe, env, cache=tmp_path / "cache")
    assert docker.calls() == ["buildx inspect", VERSION] * 2
    assert not (tmp_path / "cache").exists()


def test_buildx_is_searched_where_the_docker_cli_searches_its_plugins(tmp_path, monkeypatch):
    monkeypatch.setattr(builders, "PLUGIN_DIRS", ())
    config = tmp_path / "config"
    extra = tmp_path / "extra"
    for d in (config / "cli-plugins", extra):
        d.mkdir(parents=True)
        (d / "docker-buildx").write_text("#!/bin/sh\n")
        (d / "docker-buildx").chmod(0o755)
    env = {"DOCKER_CONFIG": str(config)}
    assert builders.buildx_binary(env) == str(config / "cli-plugins" / "docker-buildx")
    # config.json's cliPluginsExtraDirs come first, as for the docker CLI
    (config / "config.json").write_text(json.dumps({"cliPluginsExtraDirs": [str(extra)]}))
    assert builders.buildx_binary(env) == str(extra / "docker-buildx")
    # a config it cannot read as the CLI would: the docker CLI runs the plugin itself
    (config / "config.json").write_text("{not json")
    assert builders.buildx_binary(env) is None


# -- per-user state that follows $HOME, as the docker CLI does -------------------------------


def test_the_builders_cache_follows_xdg_cache_home_else_home(monkeypatch, tmp_path):
    """builders/ was under the password database's home whatever $HOME said: a user (or a
    test) with another HOME shared one cache keyed by a docker config it does not use."""
    monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert build.builders_cache() == tmp_path / "home/.cache/rocm-pytorch-images/builders"
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert build.builders_cache() == tmp_path / "xdg/rocm-pytorch-images/builders"
    # an action runs without HOME: the account's home, where the docker CLI looks then
    monkeypatch.delenv("XDG_CACHE_HOME")
    monkeypatch.delenv("HOME")
    assert build.builders_cache() == Path(places.home(), ".cache/rocm-pytorch-images/builders")


def test_a_relative_xdg_cache_home_is_one_line_not_another_place(monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", "cache")
    with pytest.raises(build.BuildError) as e:
        build.builders_cache()
    assert str(e.value) == (
        "XDG_CACHE_HOME=cache is not an absolute path (the XDG base directory spec calls it"
        " invalid); make it absolute or unset it"
    )


def test_a_named_builder_without_docker_config_uses_homes_docker_dir(monkeypatch, tmp_path):
    monkeypatch.delenv("DOCKER_CONFIG", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))
    assert builders.docker_env("farm")["DOCKER_CONFIG"] == str(tmp_path / ".docker")
    monkeypatch.delenv("HOME")
    assert builders.docker_env("farm")["DOCKER_CONFIG"] == str(Path(places.home(), ".docker"))
