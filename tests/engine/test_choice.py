"""Which engine ensure() picks, its environment and its errors; no dockerd is started here."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.engine.helpers import ROOT, cli
from tools import engine
from tools.engine import binaries, lifecycle, loopback, state
from tools.engine.engine import SCOPE_ENV


def test_a_docker_host_that_answers_is_used_as_it_is(scratch, fake_engine_at, monkeypatch):
    fake = fake_engine_at(scratch / "given.sock")
    monkeypatch.setenv("DOCKER_HOST", fake.host)
    env = engine.ensure()
    assert env["DOCKER_HOST"] == fake.host
    assert fake.requests == ["GET /_ping HTTP/1.0"]
    assert env["BUILDX_NO_DEFAULT_ATTESTATIONS"] == "1"
    # should not start or even claim the private engine
    assert state.DIR_ENV not in env
    assert not (scratch / "engine" / "docker.sock").exists()
    assert not (scratch / "engine" / "log").exists()


def test_the_docker_config_carries_the_buildx_plugin(scratch, fake_engine_at, monkeypatch):
    monkeypatch.setenv("DOCKER_HOST", fake_engine_at(scratch / "given.sock").host)
    plugin = Path(engine.ensure()["DOCKER_CONFIG"]) / "cli-plugins" / "docker-buildx"
    assert os.access(plugin, os.X_OK)
    # should reach a real buildx where Debian puts it (inside `bazel`, the sid tree's; from
    # the host, through the tree's runner): the metadata the docker CLI asks a plugin for
    run = subprocess.run(
        [str(plugin), "docker-cli-plugin-metadata"], capture_output=True, text=True, timeout=60
    )
    assert run.returncode == 0, run.stderr
    metadata = json.loads(run.stdout)
    assert (metadata["Vendor"], metadata["ShortDescription"]) == ("Docker Inc.", "Docker Buildx")


def test_a_docker_config_with_buildx_is_kept(scratch, fake_engine_at, monkeypatch):
    mine = scratch / "mine"
    (mine / "cli-plugins").mkdir(parents=True)
    (mine / "cli-plugins" / "docker-buildx").write_text("#!/bin/sh\n")
    (mine / "cli-plugins" / "docker-buildx").chmod(0o755)
    monkeypatch.setenv("DOCKER_CONFIG", str(mine))
    monkeypatch.setenv("DOCKER_HOST", fake_engine_at(scratch / "given.sock").host)
    assert engine.ensure()["DOCKER_CONFIG"] == str(mine)


def test_a_docker_config_without_buildx_keeps_its_credentials(scratch, fake_engine_at, monkeypatch):
    mine = scratch / "mine"
    mine.mkdir()
    (mine / "config.json").write_text('{"auths": {"r.example": {"auth": "eDp5"}}}')
    monkeypatch.setenv("DOCKER_CONFIG", str(mine))
    monkeypatch.setenv("DOCKER_HOST", fake_engine_at(scratch / "given.sock").host)
    ours = Path(engine.ensure()["DOCKER_CONFIG"])
    assert ours != mine
    assert (ours / "config.json").read_text() == (mine / "config.json").read_text()


def test_a_silent_docker_host_gives_way_to_the_host_engine(scratch, fake_engine_at, monkeypatch):
    host = fake_engine_at(scratch / "host-docker.sock")
    monkeypatch.setenv(state.HOST_SOCKET_ENV, str(host.socket))
    monkeypatch.setenv("DOCKER_HOST", f"unix://{scratch}/dead.sock")
    messages = []
    env = engine.ensure(log=messages.append)
    assert env["DOCKER_HOST"] == host.host
    assert messages == [
        f"DOCKER_HOST=unix://{scratch}/dead.sock does not answer;"
        f" using the host's engine at {host.socket}"
    ]


def test_the_host_engine_is_preferred_to_the_private_one(scratch, fake_engine_at, monkeypatch):
    host = fake_engine_at(scratch / "host-docker.sock")
    private = fake_engine_at(scratch / "engine" / "docker.sock")
    monkeypatch.setenv(state.HOST_SOCKET_ENV, str(host.socket))
    assert engine.ensure()["DOCKER_HOST"] == host.host
    assert private.requests == []


def test_a_private_engine_that_answers_is_reused(scratch, fake_engine_at):
    private = fake_engine_at(scratch / "engine" / "docker.sock")
    env = engine.ensure()
    assert env["DOCKER_HOST"] == private.host
    assert env[state.DIR_ENV] == str(scratch / "engine")
    assert not (scratch / "engine" / "log" / "starts.log").exists()  # nothing started


def test_private_skips_docker_host_and_the_host_engine(scratch, fake_engine_at, monkeypatch):
    given = fake_engine_at(scratch / "given.sock")
    host = fake_engine_at(scratch / "host-docker.sock")
    private = fake_engine_at(scratch / "engine" / "docker.sock")
    monkeypatch.setenv("DOCKER_HOST", given.host)
    monkeypatch.setenv(state.HOST_SOCKET_ENV, str(host.socket))
    assert engine.ensure(private=True)["DOCKER_HOST"] == private.host
    assert given.requests == host.requests == []


def test_apply_puts_the_environment_into_this_process(scratch, fake_engine_at, monkeypatch):
    fake = fake_engine_at(scratch / "given.sock")
    monkeypatch.setenv("DOCKER_HOST", fake.host)
    env = engine.apply()
    assert {k: os.environ[k] for k in env} == env


def test_the_state_dir_is_in_homes_cache_but_for_bazels_stand_in_home(monkeypatch, tmp_path):
    monkeypatch.delenv(state.DIR_ENV, raising=False)
    monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))  # a user's HOME: it moves the state
    assert engine.state_dir() == tmp_path / ".cache/rocm-pytorch-images/engine"
    monkeypatch.setenv("TEST_TMPDIR", str(tmp_path))  # what Bazel does to tests: not theirs
    import pwd

    home = pwd.getpwuid(os.getuid()).pw_dir
    assert engine.state_dir() == Path(home) / ".cache/rocm-pytorch-images/engine"


def test_no_dockerd_anywhere_names_the_bootstrap_and_the_packages(scratch, monkeypatch):
    monkeypatch.setenv("PATH", str(scratch / "empty"))
    monkeypatch.setattr(binaries, "SEARCH_DIRS", ())
    monkeypatch.setattr(binaries, "RUNNER", "no-such-runner")
    with pytest.raises(engine.EngineError) as e:
        engine.ensure()
    message = str(e.value)
    assert "dockerd, containerd, runc not found" in message
    assert "Run `tools/bootstrap.sh` as root or with sudo" in message
    assert "apt-get install docker.io containerd runc docker-buildx" in message
    assert "DOCKER_HOST" in message


def test_the_tree_of_the_bootstrap_runner_is_used_when_the_host_has_no_dockerd(
    scratch, monkeypatch
):
    tree = scratch / "tree"
    for name in ("usr/sbin/dockerd", "usr/bin/containerd", "usr/sbin/runc"):
        (tree / name).parent.mkdir(parents=True, exist_ok=True)
        (tree / name).write_text("#!/bin/sh\n")
        (tree / name).chmod(0o755)
    bindir = scratch / "bin"
    bindir.mkdir()
    runner = bindir / "rocm-pytorch-sid-run"
    runner.write_text(f"#!/bin/bash\n# written by tools/bootstrap.sh\nP={tree}\n")
    runner.chmod(0o755)
    monkeypatch.setenv("PATH", str(bindir))
    monkeypatch.setattr(binaries, "SEARCH_DIRS", ())
    tools = binaries.find_tools()
    assert tools.argv("/usr/sbin/dockerd", "--version") == [
        str(runner),
        "/usr/sbin/dockerd",
        "--version",
    ]
    assert tools.where == f"the tree {tree}"


def test_a_state_dir_too_long_for_unix_sockets_is_refused(monkeypatch):
    long_dir = "/tmp/" + "d" * 80
    monkeypatch.setenv(state.DIR_ENV, long_dir)
    monkeypatch.setenv(state.HOST_SOCKET_ENV, "/nonexistent/docker.sock")
    monkeypatch.delenv("DOCKER_HOST", raising=False)
    with pytest.raises(engine.EngineError, match="set ROCM_PYTORCH_ENGINE_DIR to a path of at"):
        engine.ensure()
    assert not Path(long_dir).exists()


def test_env_prints_false_on_failure_so_eval_fails(monkeypatch):
    env = dict(os.environ)
    env.pop("DOCKER_HOST", None)
    env[state.DIR_ENV] = "/tmp/" + "d" * 80
    env[state.HOST_SOCKET_ENV] = "/nonexistent/docker.sock"
    result = cli("env", env=env)
    assert result.code == 1
    assert result.out == "false\n"
    assert result.err.startswith("engine: error: the engine's state dir /tmp/ddd")
    shell = subprocess.run(
        ["bash", "-c", 'eval "$(python3 -m tools.engine env)" && echo reached'],
        env={**env, "PYTHONPATH": str(ROOT), "PATH": os.environ.get("PATH", "/usr/bin:/bin")},
        capture_output=True,
        text=True,
        check=False,
    )
    assert shell.returncode != 0 and "reached" not in shell.stdout


def test_env_lines_round_trip_through_eval():
    env = {"DOCKER_HOST": "unix:///tmp/a b/docker.sock", "DOCKER_CONFIG": "/tmp/it's"}
    text = engine.env_lines(env, "/tmp/x y/bin")
    shell = subprocess.run(
        ["bash", "-c", f'PATH=/usr/bin:/bin\n{text}printf "%s|%s|%s" "$DOCKER_HOST"'
         ' "$DOCKER_CONFIG" "$PATH"'],
        capture_output=True,
        text=True,
        check=True,
    )  # fmt: skip
    assert shell.stdout == "unix:///tmp/a b/docker.sock|/tmp/it's|/usr/bin:/bin:/tmp/x y/bin"


@pytest.mark.parametrize("command", [[], ["start"], ["env"], ["stop"], ["status"]])
def test_every_command_has_help(command):
    result = cli(*command, "--help")
    assert result.code == 0, result.err
    assert result.out.startswith("usage: engine")


def test_status_without_any_engine_exits_3(scratch):
    env = dict(os.environ)
    result = cli("status", "--json", env=env)
    assert result.code == 3, result.err
    assert '"uses": null' in result.out


@pytest.mark.parametrize("off", ["0", "false", "FALSE", "Off", " no "])
def test_autostart_off_fails_with_what_it_tried(scratch, monkeypatch, off):
    monkeypatch.setenv("DOCKER_HOST", f"unix://{scratch}/dead.sock")
    monkeypatch.setenv(lifecycle.AUTOSTART_ENV, off)
    with pytest.raises(engine.EngineError) as e:
        engine.ensure()
    assert str(e.value).startswith(
        f"no Docker engine answers (DOCKER_HOST=unix://{scratch}/dead.sock, nothing at"
        f" {scratch}/no-host-engine.sock, no private engine at {scratch}/engine/docker.sock)"
        f" and ROCM_PYTORCH_ENGINE_AUTOSTART={off.strip()} forbids starting one"
    )
    assert not (scratch / "engine" / "log").exists()


@pytest.mark.parametrize(
    "name, value, message",
    [
        (lifecycle.AUTOSTART_ENV, "disable", "'disable' is neither on nor off; write 0 or 1"),
        (lifecycle.TIMEOUT_ENV, "abc", "'abc' is not a number of seconds; set it to a number > 0"),
        (lifecycle.TIMEOUT_ENV, "-1", "'-1' is not a number of seconds; set it to a number > 0"),
    ],
)
def test_an_engine_setting_it_cannot_read_stops_before_anything_starts(
    scratch, monkeypatch, name, value, message
):
    # `FALSE` once started a root dockerd; `abc` seconds once read as the default
    monkeypatch.setenv("DOCKER_HOST", f"unix://{scratch}/dead.sock")
    monkeypatch.setenv(name, value)
    with pytest.raises(engine.EngineError) as e:
        engine.ensure()
    assert str(e.value) == f"{name}={message}" + (
        " (or false/true, no/yes, off/on)" if name == lifecycle.AUTOSTART_ENV else ""
    )
    assert not (scratch / "engine" / "log").exists()
    result = cli("start", env=dict(os.environ))
    assert result.code == 1
    assert result.err.strip().splitlines()[-1] == f"engine: error: {e.value}"


def test_a_loopback_registry_port_it_cannot_read_is_one_line(scratch, monkeypatch):
    for value in ("abc", "0", "99999"):
        monkeypatch.setenv(loopback.REGISTRY_PORT_ENV, value)
        with pytest.raises(engine.EngineError) as e:
            loopback.ensure(state.paths(), lambda _m: None)
        assert str(e.value) == (
            f"{loopback.REGISTRY_PORT_ENV}={value!r} is not a port number; set it to 1-65535"
        )
    assert not (scratch / "engine" / "registry").exists()


def test_a_bazel_spawn_is_recognised_by_its_process_wrapper(scratch):
    wrapper = scratch / "process-wrapper"  # what Bazel runs every local action and test under
    wrapper.symlink_to("/bin/sh")
    child = subprocess.run(
        [
            str(wrapper),
            "-c",
            f"{sys.executable} -c"
            " 'from tools.process import daemon; print(daemon.in_bazel_spawn())'",
        ],
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        check=True,
    )
    assert child.stdout == "True\n"


def test_an_unknown_scope_is_refused(scratch, monkeypatch):
    monkeypatch.setenv(SCOPE_ENV, "forever")
    with pytest.raises(engine.EngineError, match="ROCM_PYTORCH_ENGINE_SCOPE='forever': write"):
        engine.ensure()


def test_a_second_engine_gets_an_environment_and_docker_config_of_its_own(tmp_path, monkeypatch):
    given = tmp_path / "given"
    (given / "cli-plugins").mkdir(parents=True)
    (given / "cli-plugins" / "docker-buildx").write_text("#!/bin/sh\n")
    (given / "config.json").write_text("{}")
    monkeypatch.setenv("DOCKER_CONFIG", str(given))
    monkeypatch.setenv("DOCKER_HOST", "unix:///somewhere.sock")
    monkeypatch.setenv(state.DIR_ENV, str(tmp_path / "mine"))
    env = engine.unpointed_env()
    assert not {"DOCKER_HOST", "DOCKER_CONFIG", state.DIR_ENV} & set(env)
    assert env["PATH"] == os.environ["PATH"]
    own = engine.client_config(tmp_path / "own")
    buildx = Path("cli-plugins", "docker-buildx")
    assert (own / buildx).resolve() == given / buildx
    assert (own / "config.json").resolve() == given / "config.json"
    assert sorted(p.name for p in own.iterdir()) == ["cli-plugins", "config.json"]
