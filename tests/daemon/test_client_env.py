"""The client's engine, staging and mirror settings reach the Docker actions outside their keys."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tools import client_env

CLIENT = {
    "DOCKER_HOST": "unix:///home/alice/.cache/rocm-pytorch-images/engine/docker.sock",
    "DOCKER_CONFIG": "/home/alice/.cache/rocm-pytorch-images/engine/docker-config",
    "ROCM_PYTORCH_MIRRORS": "/home/alice/mirrors with a space.toml",
    "ROCM_PYTORCH_STAGING_PORT": "5123",
    "HOME": "/home/alice",  # not one of them
}


def test_status_lines_name_the_set_variables_only():
    lines = client_env.status_lines({**CLIENT, "ROCM_PYTORCH_ENGINE_DIR": ""})
    assert lines == [
        f"ROCM_PYTORCH_CLIENT_DOCKER_HOST {CLIENT['DOCKER_HOST']}",
        f"ROCM_PYTORCH_CLIENT_DOCKER_CONFIG {CLIENT['DOCKER_CONFIG']}",
        "ROCM_PYTORCH_CLIENT_ROCM_PYTORCH_STAGING_PORT 5123",
        f"ROCM_PYTORCH_CLIENT_ROCM_PYTORCH_MIRRORS {CLIENT['ROCM_PYTORCH_MIRRORS']}",
    ]
    # a value that would break the status file's one-line format is left out
    assert client_env.status_lines({"DOCKER_HOST": "a\nb"}) == []


def execroot(tmp_path: Path) -> Path:
    root = tmp_path / "execroot" / "_main"
    (root / "bazel-out").mkdir(parents=True)
    return root


def test_apply_in_an_execution_root_fills_in_what_the_action_lacks(tmp_path, monkeypatch):
    root = execroot(tmp_path)
    lines = [*client_env.status_lines(CLIENT), "BUILD_TIMESTAMP 1", "ROCM_PYTORCH_CLIENT_PATH /x"]
    (root / client_env.STATUS_FILE).write_text("\n".join(lines) + "\n")
    monkeypatch.chdir(root)
    environ = {"DOCKER_CONFIG": "/given/by/the/action"}
    added = client_env.apply(environ=environ)
    # should set what the action lacks, keep what it has, and take nothing else
    assert environ == {
        "DOCKER_HOST": CLIENT["DOCKER_HOST"],
        "DOCKER_CONFIG": "/given/by/the/action",
        "ROCM_PYTORCH_STAGING_PORT": "5123",
        "ROCM_PYTORCH_MIRRORS": CLIENT["ROCM_PYTORCH_MIRRORS"],
    }
    assert "DOCKER_CONFIG" not in added and "PATH" not in added


def test_apply_outside_an_execution_root_or_without_a_status_file_sets_nothing(
    tmp_path, monkeypatch
):
    workspace = tmp_path / "workspace"
    (workspace / "bazel-out").mkdir(parents=True)
    (workspace / client_env.STATUS_FILE).write_text("ROCM_PYTORCH_CLIENT_DOCKER_HOST unix:///x\n")
    monkeypatch.chdir(workspace)  # a workspace: bazel-out/ is the last build's
    environ: dict[str, str] = {}
    assert client_env.apply(environ=environ) == {} and environ == {}
    monkeypatch.chdir(execroot(tmp_path))  # an execution root without the file
    assert client_env.apply(environ=environ) == {} and environ == {}


def test_workspace_status_prints_them_as_volatile_keys(tmp_path):
    script = Path("tools/workspace_status.sh").resolve()
    env = {
        **{k: v for k, v in os.environ.items() if k not in client_env.NAMES},
        **CLIENT,
        "ROCM_PYTORCH_STAGING_AUTOSTART": "0",
        "PYTHONPATH": str(Path.cwd()),
    }
    proc = subprocess.run(
        ["bash", str(script)], cwd=Path.cwd(), env=env, capture_output=True, text=True, check=False
    )
    assert proc.returncode == 0, proc.stderr
    keys = [line for line in proc.stdout.splitlines() if line.startswith(client_env.PREFIX)]
    # volatile (no STABLE_ prefix): a new socket or config dir re-runs no action
    assert keys == client_env.status_lines(CLIENT)


@pytest.mark.parametrize(
    "argv, code", [(["--help"], 0), ([], 2), (["show"], 2), (["status", "--start"], 2)]
)
def test_cli_usage(argv, code):
    proc = subprocess.run(
        [sys.executable, "-m", "tools.client_env", *argv], capture_output=True, text=True
    )
    assert proc.returncode == code
    out = proc.stdout if code == 0 else proc.stderr
    assert "python3 -m tools.client_env status [--start-staging]" in out
