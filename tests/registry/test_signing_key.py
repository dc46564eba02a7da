"""A release checks its signing key before anything builds (issue #42 2.3).

`registry signing-key` opens the key as signing does (`cosign public-key`,
$COSIGN_PASSWORD); `--config=release` runs it from its workspace status command
(tools/workspace_status_release.sh), where a key that does not open stops the
Bazel command in one line, before hours of image builds.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tools.registry.sign import find_cosign

PASSWORD = "release-key-pw"


@pytest.fixture(scope="module")
def key(tmp_path_factory) -> Path:
    where = tmp_path_factory.mktemp("key")
    subprocess.run(
        [find_cosign(), "generate-key-pair", "--output-key-prefix", str(where / "k")],
        env={**os.environ, "COSIGN_PASSWORD": PASSWORD},
        capture_output=True,
        check=True,
    )
    return where / "k.key"


def environ(**set_: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("COSIGN_")}
    env["PYTHONPATH"] = os.pathsep.join(sys.path)
    env.update(set_)
    return env


def signing_key(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "tools.registry.cli", "signing-key", *args],
        env=env, capture_output=True, text=True, check=False,
    )  # fmt: skip


def test_a_key_that_opens_passes(key):
    proc = signing_key(environ(COSIGN_KEY=str(key), COSIGN_PASSWORD=PASSWORD))
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == "registry: the signing key ($COSIGN_KEY) opens\n"


def test_a_wrong_password_is_one_line_naming_the_key(key):
    proc = signing_key(environ(COSIGN_KEY=str(key), COSIGN_PASSWORD="not-it"))
    assert proc.returncode == 1
    (line,) = proc.stderr.splitlines()
    assert line.startswith(f"registry: error: cosign public-key --key {key}: ")
    assert "is $COSIGN_PASSWORD the key's password?" in line


def test_no_key_is_a_note_unless_required(tmp_path):
    proc = signing_key(environ())
    assert proc.returncode == 0
    assert "this shell has no $COSIGN_KEY" in proc.stderr and "-- --key" in proc.stderr
    proc = signing_key(environ(), "--require")
    assert proc.returncode == 1 and "export COSIGN_KEY" in proc.stderr
    proc = signing_key(environ(), "--key", str(tmp_path / "none.key"))
    assert proc.returncode == 1 and "no such file" in proc.stderr


def release_status(env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    env = {**env, "ROCM_PYTORCH_STAGING_AUTOSTART": "0"}
    return subprocess.run(
        ["bash", "tools/workspace_status_release.sh"],
        env=env, capture_output=True, text=True, check=False,
    )  # fmt: skip


def test_the_release_status_stops_the_command_on_a_key_that_does_not_open(key):
    proc = release_status(environ(COSIGN_KEY=str(key), COSIGN_PASSWORD="not-it"))
    assert proc.returncode == 2, proc.stderr  # Bazel stops before any action runs
    assert proc.stdout == ""
    (line,) = proc.stderr.splitlines()
    assert "decryption failed" in line or "public-key" in line, line


def test_the_release_status_goes_on_with_a_key_that_opens(key):
    proc = release_status(environ(COSIGN_KEY=str(key), COSIGN_PASSWORD=PASSWORD))
    assert proc.returncode == 0, proc.stderr
    assert "the signing key ($COSIGN_KEY) opens" in proc.stderr
    assert all(line.startswith("STABLE_") for line in proc.stdout.splitlines())


def test_config_release_runs_the_release_status():
    rc = Path(".bazelrc").read_text().splitlines()
    assert "build:release --workspace_status_command=tools/workspace_status_release.sh" in rc
