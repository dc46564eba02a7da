"""The private engine for real: started once by concurrent callers, reused, used, stopped.

Two dockerd starts for the whole module, in a state dir of its own (never the
user's engine, never CI's): DOCKER_HOST names a socket nobody listens on and
the host socket does not exist, so ensure() has to start a private engine:
the lasting one (the `env` command), which the tests run in file order use
and the last but one stops, then a scoped one (what a Bazel action gets),
which must end with the process that started it.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor

import pytest

from tests.engine.helpers import ROOT, cli, isolate, short_dir
from tools import engine
from tools.engine import binaries
from tools.process import daemon, registryd

CALLERS = 4


@pytest.fixture(scope="module")
def state():
    root = short_dir("rpe-real-")
    with pytest.MonkeyPatch.context() as mp:
        isolate(mp, root)
        mp.setenv("DOCKER_HOST", f"unix://{root}/nobody-listens.sock")
        yield engine.paths()
        engine.stop()
    shutil.rmtree(root, ignore_errors=True)


@pytest.fixture(scope="module")
def started(state):
    """CALLERS concurrent `env` calls on a stopped engine: their outputs."""
    assert not engine.answers(state.host)
    with ThreadPoolExecutor(CALLERS) as pool:
        results = list(pool.map(lambda _i: cli("env"), range(CALLERS)))
    return results


def exports(text: str) -> dict[str, str]:
    out = {}
    for line in text.splitlines():
        if line.startswith("export "):
            key, _, value = line.removeprefix("export ").partition("=")
            out[key] = value.strip("'")
    return out


def pid(state, name: str) -> int:
    return int((state.root / f"{name}.pid").read_text())


def test_concurrent_callers_start_one_engine_that_outlives_them(state, started):
    for r in started:
        assert r.code == 0, r.err
        assert exports(r.out)["DOCKER_HOST"] == state.host
    starts = (state.log / "starts.log").read_text().splitlines()
    assert len(starts) == 1, starts
    # the callers have exited; the engine they started still answers
    assert engine.answers(state.host)
    assert daemon.ours(pid(state, "dockerd"), state.daemon_json)
    assert daemon.ours(pid(state, "containerd"), state.containerd_toml)
    # should say what it did, once
    said = [line for r in started for line in r.err.splitlines() if "ready in" in line]
    assert len(said) == 1, [r.err for r in started]


def test_a_second_call_reuses_the_engine(state, started):
    before = (pid(state, "dockerd"), pid(state, "containerd"))
    t0 = time.monotonic()
    env = engine.ensure()
    assert time.monotonic() - t0 < 1.0
    assert env["DOCKER_HOST"] == state.host
    assert env[engine.DIR_ENV] == str(state.root)
    assert (pid(state, "dockerd"), pid(state, "containerd")) == before
    assert len((state.log / "starts.log").read_text().splitlines()) == 1


def busybox() -> str:
    found = shutil.which("busybox") or "/usr/bin/busybox"
    if os.access(found, os.X_OK):
        return found
    r = binaries.runner()  # on a host without busybox: the sid tree's
    assert r, "no busybox: run tools/bootstrap.sh"
    return str(r[1] / "usr/bin/busybox")


def test_the_engine_builds_with_buildx_and_runs_containers(state, started, tmp_path):
    env = {**os.environ, **engine.ensure()}
    ctx = tmp_path / "ctx"
    ctx.mkdir()
    shutil.copy(busybox(), ctx / "busybox")
    (ctx / "Dockerfile").write_text(
        "FROM scratch\nCOPY busybox /bin/busybox\n"
        'RUN ["/bin/busybox", "sh", "-c", "/bin/busybox echo built > /hello"]\n'
        'CMD ["/bin/busybox", "cat", "/hello"]\n'
    )
    build = subprocess.run(
        ["docker", "buildx", "build", "--network=none", "--load", "-t", "engine-test:1", str(ctx)],
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    assert build.returncode == 0, build.stderr[-3000:]
    run = subprocess.run(
        ["docker", "run", "--rm", "--network=none", "engine-test:1"],
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    assert (run.returncode, run.stdout) == (0, "built\n"), run.stderr


def test_env_lines_point_a_shell_at_the_engine(state, started):
    shell = subprocess.run(
        [
            "bash",
            "-c",
            'eval "$(python3 -m tools.engine env)" &&'
            ' docker version --format "{{.Server.Os}}" && echo "$DOCKER_HOST"',
        ],
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        check=False,
    )
    assert shell.returncode == 0, shell.stderr
    assert shell.stdout.splitlines() == ["linux", state.host]


def test_status_names_the_engine_in_use(state, started):
    result = cli("status")
    assert result.code == 0, result.err
    assert f"uses:                    {state.host}" in result.out.splitlines()


def test_the_loopback_registry_starts_on_request_and_answers(state, started):
    env = engine.ensure(registry=True)
    host = env["REGISTRY"]
    assert host.startswith("127.0.0.1:")
    assert registryd.answers(int(host.rpartition(":")[2]))
    # a second call reuses it
    assert engine.ensure(registry=True)["REGISTRY"] == host


def test_stop_ends_the_engine_and_its_registry(state, started):
    pids = [pid(state, n) for n in ("dockerd", "containerd", "registry")]
    result = cli("stop")
    assert result.code == 0, result.err
    assert "stopped registry" in result.err and "dockerd" in result.err
    assert not any(daemon.alive(p) for p in pids)
    assert not engine.answers(state.host)
    assert not state.socket.exists()
    assert cli("stop").err == "engine: nothing to stop\n"
    assert cli("status").code == 3


SCOPED_CHILD = """
import json, subprocess, sys
from tools import engine
env = engine.ensure(scope="scoped")
again = engine.ensure(scope="scoped")
server = subprocess.run(["docker", "version", "--format", "{{.Server.Os}}"],
                        env={**__import__("os").environ, **env}, capture_output=True, text=True)
print(json.dumps({"env": env, "again": again, "server": server.stdout.strip()}))
"""


def test_a_scoped_engine_serves_its_process_and_ends_with_it(state, started):
    assert not engine.answers(state.host)  # the lasting one is stopped
    child = subprocess.run(
        [sys.executable, "-c", SCOPED_CHILD],
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        check=False,
    )
    assert child.returncode == 0, child.stderr
    out = json.loads(child.stdout)
    slot = state.root / "scoped" / "0"
    assert out["env"]["DOCKER_HOST"] == f"unix://{slot}/docker.sock"
    assert out["again"] == out["env"] and out["server"] == "linux"
    assert "started one for this Bazel action or test only" in child.stderr
    # gone with its process: stopped at exit, its slot free for the next one
    dockerd = int((slot / "log" / "starts.log").read_text().split("dockerd=")[1].split()[0])
    assert not daemon.alive(dockerd)
    assert not engine.answers(out["env"]["DOCKER_HOST"])
    # the lasting engine was not started again
    assert len((state.log / "starts.log").read_text().splitlines()) == 1
