"""The embedded registry's lifecycle: real docker-registry processes in a private state dir."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import time
from pathlib import Path

import pytest

from tests.staging.conftest import free_port
from tools.process import daemon
from tools.staging import StagingError, embedded, resolve


def registry_processes(p: embedded.Paths) -> list[int]:
    """Live processes serving this state dir's config."""
    out = []
    for proc in Path("/proc").glob("[0-9]*"):
        try:
            if str(p.config).encode() in (proc / "cmdline").read_bytes().split(b"\0"):
                if daemon.alive(int(proc.name)):
                    out.append(int(proc.name))
        except OSError:
            continue
    return out


def test_start_status_and_second_start_reuse_pid_and_port(state):
    port = embedded.ensure_running()
    assert port == int(os.environ[embedded.PORT_ENV])
    info = embedded.status()
    assert info["running"] and info["port"] == port and info["pid"]
    assert info["registry"] == f"127.0.0.1:{port}/staging"
    assert info["state_dir"] == str(state.root) and info["repositories"] == 0
    config = state.config.read_text()
    assert f"addr: 127.0.0.1:{port}" in config and "delete: {enabled: true}" in config
    # should keep its HTTP secret to this account: 0600
    assert "secret: " in config and (state.config.stat().st_mode & 0o777) == 0o600
    assert resolve(None) == resolve("embedded", start=False)
    assert embedded.ensure_running() == port
    assert embedded.status()["pid"] == info["pid"]
    assert registry_processes(state) == [info["pid"]]
    # detached: its own session, not this test's process group
    assert os.getsid(info["pid"]) == info["pid"] != os.getsid(0)


def test_a_start_inside_a_bazel_spawn_says_it_ends_with_the_spawn(state, capsys):
    if not daemon.in_bazel_spawn():
        pytest.skip("not run by Bazel")
    port = embedded.ensure_running()
    err = capsys.readouterr().err
    assert f"started the embedded registry (127.0.0.1:{port}) for this Bazel action" in err
    assert "`bazel run //tools/staging -- start` keeps it running" in err
    assert embedded.ensure_running() == port
    assert capsys.readouterr().err == ""  # running: nothing to say


def test_a_start_inside_a_persistent_worker_says_it_ends_with_the_worker(
    state, capsys, monkeypatch
):
    from tools.process import worker

    monkeypatch.setenv(worker.ENV, "1")
    port = embedded.ensure_running()
    err = capsys.readouterr().err
    assert f"(127.0.0.1:{port}) for this Bazel worker only: it ends with the worker" in err
    assert "with the action" not in err  # not what happens under a worker (#42 1.8)


def test_stop_is_idempotent(state):
    embedded.ensure_running()
    pid = embedded.status()["pid"]
    assert embedded.stop() == pid
    assert not daemon.alive(pid) and not state.pid.exists()
    assert embedded.stop() is None
    info = embedded.status()
    assert not info["running"] and info["pid"] is None


def test_concurrent_ensure_running_starts_one_registry(state):
    code = "from tools.staging import embedded; print(embedded.ensure_running())"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(__import__("sys").path)}
    procs = [
        subprocess.Popen(
            [__import__("sys").executable, "-c", code], stdout=subprocess.PIPE, text=True, env=env
        )
        for _ in range(8)
    ]
    ports = {p.communicate(timeout=60)[0].strip() for p in procs}
    assert all(p.returncode == 0 for p in procs)
    assert ports == {os.environ[embedded.PORT_ENV]}
    assert registry_processes(state) == [embedded.status()["pid"]]


def test_restart_after_kill_reuses_port(state, monkeypatch):
    port = embedded.ensure_running()
    pid = embedded.status()["pid"]
    os.kill(pid, signal.SIGKILL)
    while daemon.alive(pid):
        time.sleep(0.02)
    assert not embedded.status()["running"]
    monkeypatch.delenv(embedded.PORT_ENV)  # the recorded port, not the env, decides now
    assert embedded.ensure_running() == port
    assert embedded.status()["pid"] not in (None, pid)


