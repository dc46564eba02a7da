"""Faults of real image builds (BuildKit, a loopback registry as staging, a real worker).

A SIGKILLed ImageBuild worker leaves its rendered mirror secrets and its
build context only in its private per-user directory (0700, secrets 0600),
and the next build removes them; a staging registry that stops during a
build is named in the error's last line, with what to do; two execution
roots keep their own build logs.
"""

from __future__ import annotations

import json
import os
import signal
import stat
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

from tests.registry.fixtures import Registry
from tools.staging import embedded

DOCKERFILE = "tests/imagebuild/Dockerfile.faults"  # runfiles path (cwd = runfiles root)
PASSWORD = "s3cret-Faults-pw"
NAME = "rocm-pytorch-images"


@pytest.fixture
def env(tmp_path):
    """The environment of a build of its own: its cache dir (XDG_CACHE_HOME: the work
    dirs, builders/), TMPDIR, staging state (leases) and mirror settings with a netrc."""
    netrc = tmp_path / "mirrors.netrc"
    netrc.write_text(f"machine 127.0.0.1 login builder password {PASSWORD}\n")
    netrc.chmod(0o600)
    settings = tmp_path / "mirrors.toml"
    settings.write_text(
        f'[pip]\nindex_url = "http://127.0.0.1:9/simple"\n[auth]\nnetrc = "{netrc}"\n'
    )
    (tmp_path / "tmp").mkdir()
    return {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(sys.path),
        "XDG_CACHE_HOME": str(tmp_path / "cache"),
        "TMPDIR": str(tmp_path / "tmp"),
        "ROCM_PYTORCH_STAGING_DIR": str(tmp_path / "staging-state"),
        "ROCM_PYTORCH_MIRRORS": str(settings),
    }


@pytest.fixture
def registry(tmp_path):
    r = Registry(tmp_path / "registry")
    yield r
    r.stop()


def argv(tmp_path: Path, staging: str, name: str, sleep: int) -> list[str]:
    spec = tmp_path / f"{name}.spec.json"
    spec.write_text(
        json.dumps(
            {
                "target": "faults-probe",
                "repository": "faults-probe",
                "build_args": {"NONCE": uuid.uuid4().hex, "SLEEP": str(sleep)},
            }
        )
    )
    return [
        "--spec", str(spec),
        "--dockerfile", DOCKERFILE,
        "--network", "none",
        "--host-file", "busybox=/usr/bin/busybox",
        "--staging", staging,
        "--output", str(tmp_path / f"{name}.json"),
        "--log", str(tmp_path / f"{name}.log"),
    ]  # fmt: skip


