"""`python3 -m tools.stop`: one command ends the private engine, staging and the sources,
then names whatever still runs from their state dirs (exit 1)."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.engine.helpers import ROOT, cli, short_dir
from tools import stop
from tools.engine import state


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def env():
    root = short_dir("rps-")
    environ = {
        **{k: v for k, v in os.environ.items() if k not in ("DOCKER_HOST", "DOCKER_CONFIG")},
        state.DIR_ENV: str(root / "engine"),
        state.HOST_SOCKET_ENV: str(root / "no-host-engine.sock"),
        "ROCM_PYTORCH_STAGING_DIR": str(root / "staging"),
        "ROCM_PYTORCH_STAGING_PORT": str(free_port()),
        "ROCM_PYTORCH_SOURCES_DIR": str(root / "sources"),
        "ROCM_PYTORCH_TEAMCACHE_DIR": str(root / "teamcache"),
        "ROCM_PYTORCH_TEAMCACHE_PORT": str(free_port()),
        "PYTHONPATH": str(ROOT),
    }
    yield environ
    subprocess.run(  # whatever a failed test left
        [sys.executable, "-m", "tools.stop", "--keep-bazel"], env=environ, capture_output=True
    )
    shutil.rmtree(root, ignore_errors=True)


def run_stop(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "tools.stop", "--keep-bazel", *args],
        env=env,
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def roots(env: dict[str, str]) -> list:
    saved = dict(os.environ)
    os.environ.update(env)
    try:
        return stop.state_roots()
    finally:
        os.environ.clear()
        os.environ.update(saved)


def test_one_command_stops_the_engine_and_staging(env):
    assert cli("start", env=env).code == 0
    started = subprocess.run(
        [sys.executable, "-m", "tools.staging", "start"], env=env, capture_output=True, text=True
    )
    assert started.returncode == 0, started.stderr
    running = stop.leftovers(roots(env))
    names = " ".join(cmd for _, cmd in running)
    assert "dockerd" in names and "containerd" in names and "docker-registry" in names, names

    proc = run_stop(env)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "stopped the staging registry" in proc.stdout
    assert "stop: nothing of this project's runs from its state dirs" in proc.stdout
    assert stop.leftovers(roots(env)) == []


def test_it_stops_the_team_cache_too(env):
    started = subprocess.run(
        [sys.executable, "-m", "tools.teamcache", "start"], env=env, capture_output=True, text=True
    )
    assert started.returncode == 0, started.stderr
    assert "nginx" in " ".join(cmd for _, cmd in stop.leftovers(roots(env)))

    proc = run_stop(env)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "stopped the team cache" in proc.stdout
    assert stop.leftovers(roots(env)) == []


def test_what_no_tool_owns_is_named_and_fails_the_stop(env):
    stray = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import time; time.sleep(120)",
            env["ROCM_PYTORCH_STAGING_DIR"] + "/x",
        ]
    )
    try:
        proc = run_stop(env)
        assert proc.returncode == 1, proc.stdout + proc.stderr
        assert "stop: 1 processes still run from the state dirs:" in proc.stderr
        assert f"  {stray.pid} " in proc.stderr
    finally:
        stray.kill()
        stray.wait()


def test_a_state_dir_it_cannot_use_stops_nothing_and_says_so_in_one_line(env):
    started = subprocess.run(
        [sys.executable, "-m", "tools.staging", "start"], env=env, capture_output=True, text=True
    )
    assert started.returncode == 0, started.stderr
    # relative: each tool would have looked for its state somewhere else (and the old
    # stop did, stopping another dir's processes or none)
    proc = run_stop({**env, state.DIR_ENV: "engine-here"})
    assert proc.returncode == 2
    assert proc.stderr.splitlines() == [
        "stop: error: ROCM_PYTORCH_ENGINE_DIR=engine-here is not an absolute path (builds and"
        " `bazel run` each run in a directory of their own, so each would find another one);"
        " make it absolute or unset it"
    ]
    assert proc.stdout == ""
    assert "docker-registry" in " ".join(cmd for _, cmd in stop.leftovers(roots(env)))


def fake_bazel(tmp_path, seconds: int) -> str:
    """A `bazel` whose shutdown finds the server busy with another command (a Python
    sleep, which Ctrl-C ends), says so as Bazel's client does, and waits for it."""
    bin_dir = tmp_path / "fake-bazel"
    bin_dir.mkdir()
    (bin_dir / "bazel").write_text(
        f"#!{sys.executable}\n"
        "import pathlib, subprocess, sys, time\n"
        f"busy = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep({seconds})'])\n"
        # Popen returns when the child is in exec, before the kernel has written its
        # arguments: Bazel's busy command is long past that; wait until /proc has them
        "cmdline = pathlib.Path(f'/proc/{busy.pid}/cmdline')\n"
        "while b'sleep' not in cmdline.read_bytes():\n"
        "    time.sleep(0.01)\n"
        "print(f'Another command (pid={busy.pid}) is running. Waiting for it to complete on"
        " the server (server_pid=1)...', file=sys.stderr, flush=True)\n"
        "busy.wait()\n"
    )
    (bin_dir / "bazel").chmod(0o755)
    return str(bin_dir)