def test_first_start_without_env_takes_a_default_port(state, monkeypatch):
    monkeypatch.delenv(embedded.PORT_ENV)
    port = embedded.ensure_running()
    assert embedded.DEFAULT_PORT <= port <= embedded.LAST_PORT
    assert state.port.read_text().strip() == str(port)


@pytest.fixture
def listener():
    s = socket.socket()
    s.bind(("127.0.0.1", free_port()))
    s.listen()
    yield s.getsockname()[1]
    s.close()


def test_port_from_env_taken(state, monkeypatch, listener):
    monkeypatch.setenv(embedded.PORT_ENV, str(listener))
    with pytest.raises(StagingError) as e:
        embedded.ensure_running()
    message = str(e.value)
    assert f"staging port {listener} ($ROCM_PYTORCH_STAGING_PORT)" in message
    assert f"pid {os.getpid()}" in message  # who holds it
    assert "stop" in message and embedded.PORT_ENV in message and "rebuild" in message


def test_recorded_port_taken(state, monkeypatch):
    port = embedded.ensure_running()
    embedded.stop()
    monkeypatch.delenv(embedded.PORT_ENV)
    with socket.socket() as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # past TIME_WAIT
        s.bind(("127.0.0.1", port))
        s.listen()
        with pytest.raises(StagingError, match=f"staging port {port} \\(recorded in"):
            embedded.ensure_running()


def test_missing_binary(state, monkeypatch):
    monkeypatch.setenv(embedded.BIN_ENV, "/nonexistent/docker-registry")
    with pytest.raises(StagingError, match="ROCM_PYTORCH_REGISTRY_BIN=/nonexistent"):
        embedded.ensure_running()
    monkeypatch.delenv(embedded.BIN_ENV)
    monkeypatch.setenv("PATH", "/nonexistent")
    monkeypatch.setattr(embedded.os, "access", lambda *_: False)
    from tools.engine import binaries

    monkeypatch.setattr(binaries, "tool", lambda *_: None)  # no sid tree either
    with pytest.raises(StagingError) as e:
        embedded.ensure_running()
    # the command that puts it where the tools look, not an apt-get that is no use here
    assert "run `tools/bootstrap.sh`" in str(e.value) and "apt-get" not in str(e.value)
    assert not state.pid.exists()


def test_the_sid_trees_registry_is_found_through_its_runner(monkeypatch):
    monkeypatch.delenv(embedded.BIN_ENV, raising=False)
    monkeypatch.setenv("PATH", "/nonexistent")
    monkeypatch.setattr(embedded.os, "access", lambda *_: False)
    from tools.engine import binaries

    runner = ["/usr/local/bin/rocm-pytorch-sid-run", "/usr/bin/docker-registry"]
    monkeypatch.setattr(binaries, "tool", lambda name, path: runner)
    assert embedded.registry_argv() == runner


def test_registry_that_exits_shows_its_log(state, monkeypatch, tmp_path):
    fake = tmp_path / "fake-registry"
    fake.write_text("#!/bin/sh\necho 'configuration error: boom' >&2\nexit 1\n")
    fake.chmod(0o755)
    monkeypatch.setenv(embedded.BIN_ENV, str(fake))
    with pytest.raises(StagingError, match="exited at start") as e:
        embedded.ensure_running()
    assert "configuration error: boom" in str(e.value)
    assert not state.pid.exists()


def workspace_status(env: dict[str, str]) -> subprocess.CompletedProcess:
    """Run tools/workspace_status.sh as Bazel does: from the workspace root (here: runfiles)."""
    return subprocess.run(
        ["bash", os.environ["WORKSPACE_STATUS"]],
        capture_output=True,
        text=True,
        check=False,
        env={**os.environ, **env},
    )