def run(args: list[str], env: dict[str, str], cwd: str | None = None):
    return subprocess.run(
        [sys.executable, "-m", "tools.imagebuild.build", *args],
        env=env,
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


def wait_for_step(log: Path, proc: subprocess.Popen, limit: float = 180) -> None:
    """Until BuildKit runs the sleeping step (its `echo step` output is in the log)."""
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        text = log.read_text(errors="replace") if log.exists() else ""
        if any(" step " in line and "echo" not in line for line in text.splitlines()):
            return
        assert proc.poll() is None, f"the build ended early:\n{text[-3000:]}"
        time.sleep(0.2)
    raise AssertionError(f"the step never ran:\n{log.read_text(errors='replace')[-3000:]}")


def holding(root: Path, data: bytes) -> list[Path]:
    """The files under ``root`` that contain ``data``."""
    out = []
    for path in root.rglob("*"):
        if path.is_file() and not path.is_symlink():
            try:
                if data in path.read_bytes():
                    out.append(path)
            except OSError:
                pass
    return out


def test_a_sigkilled_worker_leaves_secrets_only_in_its_private_dir_and_the_next_build_removes_them(
    tmp_path, env, registry
):
    args = argv(tmp_path, f"{registry.host}/staging", "killed", sleep=120)
    worker = subprocess.Popen(
        [sys.executable, "-m", "tools.imagebuild.build", "--persistent_worker"],
        env=env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    try:
        worker.stdin.write(json.dumps({"arguments": args, "requestId": 1}) + "\n")
        worker.stdin.flush()
        wait_for_step(tmp_path / "killed.log", worker)
    finally:
        worker.kill()  # SIGKILL: no cleanup of its own runs
        worker.wait()
    cache = tmp_path / "cache" / NAME / "imagebuild"
    given = tmp_path / "mirrors.netrc"
    # should keep the password only in the dead build's private dir (and the user's file)
    found = sorted(set(holding(tmp_path, PASSWORD.encode())) - {given})
    assert [p.relative_to(tmp_path).parts[:3] for p in found] == [("cache", NAME, "imagebuild")], (
        found
    )
    dead = [p for p in cache.iterdir() if not p.name.startswith(".")]
    assert [p.name.split("-")[0] for p in dead] == [str(worker.pid)], sorted(cache.iterdir())
    assert found == [dead[0] / "secrets" / "mirror-netrc"], found
    assert stat.S_IMODE(cache.stat().st_mode) == 0o700
    assert stat.S_IMODE(dead[0].stat().st_mode) == 0o700
    assert stat.S_IMODE((dead[0] / "secrets").stat().st_mode) == 0o700
    for secret in (dead[0] / "secrets").iterdir():
        assert stat.S_IMODE(secret.stat().st_mode) == 0o600, secret
    assert (dead[0] / "context" / DOCKERFILE).is_file()
    assert list((tmp_path / "tmp").iterdir()) == []

    # the next build (one that ends well) removes what the dead one left
    proc = run(argv(tmp_path, f"{registry.host}/staging", "next", sleep=0), env)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert sorted(p.name for p in cache.iterdir()) == [".lock"]
    assert sorted(set(holding(tmp_path, PASSWORD.encode())) - {given}) == []
    assert list((tmp_path / "tmp").iterdir()) == []


def test_a_staging_registry_that_stops_mid_build_is_the_last_line_of_the_error(
    tmp_path, env, monkeypatch
):
    port = embedded.daemon.free_port()
    env = {**env, "ROCM_PYTORCH_STAGING_PORT": str(port)}
    monkeypatch.setenv("ROCM_PYTORCH_STAGING_DIR", env["ROCM_PYTORCH_STAGING_DIR"])
    args = argv(tmp_path, "embedded", "stopped", sleep=3)
    proc = subprocess.Popen(
        [sys.executable, "-m", "tools.imagebuild.build", *args],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        wait_for_step(tmp_path / "stopped.log", proc)
        pid = embedded.paths().registry.pid()
        assert pid, "the build started no embedded staging registry"
        os.kill(pid, signal.SIGKILL)  # it dies while BuildKit runs the step
        _, err = proc.communicate(timeout=300)
    finally:
        proc.kill()
    assert proc.returncode == 1, err
    lines = err.rstrip("\n").splitlines()
    log = (tmp_path / "stopped.log").absolute()
    # should end with one line: the staging registry stopped, build again; and the log
    assert lines[-1].startswith(f"the embedded staging registry (127.0.0.1:{port}, state "), err
    assert "stopped during this build" in lines[-1] and "build again" in lines[-1], err
    assert lines[-1].endswith(f"(whole log: {log})"), err
    assert "connection refused" in err  # BuildKit's tail is still there above it
    assert not any("builder" in line and "stopped answering" in line for line in lines)

    # and a rebuild restarts it, as the line says
    again = run(argv(tmp_path, "embedded", "again", sleep=0), env)
    assert again.returncode == 0, again.stderr[-3000:]
    embedded.stop()


def test_two_execution_roots_keep_their_own_logs(tmp_path, env, registry):
    # the rule's --log is relative: bazel-out/logs/<package>/<name>.log of the execroot
    log = "bazel-out/logs/tests/imagebuild/probe.log"
    first, second = tmp_path / "a" / "execroot" / "_main", tmp_path / "b" / "execroot" / "_main"
    args = argv(tmp_path, f"{registry.host}/staging", "probe", sleep=0)
    args[args.index("--log") + 1] = log
    runfiles = os.getcwd()
    for root in (first, second):
        root.mkdir(parents=True)
        (root / "tests").symlink_to(Path(runfiles, "tests"))
        proc = run(args, env, cwd=str(root))
        assert proc.returncode == 0, proc.stderr[-3000:]
    # the first ran BuildKit, the second was a staging hit: each log says its own
    assert "docker buildx build" in (first / log).read_text()
    assert "staging hit" in (second / log).read_text()
    assert "staging hit" not in (first / log).read_text()