def test_a_running_build_is_named_while_stop_waits_for_it(env, tmp_path):
    path = fake_bazel(tmp_path, 2) + ":" + env["PATH"]
    proc = subprocess.run(
        [sys.executable, "-m", "tools.stop"],
        env={**env, "PATH": path},
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    waiting = [line for line in proc.stdout.splitlines() if "waiting for the running" in line]
    assert len(waiting) == 1 and "time.sleep(2)" in waiting[0], proc.stdout
    assert "--interrupt" in waiting[0]


def test_interrupt_ends_the_running_build_instead_of_waiting(env, tmp_path):
    path = fake_bazel(tmp_path, 600) + ":" + env["PATH"]
    proc = subprocess.run(
        [sys.executable, "-m", "tools.stop", "--interrupt"],
        env={**env, "PATH": path},
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,  # it would wait 600 s for the build
        check=False,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "stop: interrupted the running Bazel command (pid " in proc.stdout
    assert "time.sleep(600)" in proc.stdout


def test_help_stops_nothing(env):
    proc = subprocess.run(
        [sys.executable, "-m", "tools.stop", "--help"], env=env, capture_output=True, text=True
    )
    assert proc.returncode == 0
    assert "python3 -m tools.stop --keep-bazel" in proc.stdout
    proc = run_stop(env, "--nope")
    assert proc.returncode == 2 and "unrecognized arguments: --nope" in proc.stderr


def fake_bazel_server(workspace, env: dict[str, str]) -> subprocess.Popen:
    """A process with a Bazel server's --workspace_directory flag, once /proc shows it."""
    flag = f"--workspace_directory={workspace}"
    proc = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)", flag], env=env)
    cmdline = Path(f"/proc/{proc.pid}/cmdline")
    while flag.encode() not in cmdline.read_bytes():  # Popen returns before exec is done
        time.sleep(0.01)
    return proc


def test_servers_another_workspaces_bazel_uses_are_named_and_left_running(env, tmp_path):
    # (#42 1.7) stop ended the per-user servers a second clone was using right now: its
    # rehearsal then failed to fetch its sources. A "Bazel server" of another workspace
    # (its flag on the command line) with the same staging dir in its environment:
    started = subprocess.run(
        [sys.executable, "-m", "tools.staging", "start"], env=env, capture_output=True, text=True
    )
    assert started.returncode == 0, started.stderr
    other = tmp_path / "other-clone"
    other.mkdir()
    server = fake_bazel_server(other, env)
    staging_root = roots(env)[1]
    try:
        proc = run_stop(env)
        assert proc.returncode == 0, proc.stdout + proc.stderr
        assert (
            f"stop: left running: the staging registry ({staging_root}): the Bazel server of"
            f" {other} (pid {server.pid}) uses the same one; `python3 -m tools.stop --shared`"
            " stops it anyway"
        ) in proc.stdout.splitlines(), proc.stdout
        assert "docker-registry" in " ".join(cmd for _, cmd in stop.leftovers(roots(env)))
        assert "stop: nothing else of this project's runs from its state dirs" in proc.stdout

        # another staging dir in the other server's settings: not the same server
        elsewhere = fake_bazel_server(
            other, {**env, "ROCM_PYTORCH_STAGING_DIR": str(tmp_path / "its-own")}
        )
        server.kill()
        server.wait()
        server = elsewhere
        proc = run_stop(env)
        assert "left running: the staging registry" not in proc.stdout, proc.stdout
        assert "stopped the staging registry" in proc.stdout
        assert "left running: the private engine" in proc.stdout  # that one it shares
    finally:
        server.kill()
        server.wait()


def test_shared_stops_them_anyway(env, tmp_path):
    started = subprocess.run(
        [sys.executable, "-m", "tools.staging", "start"], env=env, capture_output=True, text=True
    )
    assert started.returncode == 0, started.stderr
    server = fake_bazel_server(tmp_path, env)
    try:
        proc = run_stop(env, "--shared")
        assert proc.returncode == 0, proc.stdout + proc.stderr
        assert "left running" not in proc.stdout
        assert stop.leftovers(roots(env)) == []
    finally:
        server.kill()
        server.wait()