def test_the_workspace_status_command_starts_the_registry_quietly(state):
    proc = workspace_status({})
    # should never fail a build, and print nothing but the commit's status lines (where
    # this client's engine and staging are is no workspace status: tools/client_env.py)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert all(line.startswith("STABLE_") for line in lines), lines
    # should leave the registry running (outside an action it outlives the build)
    info = embedded.status()
    assert info["running"] and info["port"] == int(os.environ[embedded.PORT_ENV])
    # and reuse it on the next build
    assert workspace_status({}).returncode == 0
    assert embedded.status()["pid"] == info["pid"]


@pytest.mark.parametrize("off", ["0", "false", "FALSE", " Off ", "no"])
def test_the_workspace_status_command_starts_nothing_when_told_not_to(state, off):
    proc = workspace_status({"ROCM_PYTORCH_STAGING_AUTOSTART": off})
    assert proc.returncode == 0, proc.stderr
    assert not embedded.status()["running"]
    assert registry_processes(state) == []


def test_an_autostart_it_cannot_read_stops_the_build_in_one_line(state):
    # `FALSE` or `disable` once started the registry all the same; Bazel fails the build
    # on a workspace status command's non-zero exit and prints its stderr
    proc = workspace_status({"ROCM_PYTORCH_STAGING_AUTOSTART": "disable"})
    assert proc.returncode == 2
    assert proc.stderr == (
        "client_env: error: ROCM_PYTORCH_STAGING_AUTOSTART='disable' is neither on nor off;"
        " write 0 or 1 (or false/true, no/yes, off/on)\n"
    )
    assert proc.stdout == ""
    assert not embedded.status()["running"]
    assert registry_processes(state) == []


def test_a_staging_port_other_than_the_running_registrys_is_refused_in_one_line(state, monkeypatch):
    # Before, the build used the running registry's port and said nothing of the setting
    # (issue #42 1.5); the setting moves a stopped registry only.
    port = embedded.ensure_running()
    other = free_port()
    monkeypatch.setenv(embedded.PORT_ENV, str(other))
    want = (
        f"ROCM_PYTORCH_STAGING_PORT={other}, but the staging registry of {state.root} runs on"
        f" 127.0.0.1:{port}: stop it (`python3 -m tools.staging stop`) to move it to {other},"
        f" or unset ROCM_PYTORCH_STAGING_PORT (or set it to {port})"
    )
    with pytest.raises(StagingError) as e:
        embedded.ensure_running()
    assert str(e.value) == want
    proc = workspace_status({})  # the start of every Bazel command
    assert proc.returncode == 2 and proc.stderr == f"client_env: error: {want}\n", proc.stderr
    assert embedded.status()["port"] == port  # nothing moved
    # stopped, the setting moves it
    embedded.stop()
    assert embedded.ensure_running() == other


def test_a_registry_that_cannot_start_does_not_fail_the_build(state, tmp_path):
    # a registry that cannot start (no binary) leaves the build to start its own
    proc = workspace_status({embedded.BIN_ENV: str(tmp_path / "no-such-registry")})
    assert proc.returncode == 0
    assert not embedded.status()["running"]


def test_an_unexpected_autostart_failure_stops_the_build_in_one_line(state, tmp_path):
    # Every error of the autostart was swallowed, a bug's or a broken state dir's too;
    # only a registry that cannot start (a StagingError, above) leaves it to the build.
    not_a_dir = tmp_path / "a-file"
    not_a_dir.write_text("")
    proc = workspace_status({embedded.DIR_ENV: str(not_a_dir / "staging")})
    assert proc.returncode == 2, proc.stderr
    assert proc.stdout == ""
    assert proc.stderr.count("\n") == 1, proc.stderr
    assert proc.stderr.startswith(
        "client_env: error: the staging registry's autostart failed: NotADirectoryError:"
    ), proc.stderr
    assert f"(state dir {not_a_dir / 'staging'})" in proc.stderr
    assert proc.stderr.endswith(
        "; fix that, or set ROCM_PYTORCH_STAGING_AUTOSTART=0 and run"
        " `bazel run //tools/staging -- start`, which shows the whole error\n"
    )
